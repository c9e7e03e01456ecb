package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// startServer starts a cairnd and a client for the tool tests.
func startServer(t *testing.T) (*cairndtest.Server, *mongo.Client) {
	t.Helper()
	srv := cairndtest.Start(t)
	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI).SetTimeout(30 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Disconnect(context.Background()) })
	return srv, client
}

// runTool runs a cairn subcommand with stdin and returns its exit code and
// standard error.
func runTool(t *testing.T, stdin string, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	rc := run(args, strings.NewReader(stdin), &out, &errOut)
	return rc, errOut.String()
}

// docs returns the collection's documents without _id, sorted by "k".
func docs(t *testing.T, c *mongo.Collection) []bson.D {
	t.Helper()
	ctx := context.Background()
	cur, err := c.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "k", Value: 1}}).SetProjection(bson.D{{Key: "_id", Value: 0}}))
	if err != nil {
		t.Fatal(err)
	}
	var all []bson.D
	if err := cur.All(ctx, &all); err != nil {
		t.Fatal(err)
	}
	return all
}

func TestImport(t *testing.T) {
	srv, client := startServer(t)
	db := client.Database("imp")
	dir := t.TempDir()
	fieldFile := filepath.Join(dir, "fields.txt")
	if err := os.WriteFile(fieldFile, []byte("k.int32()\nname.string()\nwhen.date(2006-01-02)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonFile := filepath.Join(dir, "people.json")
	if err := os.WriteFile(jsonFile, []byte(`{"k": 1, "n": {"$numberLong": "5"}}`+"\n"+`{"k": 2, "d": {"$date": "2020-01-01T00:00:00Z"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		stdin  string
		args   []string
		coll   string
		rc     int
		stderr string // a fragment of the tool's standard error
		want   string // the documents, as Extended JSON without _id
	}{
		{name: "tsv header line", coll: "tsv", stdin: "k\tname\tv\n1\tann\t2.5\n2\tbob\t\n",
			args: []string{"--type", "tsv", "--headerline"}, stderr: "2 document(s) imported successfully. 0 document(s) failed",
			want: `[{"k":1,"name":"ann","v":2.5},{"k":2,"name":"bob","v":""}]`},
		{name: "tsv field file with types", coll: "typed", stdin: "1\t007\t2024-02-29\n",
			args: []string{"--type", "tsv", "--columnsHaveTypes", "--fieldFile", fieldFile},
			want: `[{"k":1,"name":"007","when":{"$date":"2024-02-29T00:00:00Z"}}]`},
		{name: "csv quoted fields", coll: "csv", stdin: "1,\"a, \"\"quoted\"\"\nline\",\n",
			args: []string{"--type", "csv", "--fields", "k,s,e", "--ignoreBlanks"},
			want: `[{"k":1,"s":"a, \"quoted\"\nline"}]`},
		{name: "json lines from a file", args: []string{jsonFile}, coll: "people",
			want: `[{"k":1,"n":{"$numberLong":"5"}},{"k":2,"d":{"$date":"2020-01-01T00:00:00Z"}}]`},
		{name: "json array", coll: "arr", stdin: `[{"k": 2}, {"k": 1, "a": [1, {"b": null}]}]`, args: []string{"--jsonArray", "--numInsertionWorkers", "3", "--batchSize", "1"},
			want: `[{"k":1,"a":[1,{"b":null}]},{"k":2}]`},
		{name: "duplicates are counted and skipped", coll: "dup", stdin: `{"_id": 1, "k": 1}` + "\n" + `{"_id": 1, "k": 2}` + "\n" + `{"_id": 2, "k": 3}`,
			stderr: "2 document(s) imported successfully. 1 document(s) failed", want: `[{"k":1},{"k":3}]`},
		{name: "stopOnError stops", coll: "stop", stdin: `{"_id": 1, "k": 1}` + "\n" + `{"_id": 1, "k": 2}` + "\n" + `{"_id": 2, "k": 3}`,
			args: []string{"--stopOnError"}, rc: 1, stderr: "E11000", want: `[{"k":1}]`},
		{name: "bad json", coll: "bad", stdin: `{"k": 1} {"k": `, rc: 1, stderr: "reading JSON document #2"},
		{name: "typed parse failure stops", coll: "badtsv", stdin: "x\n", args: []string{"--type", "tsv", "--fields", "k.int32()", "--columnsHaveTypes"},
			rc: 1, stderr: `row 1: field k: cannot parse "x" as int32`},
		{name: "csv needs fields", coll: "nofields", stdin: "1\n", args: []string{"--type", "csv"}, rc: 1, stderr: "exactly one of --fields"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"import", "--uri", srv.URI, "--db", "imp", "--noProgress"}, tc.args...)
			if tc.coll != "people" {
				args = append(args, "--collection", tc.coll)
			}
			rc, stderr := runTool(t, tc.stdin, args...)
			if rc != tc.rc || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("rc %d (want %d), stderr:\n%s\nwant it to contain %q", rc, tc.rc, stderr, tc.stderr)
			}
			if tc.want == "" {
				return
			}
			sameDocs(t, docs(t, db.Collection(tc.coll)), tc.want)
		})
	}
}

func TestImportModes(t *testing.T) {
	srv, client := startServer(t)
	c := client.Database("imp").Collection("modes")
	imp := func(stdin string, args ...string) {
		t.Helper()
		all := append([]string{"import", "--uri", srv.URI, "--db", "imp", "--collection", "modes", "--noProgress"}, args...)
		if rc, stderr := runTool(t, stdin, all...); rc != 0 {
			t.Fatalf("import %v: rc %d\n%s", args, rc, stderr)
		}
	}
	imp(`{"_id": 1, "k": 1, "a": "x", "b": "y"}` + "\n" + `{"_id": 2, "k": 2, "a": "x"}`)
	imp(`{"_id": 1, "k": 1, "a": "replaced"}`+"\n"+`{"_id": 3, "k": 3}`, "--mode", "upsert")
	imp(`{"k": 2, "b": "merged"}`, "--mode", "merge", "--upsertFields", "k")
	imp(`{"k": 3}`, "--mode", "delete", "--upsertFields", "k")
	sameDocs(t, docs(t, c), `[{"k":1,"a":"replaced"},{"k":2,"a":"x","b":"merged"}]`)
	// --drop empties the collection first.
	imp(`{"k": 9}`, "--drop")
	if n, err := c.CountDocuments(context.Background(), bson.D{}); err != nil || n != 1 {
		t.Fatalf("after --drop: %d documents, %v", n, err)
	}
}

// sameDocs compares documents with a relaxed Extended JSON array, types
// included (both sides are compared in canonical form).
func sameDocs(t *testing.T, got []bson.D, want string) {
	t.Helper()
	var w struct{ D []bson.D }
	if err := bson.UnmarshalExtJSON([]byte(`{"d":`+want+`}`), false, &w); err != nil {
		t.Fatal(err)
	}
	g, err := bson.MarshalExtJSON(bson.D{{Key: "d", Value: got}}, true, false)
	if err != nil {
		t.Fatal(err)
	}
	wb, err := bson.MarshalExtJSON(bson.D{{Key: "d", Value: w.D}}, true, false)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(g, wb) {
		t.Fatalf("got  %s\nwant %s", g, wb)
	}
}
