package command

import (
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"
)

// TestCommandAliases: the lower-case names mongod registers beside the
// commands' names (pymongo's documented db.command("dbstats")) run the
// same commands.
func TestCommandAliases(t *testing.T) {
	env := memEnv(t)
	r := cmdRunner{t, env}
	r.must("d", dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "_id", Value: 1}}}}})
	for _, tc := range []struct {
		cmd   dbson.D
		field string
	}{
		{dbson.D{{Key: "dbstats", Value: 1}}, "collections"},
		{dbson.D{{Key: "collstats", Value: "c"}}, "count"},
		{dbson.D{{Key: "buildinfo", Value: 1}}, "version"},
		{dbson.D{{Key: "findandmodify", Value: "c"}, {Key: "query", Value: dbson.D{{Key: "_id", Value: 1}}}, {Key: "update", Value: dbson.D{{Key: "$set", Value: dbson.D{{Key: "a", Value: 1}}}}}}, "value"},
	} {
		out := r.must("d", tc.cmd)
		if _, ok := out.Lookup(tc.field); !ok {
			t.Errorf("%s: no %s in %s", tc.cmd[0].Key, tc.field, out.String())
		}
	}
}
