package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
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
