package command

import (
	"strings"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"
)

// TestAPIParameters: the Stable API's fields, checked as mongod 7.0 checks
// them (codes and messages).
func TestAPIParameters(t *testing.T) {
	_, run := fpEnv(t, true)
	strict := dbson.D{{Key: "apiVersion", Value: "1"}, {Key: "apiStrict", Value: true}}
	with := func(cmd dbson.D, extra dbson.D) dbson.D { return append(append(dbson.D{}, cmd...), extra...) }
	agg := func(stages ...dbson.D) dbson.D {
		a := dbson.A{}
		for _, s := range stages {
			a = append(a, s)
		}
		return dbson.D{{Key: "aggregate", Value: 1}, {Key: "pipeline", Value: a}, {Key: "cursor", Value: dbson.D{}}}
	}
	tests := []struct {
		name string
		cmd  dbson.D
		code int64
		msg  string
	}{
		{"V1 command, strict", with(dbson.D{{Key: "ping", Value: 1}}, strict), 0, ""},
		{"not in V1, not strict", with(dbson.D{{Key: "distinct", Value: "c"}, {Key: "key", Value: "a"}}, dbson.D{{Key: "apiVersion", Value: "1"}}), 0, ""},
		{"not in V1, strict", with(dbson.D{{Key: "distinct", Value: "c"}, {Key: "key", Value: "a"}}, strict), 323, "Provided apiStrict:true, but the command distinct is not in API Version 1"},
		{"isMaster is not in V1", with(dbson.D{{Key: "isMaster", Value: 1}}, strict), 323, "the command isMaster is not"},
		{"test command in V2 only", with(dbson.D{{Key: "testVersion2", Value: 1}}, strict), 323, "command testVersion2 is not in API Version 1"},
		{"test command in V1 and V2", with(dbson.D{{Key: "testVersions1And2", Value: 1}}, strict), 0, ""},
		{"deprecated in V1", with(dbson.D{{Key: "testDeprecation", Value: 1}}, dbson.D{{Key: "apiVersion", Value: "1"}, {Key: "apiDeprecationErrors", Value: true}}), 324,
			"Provided apiDeprecationErrors:true, but the command testDeprecation is deprecated in API Version 1"},
		{"deprecated in V2 only", with(dbson.D{{Key: "testDeprecationInVersion2", Value: 1}}, dbson.D{{Key: "apiVersion", Value: "1"}, {Key: "apiDeprecationErrors", Value: true}}), 0, ""},
		{"version 2", with(dbson.D{{Key: "ping", Value: 1}}, dbson.D{{Key: "apiVersion", Value: "2"}}), 322, `API version must be "1"`},
		{"strict without version", with(dbson.D{{Key: "ping", Value: 1}}, dbson.D{{Key: "apiStrict", Value: true}}), 4886600, "without passing apiVersion"},
		{"version not a string", with(dbson.D{{Key: "ping", Value: 1}}, dbson.D{{Key: "apiVersion", Value: 1}}), 14, "'apiVersion' is the wrong type"},
		{"strict not a bool", with(dbson.D{{Key: "ping", Value: 1}}, dbson.D{{Key: "apiVersion", Value: "1"}, {Key: "apiStrict", Value: 1}}), 14, "'apiStrict' is the wrong type"},
		{"stage not in V1", with(agg(dbson.D{{Key: "$listLocalSessions", Value: dbson.D{}}}), strict), 323, "$listLocalSessions is not allowed with 'apiStrict: true' in API Version 1"},
		{"stage in a $facet", with(dbson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: dbson.A{dbson.D{{Key: "$facet", Value: dbson.D{{Key: "f", Value: dbson.A{dbson.D{{Key: "$indexStats", Value: dbson.D{}}}}}}}}}}, {Key: "cursor", Value: dbson.D{}}}, strict),
			323, "$indexStats is not allowed"},
		{"stage not in V1, not strict", with(agg(dbson.D{{Key: "$listLocalSessions", Value: dbson.D{}}}), dbson.D{{Key: "apiVersion", Value: "1"}}), 0, ""},
	}
	for _, tt := range tests {
		r := run("admin", tt.cmd)
		msg, _ := r.Lookup("errmsg")
		if replyCode(r) != tt.code || tt.code != 0 && !strings.Contains(msg.StringValue(), tt.msg) {
			t.Errorf("%s: %s, want %d %q", tt.name, r.String(), tt.code, tt.msg)
		}
	}
}
