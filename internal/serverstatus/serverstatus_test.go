package serverstatus

import (
	"testing"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/opctx"
	"github.com/cairndb/cairn/kv"
	"github.com/cairndb/cairn/kv/vfs"
)

// TestAppend: the sections carry the counters in mongod's types (int32
// for ints, int64 for longs) and the connection limit's default.
func TestAppend(t *testing.T) {
	var s Stats
	s.Insert.Add(3)
	s.ConnsCurrent.Add(2)
	s.WritersQueued.Add(1)
	s.NoteDisconnectKill(5 * time.Millisecond)
	s.NoteDisconnectKill(time.Millisecond)
	db, err := kv.Open("/db", &kv.Options{FS: vfs.NewMem(), Durability: kv.NoSync, JournalSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var ops opctx.Table
	var b bson.Builder
	Append(&b, &Sources{Stats: &s, Version: "7.0.0", CairnVersion: "x", Started: time.Now().Add(-time.Minute),
		Ops: &ops, Cursors: exec.NewCursors(time.Minute), Engine: &exec.Engine{KV: db}})
	d := b.Finish()
	for _, tc := range []struct {
		path []string
		typ  bson.Type
		n    int64
	}{
		{[]string{"opcounters", "insert"}, bson.TypeInt64, 3},
		{[]string{"connections", "current"}, bson.TypeInt32, 2},
		{[]string{"connections", "available"}, bson.TypeInt32, 1000000 - 2},
		{[]string{"globalLock", "currentQueue", "writers"}, bson.TypeInt32, 1},
		{[]string{"metrics", "operation", "killedDueToClientDisconnect"}, bson.TypeInt64, 2},
		{[]string{"metrics", "operation", "disconnectKillMaxMicros"}, bson.TypeInt64, 5000},
	} {
		v, ok := d.LookupPath(tc.path...)
		n, _ := v.AsInt64()
		if !ok || v.Type != tc.typ || n != tc.n {
			t.Errorf("%v = %v (%v), want %d (%v)", tc.path, v, v.Type, tc.n, tc.typ)
		}
	}
	if _, ok := d.Lookup("transactions"); ok {
		t.Error("transactions section without sessions")
	}
	if v, _ := d.Lookup("version"); v.StringValue() != "7.0.0" {
		t.Errorf("version %v", v)
	}
}

// TestAppendHostInfo: hostInfo's system section names the machine's cores
// and memory.
func TestAppendHostInfo(t *testing.T) {
	var b bson.Builder
	AppendHostInfo(&b)
	d := b.Finish()
	if v, ok := d.LookupPath("system", "numCores"); !ok || v.Type != bson.TypeInt32 || v.Int32() < 1 {
		t.Errorf("system.numCores = %v", v)
	}
	if v, ok := d.LookupPath("system", "memSizeMB"); !ok || v.Type != bson.TypeInt64 {
		t.Errorf("system.memSizeMB = %v", v)
	}
}
