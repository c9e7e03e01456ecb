package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	cbson "github.com/cairndb/cairn/bson"
)

func TestStats(t *testing.T) {
	srv, client := startServer(t)
	var out, errOut bytes.Buffer
	if rc := run([]string{"stats", "--uri", srv.URI, "-n", "2", "0.05"}, nil, &out, &errOut); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(strings.Fields(lines[0])[0], "insert") || len(strings.Fields(lines[2])) != len(statColumns) {
		t.Fatalf("stats output:\n%s", out.String())
	}
	// --json prints one object per line with every column filled.
	if _, err := client.Database("s").Collection("c").InsertOne(context.Background(), bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if rc := run([]string{"stats", "--uri", srv.URI, "-n", "1", "--json"}, nil, &out, &errOut); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errOut.String())
	}
	var row map[string]string
	if err := json.Unmarshal(out.Bytes(), &row); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if row["conn"] == "" || row["conn"] == "-" || row["res"] == "-" || row["commits"] == "-" || row["insert"] == "-" {
		t.Fatalf("stats row: %v", row)
	}
}

// TestStatsReplColumns: repl shows the member's state, lag the largest
// lag in seconds and lagops in entries that serverStatus' repl.raft
// reports; "-" where they are not reported.
func TestStatsReplColumns(t *testing.T) {
	doc := func(d bson.D) cbson.Doc {
		b, err := bson.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return cbson.Doc(b)
	}
	members := bson.A{
		bson.D{{Key: "host", Value: "a:1"}, {Key: "self", Value: true}, {Key: "lagEntries", Value: int64(0)}, {Key: "lagSecs", Value: int64(0)}},
		bson.D{{Key: "host", Value: "b:1"}, {Key: "lagEntries", Value: int64(42)}, {Key: "lagSecs", Value: int64(3)}},
		bson.D{{Key: "host", Value: "c:1"}, {Key: "lagEntries", Value: int64(7)}},
	}
	cases := []struct {
		name           string
		status         bson.D
		repl, lag, ops string
	}{
		{"standalone", bson.D{{Key: "ok", Value: 1}}, "-", "-", "-"},
		{"one-member set", bson.D{{Key: "repl", Value: bson.D{{Key: "isWritablePrimary", Value: true}, {Key: "secondary", Value: false}}}}, "PRI", "-", "-"},
		{"primary of three", bson.D{{Key: "repl", Value: bson.D{{Key: "isWritablePrimary", Value: true},
			{Key: "raft", Value: bson.D{{Key: "members", Value: members}}}}}}, "PRI", "3s", "42"},
		{"secondary", bson.D{{Key: "repl", Value: bson.D{{Key: "isWritablePrimary", Value: false}, {Key: "secondary", Value: true},
			{Key: "raft", Value: bson.D{{Key: "members", Value: bson.A{bson.D{{Key: "host", Value: "b:1"}, {Key: "self", Value: true}, {Key: "lagEntries", Value: int64(5)}}}}}}}}}, "SEC", "-", "5"},
		{"neither", bson.D{{Key: "repl", Value: bson.D{{Key: "isWritablePrimary", Value: false}, {Key: "secondary", Value: false}}}}, "OTHER", "-", "-"},
	}
	col := func(name string) func(cur, prev cbson.Doc, secs float64) string {
		for _, c := range statColumns {
			if c.name == name {
				return c.val
			}
		}
		t.Fatalf("no column %s", name)
		return nil
	}
	for _, tc := range cases {
		d := doc(tc.status)
		for name, want := range map[string]string{"repl": tc.repl, "lag": tc.lag, "lagops": tc.ops} {
			if got := col(name)(d, nil, 1); got != want {
				t.Errorf("%s: %s = %q, want %q", tc.name, name, got, want)
			}
		}
	}
}
