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
)

func TestExport(t *testing.T) {
	srv, client := startServer(t)
	c := client.Database("exp").Collection("c")
	oid, _ := bson.ObjectIDFromHex("5f1d7c3a9d1e8a0b2c3d4e5f")
	_, err := c.InsertMany(context.Background(), []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "s", Value: "plain"}, {Key: "n", Value: int64(7)}, {Key: "f", Value: 2.5},
			{Key: "d", Value: time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC)}, {Key: "o", Value: oid},
			{Key: "a", Value: bson.A{10, 20}}, {Key: "sub", Value: bson.D{{Key: "x", Value: true}}}},
		bson.D{{Key: "_id", Value: 2}, {Key: "s", Value: "has, comma \"and\" quotes"}, {Key: "f", Value: 1e21}, {Key: "z", Value: nil}},
		bson.D{{Key: "_id", Value: 3}, {Key: "s", Value: "tab\there"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	for _, tc := range []struct {
		name   string
		args   []string
		rc     int
		stderr string
		want   string
	}{
		{name: "json lines", args: []string{"--query", `{"_id": {"$lt": 3}}`},
			want: `{"_id":1,"s":"plain","n":7,"f":2.5,"d":{"$date":"2024-02-29T12:00:00Z"},"o":{"$oid":"5f1d7c3a9d1e8a0b2c3d4e5f"},"a":[10,20],"sub":{"x":true}}` + "\n" +
				`{"_id":2,"s":"has, comma \"and\" quotes","f":1E+21,"z":null}` + "\n"},
		{name: "canonical, sorted, limited", args: []string{"--jsonFormat", "canonical", "--sort", `{"_id": -1}`, "--limit", "1", "--fields", "s"},
			want: `{"_id":{"$numberInt":"3"},"s":"tab\there"}` + "\n"},
		{name: "json array with skip", args: []string{"--jsonArray", "--skip", "1", "--fields", "_id"}, want: `[{"_id":2},{"_id":3}]` + "\n"},
		{name: "pretty", args: []string{"--pretty", "--limit", "1", "--fields", "sub"}, want: "{\n  \"_id\": 1,\n  \"sub\": {\n    \"x\": true\n  }\n}\n"},
		{name: "csv", args: []string{"--type", "csv", "--fields", "_id,s,n,f,d,o,a,a.1,sub.x,z,missing"},
			want: "_id,s,n,f,d,o,a,a.1,sub.x,z,missing\n" +
				"1,plain,7,2.5,2024-02-29T12:00:00.000Z,ObjectId(5f1d7c3a9d1e8a0b2c3d4e5f),\"[10,20]\",20,true,,\n" +
				"2,\"has, comma \"\"and\"\" quotes\",,1e+21,,,,,,,\n" +
				"3,tab\there,,,,,,,,,\n"},
		{name: "csv without header", args: []string{"--type", "csv", "--fields", "_id", "--noHeaderLine", "--limit", "1"}, want: "1\n"},
		{name: "tsv", args: []string{"--type", "tsv", "--fields", "_id,n", "--query", `{"n": 7}`}, want: "_id\tn\n1\t7\n"},
		{name: "tsv refuses tabs", args: []string{"--type", "tsv", "--fields", "s"}, rc: 1, stderr: "holds a tab or line break"},
		{name: "csv needs fields", args: []string{"--type", "csv"}, rc: 1, stderr: "need --fields"},
		{name: "bad query", args: []string{"--query", `{"a": `}, rc: 1, stderr: "--query"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(out)
			args := append([]string{"export", "--uri", srv.URI, "--db", "exp", "--collection", "c", "--noProgress", "--out", out}, tc.args...)
			rc, stderr := runTool(t, "", args...)
			if rc != tc.rc || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("rc %d (want %d)\n%s", rc, tc.rc, stderr)
			}
			if tc.rc != 0 {
				return
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	// Round trip: what export writes as JSON, import reads back unchanged.
	if rc, stderr := runTool(t, "", "export", "--uri", srv.URI, "--db", "exp", "--collection", "c", "--noProgress", "--out", out, "--jsonFormat", "canonical"); rc != 0 {
		t.Fatalf("export: %s", stderr)
	}
	if rc, stderr := runTool(t, "", "import", "--uri", srv.URI, "--db", "exp", "--collection", "copy", "--noProgress", "--file", out); rc != 0 {
		t.Fatalf("import: %s", stderr)
	}
	a, b := docs(t, c), docs(t, client.Database("exp").Collection("copy"))
	ja, _ := bson.MarshalExtJSON(bson.D{{Key: "d", Value: a}}, true, false)
	jb, _ := bson.MarshalExtJSON(bson.D{{Key: "d", Value: b}}, true, false)
	if !bytes.Equal(ja, jb) || len(a) != 3 {
		t.Fatalf("round trip differs:\n%s\n%s", ja, jb)
	}
}
