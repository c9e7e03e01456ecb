package e2e

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// logLine is one line of cairnd's log, in mongod's structured shape.
type logLine struct {
	T    map[string]string `json:"t"`
	S    string            `json:"s"`
	C    string            `json:"c"`
	ID   int               `json:"id"`
	Ctx  string            `json:"ctx"`
	Msg  string            `json:"msg"`
	Attr map[string]any    `json:"attr"`
}

// parseLog checks that every line of a log is one JSON object with
// mongod's fields, in mongod's order, and returns the lines.
func parseLog(t *testing.T, log string) []logLine {
	t.Helper()
	var lines []logLine
	for i, text := range strings.Split(strings.TrimSuffix(log, "\n"), "\n") {
		var l logLine
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil || dec.More() {
			t.Fatalf("log line %d is not one mongod-shaped JSON object (%v): %s", i+1, err, text)
		}
		if !strings.HasPrefix(text, `{"t":{"$date":"`) || !strings.Contains(text, `"},"s":"`+l.S+`",`+strings.Repeat(" ", 3-len(l.S))+`"c":"`) {
			t.Fatalf("log line %d: fields out of mongod's order: %s", i+1, text)
		}
		if _, err := time.Parse("2006-01-02T15:04:05.000-07:00", l.T["$date"]); err != nil {
			t.Fatalf("log line %d: t: %v", i+1, err)
		}
		if l.S == "" || l.C == "" || strings.TrimSpace(l.C) != l.C || l.Ctx == "" || l.Msg == "" {
			t.Fatalf("log line %d lacks s, c (unpadded), ctx or msg: %s", i+1, text)
		}
		lines = append(lines, l)
	}
	return lines
}

// slowLines returns the "Slow query" lines of the log whose command
// names the collection.
func slowLines(t *testing.T, srv *cairndtest.Server, coll string) []logLine {
	t.Helper()
	var out []logLine
	for _, l := range parseLog(t, srv.Logs()) {
		if l.Msg != "Slow query" {
			continue
		}
		cmd, _ := l.Attr["command"].(map[string]any)
		for _, k := range []string{"find", "aggregate", "insert", "getMore", "count", "collection"} {
			if cmd[k] == coll {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// TestSlowOperationLog: with --slowms 0 every command is logged as
// mongod logs slow operations (id 51803, component COMMAND) with the
// command, plan summary, keys and documents examined, documents returned
// and duration; the profile command reads and raises the threshold.
func TestSlowOperationLog(t *testing.T) {
	srv := cairndtest.Start(t, "--slowms", "0")
	client := dial(t, srv.URI, options.Client().SetAppName("slowtest"))
	c := client.Database("slow").Collection("c")
	var docs []any
	for i := range 200 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 10}, {Key: "b", Value: i}})
	}
	if _, err := c.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	find := func(filter bson.D) int {
		t.Helper()
		cur, err := c.Find(ctx(t), filter)
		if err != nil {
			t.Fatal(err)
		}
		var all []bson.M
		if err := cur.All(ctx(t), &all); err != nil {
			t.Fatal(err)
		}
		return len(all)
	}
	if n := find(bson.D{{Key: "a", Value: 3}}); n != 20 {
		t.Fatalf("indexed find returned %d", n)
	}
	if n := find(bson.D{{Key: "b", Value: bson.D{{Key: "$gte", Value: 190}}}}); n != 10 {
		t.Fatalf("collection scan returned %d", n)
	}
	if n := find(bson.D{{Key: "_id", Value: 7}}); n != 1 {
		t.Fatalf("_id find returned %d", n)
	}

	var finds []logLine
	waitFor(t, func() bool {
		finds = finds[:0]
		for _, l := range slowLines(t, srv, "c") {
			if cmd := l.Attr["command"].(map[string]any); cmd["find"] == "c" {
				finds = append(finds, l)
			}
		}
		return len(finds) >= 3
	})
	if len(finds) != 3 {
		t.Fatalf("%d slow-query lines for the finds, want 3:\n%s", len(finds), srv.Logs())
	}
	want := []struct {
		plan                 string
		keys, docs, returned float64
	}{
		{"IXSCAN { a: 1 }", 20, 20, 20},
		{"COLLSCAN", 0, 200, 10},
		{"IDHACK", 1, 1, 1},
	}
	for i, l := range finds {
		a := l.Attr
		if l.ID != 51803 || l.C != "COMMAND" || l.S != "I" || !strings.HasPrefix(l.Ctx, "conn") {
			t.Errorf("find %d: line head %+v", i, l)
		}
		if a["type"] != "command" || a["ns"] != "slow.c" || a["appName"] != "slowtest" || a["protocol"] != "op_msg" {
			t.Errorf("find %d: attr %v", i, a)
		}
		if a["planSummary"] != want[i].plan || a["keysExamined"] != want[i].keys || a["docsExamined"] != want[i].docs || a["nreturned"] != want[i].returned {
			t.Errorf("find %d: plan %v keys %v docs %v nreturned %v, want %+v", i, a["planSummary"], a["keysExamined"], a["docsExamined"], a["nreturned"], want[i])
		}
		if d, ok := a["durationMillis"].(float64); !ok || d < 0 {
			t.Errorf("find %d: durationMillis %v", i, a["durationMillis"])
		}
		if r, ok := a["reslen"].(float64); !ok || r <= 0 {
			t.Errorf("find %d: reslen %v", i, a["reslen"])
		}
	}

	// A failed command's line carries its error.
	_ = client.Database("slow").RunCommand(ctx(t), bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "$bogus", Value: 1}}}}).Err()
	var last map[string]any
	waitFor(t, func() bool {
		lines := slowLines(t, srv, "c")
		last = lines[len(lines)-1].Attr
		return last["ok"] != nil
	})
	if last["ok"] != float64(0) || last["errCode"] != float64(2) || last["errName"] != "BadValue" || last["errMsg"] == nil {
		t.Errorf("failed command's line: %v", last)
	}

	// profile reads slowms and raises it: fast commands are no longer logged.
	db := client.Database("slow")
	var st struct {
		Was        int32
		Slowms     int32
		SampleRate float64
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "profile", Value: 0}, {Key: "slowms", Value: 60000}}).Decode(&st); err != nil || st.Slowms != 0 || st.SampleRate != 1 {
		t.Fatalf("profile: %+v %v", st, err)
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "profile", Value: -1}}).Decode(&st); err != nil || st.Slowms != 60000 || st.Was != 0 {
		t.Fatalf("profile -1: %+v %v", st, err)
	}
	find(bson.D{{Key: "a", Value: 1}})
	cmdErr(t, db.RunCommand(ctx(t), bson.D{{Key: "profile", Value: 1}, {Key: "filter", Value: bson.D{{Key: "a", Value: 1}}}}).Err(), 2)
	// The log is read through a pipe: lower slowms again, which logs a
	// second "Profiler settings changed" line after the find, and wait for
	// it before looking for the find.
	if err := db.RunCommand(ctx(t), bson.D{{Key: "profile", Value: 0}, {Key: "slowms", Value: 0}}).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return strings.Count(srv.Logs(), `"msg":"Profiler settings changed"`) == 2 })
	for _, l := range slowLines(t, srv, "c") {
		if cmd := l.Attr["command"].(map[string]any); cmd["find"] == "c" {
			if f, _ := cmd["filter"].(map[string]any); f["a"] == float64(1) {
				t.Fatalf("a fast find was logged under slowms 60000: %v", l.Attr)
			}
		}
	}
}

// waitFor polls cond for up to 10 s (the server's log arrives through a
// pipe, after the reply).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			return
		}
	}
}

// TestSlowOperationThreshold: at the default slowms (100) a fast command
// leaves no line, and the config file's operationProfiling.slowOpThresholdMs
// sets the threshold.
func TestSlowOperationThreshold(t *testing.T) {
	srv := cairndtest.Start(t)
	client := dial(t, srv.URI)
	if err := client.Database("x").RunCommand(ctx(t), bson.D{{Key: "find", Value: "fast"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if n := len(slowLines(t, srv, "fast")); n != 0 {
		t.Fatalf("a fast find was logged at the default slowms")
	}
	var st struct{ Slowms int32 }
	if err := client.Database("x").RunCommand(ctx(t), bson.D{{Key: "profile", Value: -1}}).Decode(&st); err != nil || st.Slowms != 100 {
		t.Fatalf("default slowms: %+v %v", st, err)
	}
}

// writeLines returns the slow-operation lines whose ns is ns and whose
// component is c ("WRITE" for statements, "COMMAND" for commands).
func writeLines(t *testing.T, srv *cairndtest.Server, c, ns string) []logLine {
	t.Helper()
	var out []logLine
	for _, l := range parseLog(t, srv.Logs()) {
		if l.Msg == "Slow query" && l.C == c && l.Attr["ns"] == ns {
			out = append(out, l)
		}
	}
	return out
}

// TestSlowWriteLog: writes are logged as mongod logs them. An insert's
// command line has ninserted and keysInserted; each update and delete
// statement has its own WRITE line with its plan, the keys and documents
// it examined and what it matched, changed and removed from the indexes,
// while the command's line names the database's $cmd namespace;
// findAndModify's command line carries the same figures.
func TestSlowWriteLog(t *testing.T) {
	srv := cairndtest.Start(t, "--slowms", "0")
	client := dial(t, srv.URI)
	db := client.Database("sw")
	c := db.Collection("c")
	if _, err := c.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	var docs []any
	for i := range 100 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 10}, {Key: "b", Value: i}})
	}
	if _, err := c.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	// Ten documents have a = 3: the update moves their a index entries.
	if r, err := c.UpdateMany(ctx(t), bson.D{{Key: "a", Value: 3}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 30}}}}); err != nil || r.ModifiedCount != 10 {
		t.Fatalf("updateMany: %+v %v", r, err)
	}
	if r, err := c.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 500}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}, options.UpdateOne().SetUpsert(true)); err != nil || r.UpsertedCount != 1 {
		t.Fatalf("upsert: %+v %v", r, err)
	}
	if r, err := c.DeleteOne(ctx(t), bson.D{{Key: "_id", Value: 7}}); err != nil || r.DeletedCount != 1 {
		t.Fatalf("deleteOne: %+v %v", r, err)
	}
	if r, err := c.DeleteMany(ctx(t), bson.D{{Key: "b", Value: bson.D{{Key: "$gte", Value: 90}}}}); err != nil || r.DeletedCount != 10 {
		t.Fatalf("deleteMany: %+v %v", r, err)
	}
	fam := c.FindOneAndUpdate(ctx(t), bson.D{{Key: "b", Value: bson.D{{Key: "$lt", Value: 5}}}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 40}}}},
		options.FindOneAndUpdate().SetSort(bson.D{{Key: "b", Value: -1}}))
	if err := fam.Err(); err != nil {
		t.Fatal(err)
	}
	// The log arrives through a pipe: wait for the last command's line.
	waitFor(t, func() bool {
		for _, l := range writeLines(t, srv, "COMMAND", "sw.c") {
			if cmd, _ := l.Attr["command"].(map[string]any); cmd["findAndModify"] == "c" {
				return true
			}
		}
		return false
	})

	want := []struct {
		what string
		c    string // component
		ns   string
		// typ and the first command field name the line.
		typ, cmdKey string
		cmdVal      any
		figures     map[string]any // attr values the line must have
		absent      []string       // attrs it must not have
	}{
		{"insert", "COMMAND", "sw.c", "command", "insert", "c",
			map[string]any{"ninserted": 100.0, "keysInserted": 200.0}, []string{"planSummary", "nMatched", "keysDeleted"}},
		{"updateMany statement", "WRITE", "sw.c", "update", "q", map[string]any{"a": 3.0},
			map[string]any{"planSummary": "IXSCAN { a: 1 }", "keysExamined": 10.0, "docsExamined": 10.0, "nMatched": 10.0, "nModified": 10.0, "keysInserted": 10.0, "keysDeleted": 10.0},
			[]string{"nUpserted", "ndeleted", "nreturned"}},
		{"upsert statement", "WRITE", "sw.c", "update", "q", map[string]any{"_id": 500.0},
			map[string]any{"planSummary": "IDHACK", "keysExamined": 0.0, "docsExamined": 0.0, "nMatched": 0.0, "nModified": 0.0, "nUpserted": 1.0, "keysInserted": 2.0}, []string{"keysDeleted"}},
		{"deleteOne statement", "WRITE", "sw.c", "remove", "q", map[string]any{"_id": 7.0},
			map[string]any{"planSummary": "IDHACK", "keysExamined": 1.0, "docsExamined": 1.0, "ndeleted": 1.0, "keysDeleted": 2.0}, []string{"nMatched", "keysInserted"}},
		{"deleteMany statement", "WRITE", "sw.c", "remove", "q", map[string]any{"b": map[string]any{"$gte": 90.0}},
			map[string]any{"planSummary": "COLLSCAN", "keysExamined": 0.0, "docsExamined": 100.0, "ndeleted": 10.0, "keysDeleted": 20.0}, nil},
		{"update command", "COMMAND", "sw.$cmd", "command", "update", "c", nil, []string{"nMatched", "planSummary"}},
		{"delete command", "COMMAND", "sw.$cmd", "command", "delete", "c", nil, []string{"ndeleted", "planSummary"}},
		{"findAndModify", "COMMAND", "sw.c", "command", "findAndModify", "c",
			map[string]any{"planSummary": "COLLSCAN", "keysExamined": 0.0, "docsExamined": 90.0, "hasSortStage": true, "nMatched": 1.0, "nModified": 1.0, "keysInserted": 1.0, "keysDeleted": 1.0},
			[]string{"nreturned", "ndeleted"}},
	}
	for _, w := range want {
		var found *logLine
		for _, l := range writeLines(t, srv, w.c, w.ns) {
			cmd, _ := l.Attr["command"].(map[string]any)
			if l.Attr["type"] == w.typ && reflect.DeepEqual(cmd[w.cmdKey], w.cmdVal) {
				found = &l
				break
			}
		}
		if found == nil {
			t.Errorf("%s: no %q line with ns %s and %s: %v:\n%s", w.what, w.c, w.ns, w.cmdKey, w.cmdVal, srv.Logs())
			continue
		}
		if found.ID != 51803 {
			t.Errorf("%s: id %d", w.what, found.ID)
		}
		for k, v := range w.figures {
			if got := found.Attr[k]; got != v {
				t.Errorf("%s: %s = %v, want %v (line %v)", w.what, k, got, v, found.Attr)
			}
		}
		for _, k := range w.absent {
			if v, ok := found.Attr[k]; ok {
				t.Errorf("%s: unexpected %s = %v", w.what, k, v)
			}
		}
		if _, ok := found.Attr["durationMillis"].(float64); !ok {
			t.Errorf("%s: no durationMillis: %v", w.what, found.Attr)
		}
	}
}
