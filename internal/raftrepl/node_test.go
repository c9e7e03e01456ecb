package raftrepl

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
	"github.com/cairndb/cairn/kv/vfs"
)

type member struct {
	db  *kv.DB
	log *oplog.Log
	set *repl.Set
}

func openMember(t *testing.T, host string) *member {
	t.Helper()
	db, err := kv.Open("/db", &kv.Options{FS: vfs.NewMem(), Durability: kv.NoSync, JournalSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	set := repl.NewSet("rs0", nil)
	set.SetMe(host)
	l, err := oplog.Open(db, set.Clock, oplog.Config{MaxBytes: 16 << 20}, func() int64 { return 16 << 20 })
	if err != nil {
		t.Fatal(err)
	}
	l.Term = set.WriteTerm
	return &member{db: db, log: l, set: set}
}

func (m *member) insert(t *testing.T, id int) repl.Timestamp {
	t.Helper()
	tx, err := m.db.BeginWrite(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	coll, err := exec.CollectionForWrite(tx, "db", "c", true, m.log)
	if err != nil {
		t.Fatal(err)
	}
	w, err := exec.OpenWriter(tx, coll)
	if err != nil {
		t.Fatal(err)
	}
	w.Oplog = m.log
	var b bson.Builder
	b.AppendInt32("_id", int32(id))
	if _, _, err := w.Insert(b.Finish()); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	ts := m.log.LastAppended()
	m.set.NoteApplied(ts, time.Now())
	return ts
}

// TestSingleVoterCommits: a one-voter group elects itself, its shipper
// proposes the oplog entries a write commits, and WaitCommitted returns
// once Raft committed them.
func TestSingleVoterCommits(t *testing.T) {
	m := openMember(t, "h:1")
	cfg := repl.DefaultConfig("rs0", "h:1")
	m.set.Follow(cfg, 0)
	n, err := Start(Options{Set: m.set, DB: m.db, Oplog: m.log, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		ApplyCommand: func(context.Context, string, bson.Doc) error { return nil },
		StoreConfig:  func(*repl.Config) error { return nil }, Tick: 10 * time.Millisecond}, cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	deadline := time.Now().Add(10 * time.Second)
	for !m.set.IsWritablePrimary() {
		if time.Now().After(deadline) {
			t.Fatal("no primary within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for i := 0; i < 20; i++ {
		ts := m.insert(t, i)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := n.WaitCommitted(ctx, ts, n.Epoch())
		cancel()
		if err != nil {
			t.Fatalf("write %d (ts %v): %v (commit point %v)", i, ts, err, n.Status().Commit)
		}
	}
}
