package command

import (
	"strings"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"
)

// TestSearchIndexCommands: the search index commands and $listSearchIndexes
// answer as mongod 7.0 without Atlas's search index manager, after mongod's
// checks of the request.
func TestSearchIndexCommands(t *testing.T) {
	_, run := fpEnv(t, false)
	def := dbson.D{{Key: "mappings", Value: dbson.D{{Key: "dynamic", Value: true}}}}
	tests := []struct {
		name string
		cmd  dbson.D
		code int64
		msg  string
	}{
		{"create", dbson.D{{Key: "createSearchIndexes", Value: "c"}, {Key: "indexes", Value: dbson.A{dbson.D{{Key: "definition", Value: def}, {Key: "name", Value: "i"}, {Key: "type", Value: "search"}}}}},
			115, "Search index commands are only supported with Atlas."},
		{"update", dbson.D{{Key: "updateSearchIndex", Value: "c"}, {Key: "name", Value: "i"}, {Key: "definition", Value: def}}, 115, "Atlas"},
		{"drop by id", dbson.D{{Key: "dropSearchIndex", Value: "c"}, {Key: "id", Value: "x"}}, 115, "Atlas"},
		{"list", dbson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: dbson.A{dbson.D{{Key: "$listSearchIndexes", Value: dbson.D{}}}}}, {Key: "cursor", Value: dbson.D{}}},
			6047401, "$listSearchIndexes stage is only allowed on MongoDB Atlas"},
		{"create without indexes", dbson.D{{Key: "createSearchIndexes", Value: "c"}}, 40414, "'createSearchIndexes.indexes' is missing"},
		{"index without definition", dbson.D{{Key: "createSearchIndexes", Value: "c"}, {Key: "indexes", Value: dbson.A{dbson.D{{Key: "name", Value: "i"}}}}}, 40414, "definition' is missing"},
		{"index name not a string", dbson.D{{Key: "createSearchIndexes", Value: "c"}, {Key: "indexes", Value: dbson.A{dbson.D{{Key: "definition", Value: def}, {Key: "name", Value: 1}}}}}, 14, "expected type 'string'"},
		{"unknown field", dbson.D{{Key: "dropSearchIndex", Value: "c"}, {Key: "nme", Value: "i"}}, 40415, "unknown field"},
		{"update without definition", dbson.D{{Key: "updateSearchIndex", Value: "c"}, {Key: "name", Value: "i"}}, 40414, "missing"},
		{"collection not a string", dbson.D{{Key: "dropSearchIndex", Value: 1}}, 73, "invalid type"},
	}
	for _, tt := range tests {
		r := run("d", tt.cmd)
		msg, _ := r.Lookup("errmsg")
		if replyCode(r) != tt.code || !strings.Contains(msg.StringValue(), tt.msg) {
			t.Errorf("%s: %s, want %d %q", tt.name, r.String(), tt.code, tt.msg)
		}
	}
}
