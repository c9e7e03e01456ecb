package server

import (
	"strconv"
	"strings"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/internal/wire"
)

// hugeKeys is how many index entries the documents of
// TestHugeDocumentIndexes produce.
const hugeKeys = 100_000

// TestHugeDocumentIndexes inserts and deletes one document producing
// 100,000 entries in one index (text terms of one string or of an array
// of strings, a multikey array, wildcard paths), and checks with validate
// that the index holds exactly the document's entries, then none. Text
// scoring once searched its terms linearly, which made such a document
// take minutes (fts.TestScoreLinear asserts the lookups' count).
func TestHugeDocumentIndexes(t *testing.T) {
	wordList := strings.Fields(distinctWords(hugeKeys))
	strs := make(dbson.A, hugeKeys)
	ints := make(dbson.A, hugeKeys)
	var fields dbson.D
	for i := range strs {
		strs[i] = wordList[i]
		ints[i] = int32(i)
		fields = append(fields, dbson.E{Key: "f" + strconv.Itoa(i), Value: int32(i)})
	}
	cases := []struct {
		name  string
		key   dbson.D
		field string
		value any
		// text is a word to $text-search for (text indexes only).
		text string
	}{
		{"text, one string", dbson.D{{Key: "t", Value: "text"}}, "t", distinctWords(hugeKeys), wordList[777]},
		{"text, array of strings", dbson.D{{Key: "t", Value: "text"}}, "t", strs, wordList[hugeKeys-1]},
		{"multikey array", dbson.D{{Key: "a", Value: 1}}, "a", ints, ""},
		{"wildcard, array", dbson.D{{Key: "$**", Value: 1}}, "a", ints, ""},
		{"wildcard, fields", dbson.D{{Key: "$**", Value: 1}}, "d", fields, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServer(t)
			textCmd(t, s, dbson.D{{Key: "createIndexes", Value: "h"}, {Key: "indexes", Value: dbson.A{
				dbson.D{{Key: "key", Value: tc.key}, {Key: "name", Value: "x"}}}}, {Key: "$db", Value: "t"}})
			textCmd(t, s, dbson.D{{Key: "insert", Value: "h"}, {Key: "documents", Value: dbson.A{
				dbson.D{{Key: "_id", Value: 1}, {Key: tc.field, Value: tc.value}}}}, {Key: "$db", Value: "t"}})
			checkIndexKeys(t, s, hugeKeys)
			if tc.text != "" {
				r := textCmd(t, s, dbson.D{{Key: "count", Value: "h"}, {Key: "query", Value: dbson.D{{Key: "$text", Value: dbson.D{{Key: "$search", Value: tc.text}}}}}, {Key: "$db", Value: "t"}})
				if n, _ := r.Lookup("n").AsInt64OK(); n != 1 {
					t.Errorf("$text count of %q: %v", tc.text, r)
				}
			}
			r := textCmd(t, s, dbson.D{{Key: "delete", Value: "h"}, {Key: "deletes", Value: dbson.A{
				dbson.D{{Key: "q", Value: dbson.D{{Key: "_id", Value: 1}}}, {Key: "limit", Value: 1}}}}, {Key: "$db", Value: "t"}})
			if n, _ := r.Lookup("n").AsInt64OK(); n != 1 {
				t.Fatalf("delete: %v", r)
			}
			checkIndexKeys(t, s, 0)
		})
	}
}

// checkIndexKeys runs validate on t.h and checks that it is valid and
// that index x holds want entries.
func checkIndexKeys(t *testing.T, s *Server, want int64) {
	t.Helper()
	r := textCmd(t, s, dbson.D{{Key: "validate", Value: "h"}, {Key: "full", Value: true}, {Key: "$db", Value: "t"}})
	if valid, _ := r.Lookup("valid").BooleanOK(); !valid {
		t.Fatalf("validate: %v", r)
	}
	if n, _ := r.Lookup("keysPerIndex", "x").AsInt64OK(); n != want {
		t.Fatalf("index x has %d entries, want %d: %v", n, want, r)
	}
}

// TestHugeDocumentMaxTime inserts a document of a million distinct words
// (seconds of text scoring) with maxTimeMS 1: key generation notices the
// deadline, the insert fails with MaxTimeMSExpired (50) and nothing is
// written. killOp ends the same context (index.TestPrepareInterrupted).
func TestHugeDocumentMaxTime(t *testing.T) {
	s := newTestServer(t)
	textCmd(t, s, dbson.D{{Key: "createIndexes", Value: "h"}, {Key: "indexes", Value: dbson.A{
		dbson.D{{Key: "key", Value: dbson.D{{Key: "t", Value: "text"}}}, {Key: "name", Value: "x"}}}}, {Key: "$db", Value: "t"}})
	body := dbson.D{{Key: "insert", Value: "h"}, {Key: "documents", Value: dbson.A{
		dbson.D{{Key: "_id", Value: 1}, {Key: "t", Value: distinctWords(1_000_000)}}}}, {Key: "maxTimeMS", Value: 1}, {Key: "$db", Value: "t"}}
	c := pipeConn(s)
	defer c.Close()
	raw, err := dbson.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(wire.AppendMsg(nil, 1, 0, 0, raw)); err != nil {
		t.Fatal(err)
	}
	m, err := wire.NewReader(c, 0).ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	r := dbson.Raw(m.Msg.Body)
	// An interrupted write fails the whole command, as in mongod.
	code, _ := r.Lookup("code").AsInt64OK()
	if n, _ := r.Lookup("n").AsInt64OK(); n != 0 || code != 50 {
		t.Fatalf("insert with maxTimeMS 1: %v", r)
	}
	checkIndexKeys(t, s, 0)
	cnt := textCmd(t, s, dbson.D{{Key: "count", Value: "h"}, {Key: "$db", Value: "t"}})
	if n, _ := cnt.Lookup("n").AsInt64OK(); n != 0 {
		t.Fatalf("count: %v", cnt)
	}
}
