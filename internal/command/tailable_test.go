package command

import (
	"context"
	"fmt"
	"strings"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/kv"
)

func TestTailableErrors(t *testing.T) {
	r := cmdRunner{t, memEnv(t)}
	r.must("t", dbson.D{{Key: "insert", Value: "plain"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "a", Value: 1}}}}})
	r.must("t", dbson.D{{Key: "create", Value: "c"}, {Key: "capped", Value: true}, {Key: "size", Value: 4096}})
	r.must("t", dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "a", Value: 1}}}}})
	cases := []struct {
		name string
		cmd  dbson.D
		code int32
	}{
		{"not capped", dbson.D{{Key: "find", Value: "plain"}, {Key: "tailable", Value: true}}, 2},
		{"awaitData alone", dbson.D{{Key: "find", Value: "c"}, {Key: "awaitData", Value: true}}, 9},
		{"sort", dbson.D{{Key: "find", Value: "c"}, {Key: "tailable", Value: true}, {Key: "sort", Value: dbson.D{{Key: "a", Value: 1}}}}, 2},
		{"reverse", dbson.D{{Key: "find", Value: "c"}, {Key: "tailable", Value: true}, {Key: "sort", Value: dbson.D{{Key: "$natural", Value: -1}}}}, 2},
		{"singleBatch", dbson.D{{Key: "find", Value: "c"}, {Key: "tailable", Value: true}, {Key: "singleBatch", Value: true}}, 2},
		{"natural sort", dbson.D{{Key: "find", Value: "c"}, {Key: "tailable", Value: true}, {Key: "sort", Value: dbson.D{{Key: "$natural", Value: 1}}}}, 0},
		{"oplogReplay", dbson.D{{Key: "find", Value: "c"}, {Key: "tailable", Value: true}, {Key: "oplogReplay", Value: true}}, 0},
		{"missing collection", dbson.D{{Key: "find", Value: "none"}, {Key: "tailable", Value: true}}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if out := r.run("t", tc.cmd); errCode(out) != tc.code {
				t.Fatalf("code %d, want %d: %s", errCode(out), tc.code, out.String())
			}
		})
	}
	// A non-awaitData cursor's getMore takes maxTimeMS as its time limit
	// (mongod refuses it) and does not wait.
	_, id := batch(t, r.must("t", dbson.D{{Key: "find", Value: "c"}, {Key: "tailable", Value: true}}))
	if id == 0 {
		t.Fatal("tailable cursor closed")
	}
	if out := r.run("t", dbson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "c"}, {Key: "maxTimeMS", Value: 600000}}); !ok(out) {
		t.Fatalf("maxTimeMS on a non-awaitData getMore: %s", out.String())
	}
	// On an empty capped collection no cursor is kept (mongod's SERVER-13955).
	r.must("t", dbson.D{{Key: "create", Value: "empty"}, {Key: "capped", Value: true}, {Key: "size", Value: 4096}})
	if _, id := batch(t, r.must("t", dbson.D{{Key: "find", Value: "empty"}, {Key: "tailable", Value: true}})); id != 0 {
		t.Fatal("a tailable cursor on an empty collection was kept")
	}
}

// TestTailableSeesNewDocuments: a tailable cursor returns what was
// inserted after it was opened, stays open when there is nothing new, and
// dies with CappedPositionLost once its position has been capped away.
func TestTailableSeesNewDocuments(t *testing.T) {
	r := cmdRunner{t, memEnv(t)}
	r.must("t", dbson.D{{Key: "create", Value: "c"}, {Key: "capped", Value: true}, {Key: "size", Value: 1 << 20}, {Key: "max", Value: 5}})
	insert := func(seqs ...int) {
		t.Helper()
		var docs dbson.A
		for _, s := range seqs {
			docs = append(docs, dbson.D{{Key: "seq", Value: s}})
		}
		r.must("t", dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: docs}})
	}
	getMore := func(id int64) bson.Doc {
		return r.run("t", dbson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "c"}})
	}
	insert(1, 2)
	docs, id := batch(t, r.must("t", dbson.D{{Key: "find", Value: "c"}, {Key: "tailable", Value: true}, {Key: "filter", Value: dbson.D{{Key: "seq", Value: dbson.D{{Key: "$ne", Value: 4}}}}}}))
	if len(docs) != 2 || id == 0 {
		t.Fatalf("first batch %d documents, id %d", len(docs), id)
	}
	out := getMore(id)
	if docs, nid := batch(t, out); len(docs) != 0 || nid != id {
		t.Fatalf("empty getMore: %s", out.String())
	}
	insert(3, 4, 5)
	docs, nid := batch(t, getMore(id))
	if got := fields(docs, "seq"); len(got) != 2 || got[0] != 3 || got[1] != 5 || nid != id {
		t.Fatalf("getMore after inserts: %v (id %d)", got, nid)
	}
	// Six more push the cursor's last record (seq 5) out.
	insert(6, 7, 8, 9, 10, 11)
	if out := getMore(id); errCode(out) != 136 {
		t.Fatalf("want CappedPositionLost: %s", out.String())
	}
	if out := getMore(id); errCode(out) != 43 {
		t.Fatalf("the lost cursor is not dead: %s", out.String())
	}
}

// TestAwaitDataWakesOnInsert: an awaitData getMore waiting for data
// returns the document inserted during its wait, in that getMore, woken
// by the insert's commit; killCursors and the command's end wake it too.
func TestAwaitDataWakesOnInsert(t *testing.T) {
	env := memEnv(t)
	r := cmdRunner{t, env}
	r.must("t", dbson.D{{Key: "create", Value: "c"}, {Key: "capped", Value: true}, {Key: "size", Value: 1 << 20}})
	r.must("t", dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "seq", Value: 0}}}}})
	r.must("t", dbson.D{{Key: "insert", Value: "other"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "seq", Value: 0}}}}})
	open := func() int64 {
		_, id := batch(t, r.must("t", dbson.D{{Key: "find", Value: "c"}, {Key: "tailable", Value: true}, {Key: "awaitData", Value: true}}))
		if id == 0 {
			t.Fatal("no cursor")
		}
		return id
	}
	waiting := make(chan *exec.Cursor, 1)
	env.Cursors.AwaitHook = func(cur *exec.Cursor) { waiting <- cur } // this server's, not a global

	// An insert during the wait (after a write elsewhere, which must not
	// end it) is returned by that getMore.
	id := open()
	done := make(chan bson.Doc, 1)
	go func() {
		done <- r.run("t", dbson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "c"}, {Key: "maxTimeMS", Value: 600000}})
	}()
	<-waiting
	before := env.Stats.AwaitWakeups.Load()
	r.must("t", dbson.D{{Key: "insert", Value: "other"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "seq", Value: 1}}}}})
	r.must("t", dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "seq", Value: 42}}}}})
	out := <-done
	docs, nid := batch(t, out)
	if got := fields(docs, "seq"); len(got) != 1 || got[0] != 42 || nid != id {
		t.Fatalf("getMore: %s", out.String())
	}
	if n := env.Stats.AwaitWakeups.Load() - before; n != 1 {
		t.Fatalf("%d wakeups, want 1 (the insert into c)", n)
	}

	// killCursors ends the wait.
	go func() {
		done <- r.run("t", dbson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "c"}, {Key: "maxTimeMS", Value: 600000}})
	}()
	<-waiting
	r.must("t", dbson.D{{Key: "killCursors", Value: "c"}, {Key: "cursors", Value: dbson.A{id}}})
	if out := <-done; errCode(out) != 237 {
		t.Fatalf("getMore of a killed cursor: %s", out.String())
	}

	// The command's context (killOp, disconnect, shutdown) ends it.
	id = open()
	cx, cancel := context.WithCancel(context.Background())
	go func() {
		done <- r.runCtx(cx, "t", dbson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "c"}, {Key: "maxTimeMS", Value: 600000}})
	}()
	<-waiting
	cancel()
	if out := <-done; ok(out) {
		t.Fatalf("getMore of a cancelled command: %s", out.String())
	}

	// Without inserts the wait ends at maxTimeMS with an empty batch and
	// the cursor open.
	id = open()
	go func() {
		done <- r.run("t", dbson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "c"}, {Key: "maxTimeMS", Value: 1}})
	}()
	<-waiting
	if docs, nid := batch(t, <-done); len(docs) != 0 || nid != id {
		t.Fatalf("timed-out getMore: %d documents, id %d", len(docs), nid)
	}
}

// makeOplog creates local.oplog.rs as the oplog part does: a catalog entry
// {capped: true, size} without indexes and its data tree, entries keyed by
// ts.
func makeOplog(t *testing.T, env *Env, secs ...uint32) {
	t.Helper()
	err := env.KV.Update(context.Background(), func(tx *kv.Tx) error {
		c := &catalog.Collection{DB: "local", Name: "oplog.rs", Options: catalog.CappedOptions(1<<20, 0, nil)}
		c.UUID[0], c.UUID[15] = 0x0b, 0x1e
		if err := catalog.Put(tx, c); err != nil {
			return err
		}
		tr, err := tx.CreateTree(c.DataTree())
		if err != nil {
			return err
		}
		for _, s := range secs {
			var b bson.Builder
			b.AppendTimestamp("ts", s, 1)
			b.AppendString("op", "n")
			b.AppendInt64("sec", int64(s))
			if err := tr.Put(catalog.AppendRecordKey(nil, uint64(s)<<32|1), b.Finish()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOplogTsSeek: a ts range on local.oplog.rs examines only the entries
// in range (explain shows minRecord/maxRecord), tailing it works, and a
// direct insert needs a Timestamp ts, which becomes its record id.
func TestOplogTsSeek(t *testing.T) {
	env := memEnv(t)
	r := cmdRunner{t, env}
	makeOplog(t, env, 10, 20, 30, 40, 50)
	ts := func(s uint32) dbson.Timestamp { return dbson.Timestamp{T: s, I: 1} }
	cases := []struct {
		name     string
		filter   dbson.D
		want     string
		examined int64
	}{
		{"$gt", dbson.D{{Key: "ts", Value: dbson.D{{Key: "$gt", Value: ts(30)}}}}, "[40 50]", 2},
		{"$gte", dbson.D{{Key: "ts", Value: dbson.D{{Key: "$gte", Value: ts(30)}}}}, "[30 40 50]", 3},
		{"$eq", dbson.D{{Key: "ts", Value: ts(20)}}, "[20]", 1},
		{"$lt", dbson.D{{Key: "ts", Value: dbson.D{{Key: "$lt", Value: ts(30)}}}}, "[10 20]", 2},
		{"between", dbson.D{{Key: "ts", Value: dbson.D{{Key: "$gt", Value: ts(10)}, {Key: "$lte", Value: ts(40)}}}}, "[20 30 40]", 3},
		{"no ts bound", dbson.D{{Key: "op", Value: "n"}}, "[10 20 30 40 50]", 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			docs, _ := batch(t, r.must("local", dbson.D{{Key: "find", Value: "oplog.rs"}, {Key: "filter", Value: tc.filter}}))
			if got := fmt.Sprint(fields(docs, "sec")); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
			ex := r.must("local", dbson.D{{Key: "explain", Value: dbson.D{{Key: "find", Value: "oplog.rs"}, {Key: "filter", Value: tc.filter}}}, {Key: "verbosity", Value: "executionStats"}})
			es, _ := ex.Lookup("executionStats")
			if n := field(es.Document(), "totalDocsExamined"); n != tc.examined {
				t.Fatalf("examined %d, want %d: %s", n, tc.examined, ex.String())
			}
		})
	}
	ex := r.must("local", dbson.D{{Key: "explain", Value: dbson.D{{Key: "find", Value: "oplog.rs"}, {Key: "filter", Value: cases[0].filter}}}})
	if !strings.Contains(ex.String(), "minRecord") {
		t.Fatalf("explain shows no record range: %s", ex.String())
	}
	// Tailing from a ts.
	docs, id := batch(t, r.must("local", dbson.D{{Key: "find", Value: "oplog.rs"}, {Key: "filter", Value: cases[1].filter}, {Key: "tailable", Value: true}, {Key: "awaitData", Value: true}, {Key: "oplogReplay", Value: true}}))
	if len(docs) != 3 || id == 0 {
		t.Fatalf("tailing: %d documents, id %d", len(docs), id)
	}
	for _, bad := range []dbson.D{{{Key: "op", Value: "n"}}, {{Key: "ts", Value: 5}}} {
		if out := r.run("local", dbson.D{{Key: "insert", Value: "oplog.rs"}, {Key: "documents", Value: dbson.A{bad}}}); !hasWriteError(out, 2) {
			t.Fatalf("insert %v: %s", bad, out.String())
		}
	}
	r.must("local", dbson.D{{Key: "insert", Value: "oplog.rs"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "ts", Value: ts(60)}, {Key: "op", Value: "n"}, {Key: "sec", Value: 60}}}}})
	docs, _ = batch(t, r.must("local", dbson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "oplog.rs"}, {Key: "maxTimeMS", Value: 1}}))
	if got := fmt.Sprint(fields(docs, "sec")); got != "[60]" {
		t.Fatalf("tailed %s", got)
	}
	if _, ok := docs[0].Lookup("_id"); ok {
		t.Fatal("an oplog entry got an _id")
	}
}
