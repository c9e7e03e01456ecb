package raftrepl

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
)

func startSingle(t *testing.T, m *member, snaps SnapshotOptions, bootstrap bool) *Node {
	t.Helper()
	cfg := repl.DefaultConfig("rs0", m.set.Me())
	m.set.Follow(cfg, 0)
	n, err := Start(Options{Set: m.set, DB: m.db, Oplog: m.log, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		ApplyCommand: func(context.Context, string, bson.Doc) error { return nil },
		StoreConfig:  func(*repl.Config) error { return nil }, Tick: 10 * time.Millisecond, Snapshots: snaps}, cfg, bootstrap)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !m.set.IsWritablePrimary() {
		if time.Now().After(deadline) {
			n.Stop()
			t.Fatal("no primary within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return n
}

func commitWrite(t *testing.T, m *member, n *Node, id int) {
	t.Helper()
	epoch := n.Epoch()
	ts := m.insert(t, id)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n.WaitCommitted(ctx, ts, epoch); err != nil {
		t.Fatalf("write %d: %v", id, err)
	}
}

func storedEntries(t *testing.T, db *kv.DB) (count int, first uint64) {
	t.Helper()
	err := db.View(func(tx *kv.Tx) error {
		tr, err := tx.Tree(raftTree)
		if err != nil {
			return err
		}
		cur := tr.Cursor()
		for k, _ := cur.Seek([]byte("e")); k != nil && k[0] == 'e'; k, _ = cur.Next() {
			if count == 0 {
				first = uint64(k[1])<<56 | uint64(k[2])<<48 | uint64(k[3])<<40 | uint64(k[4])<<32 | uint64(k[5])<<24 | uint64(k[6])<<16 | uint64(k[7])<<8 | uint64(k[8])
			}
			count++
		}
		return cur.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return count, first
}

// TestCompactionKeepsTailAndRestarts: the log keeps LogTail entries behind
// the applied index (plus a quarter before it compacts again), in memory
// and in kv; a member restarted after a compaction loads the compaction
// point and its configuration state, elects itself again and commits
// (before InitialState returned the stored configuration, a restarted
// member had no voters and never became primary).
func TestCompactionKeepsTailAndRestarts(t *testing.T) {
	m := openMember(t, "h:1")
	const tail = 20
	n := startSingle(t, m, SnapshotOptions{LogTail: tail}, true)
	for i := 0; i < 200; i++ {
		commitWrite(t, m, n, i)
	}
	first, _ := n.mem.FirstIndex()
	last, _ := n.mem.LastIndex()
	if first <= 2 || last-first+1 > tail+tail/4+2 {
		t.Fatalf("log [%d, %d] after 200 writes: want a compacted log of about %d entries", first, last, tail)
	}
	if got := n.SnapshotStats().Compactions; got == 0 {
		t.Fatal("no compaction counted")
	}
	n.Stop()
	count, sfirst := storedEntries(t, m.db)
	if count > tail+tail/4+2 || sfirst < first {
		t.Fatalf("kv holds %d entries from %d; memory held them from %d", count, sfirst, first)
	}
	st, err := load(m.db)
	if err != nil {
		t.Fatal(err)
	}
	if st.snapIndex() == 0 || st.snapIndex()+1 != sfirst || st.applied < st.snapIndex() {
		t.Fatalf("compaction point %d, applied %d, first stored entry %d", st.snapIndex(), st.applied, sfirst)
	}
	if len(st.conf.GetVoters()) != 1 {
		t.Fatalf("stored configuration state %v", st.conf)
	}
	n = startSingle(t, m, SnapshotOptions{LogTail: tail}, false)
	defer n.Stop()
	commitWrite(t, m, n, 1000)
}

// TestSnapshotRoundTrip: a snapshot read in small chunks (each chunk
// resumes after the last key of the one before, across trees) and
// installed on another member gives it the source's trees and catalog
// entries, the oplog from the commit point, and keeps its own local
// database; what the member held before is gone.
func TestSnapshotRoundTrip(t *testing.T) {
	a := openMember(t, "h:1")
	na := startSingle(t, a, SnapshotOptions{ChunkBytes: 300}, true)
	defer na.Stop()
	for i := 0; i < 150; i++ {
		commitWrite(t, a, na, i)
	}
	// A collection created and not written to: its data and _id index
	// trees are empty, and the receiver must create them too (before,
	// an empty tree sent nothing, and the first insert a member applied
	// into it failed with "tree not found").
	if err := a.db.Update(context.Background(), func(tx *kv.Tx) error {
		_, err := exec.CollectionForWrite(tx, "db", "empty", true, a.log)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// A write of the source's own that Raft has not committed leaves an
	// undo record (as on a primary of a set of several members): that
	// record is the source's and stays out of the snapshot.
	a.log.SetUndo(true)
	a.insert(t, 5000)
	a.log.SetUndo(false)
	if err := a.db.View(func(tx *kv.Tx) error {
		tr, err := tx.Tree(undoTree)
		if err == nil && tr.Len() == 0 {
			err = errors.New("empty")
		}
		return err
	}); err != nil {
		t.Fatalf("the source's undo records: %v", err)
	}
	src, err := na.newSource()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range src.trees {
		if name == undoTree {
			t.Fatalf("the snapshot carries the source's %s", undoTree)
		}
	}
	na.snap.mu.Lock()
	na.snap.sources = append(na.snap.sources, src)
	na.snap.mu.Unlock()

	path := filepath.Join(t.TempDir(), "snap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	tree, after, chunks, records := 0, []byte(nil), 0, 0
	for {
		c, err := na.SnapshotChunk(src.id, tree, after)
		if err != nil {
			t.Fatal(err)
		}
		chunks++
		records += c.Records
		for _, s := range c.Segments {
			if err := writeSegment(w, s.Name, s.Data); err != nil {
				t.Fatal(err)
			}
		}
		if c.Done {
			break
		}
		tree, after = c.Tree, c.After
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if chunks < 10 {
		t.Fatalf("%d chunks of 300 bytes for %d records", chunks, records)
	}
	if _, err := na.SnapshotChunk(src.id+1, 0, nil); err != ErrNoSnapshot {
		t.Fatalf("an unknown snapshot: %v", err)
	}

	// The receiver holds data of its own, which the snapshot replaces.
	b := openMember(t, "h:2")
	for i := 1000; i < 1010; i++ {
		b.insert(t, i)
	}
	var bLocals map[string]bool
	b.db.View(func(tx *kv.Tx) error { bLocals, _, _ = localTrees(tx); return nil })
	nb := &Node{opts: Options{DB: b.db, Oplog: b.log}}
	file, _ := os.Open(path)
	defer file.Close()
	d, _ := decodeDescriptor(src.snap.GetData())
	last, err := nb.installData(context.Background(), src.snap, d, &recordReader{r: bufio.NewReader(file)})
	if err != nil {
		t.Fatal(err)
	}
	if int64(records) > d.Records || records < 150 {
		t.Fatalf("records sent %d, the descriptor counts %d", records, d.Records)
	}
	// Every tree the source sent is equal on the receiver.
	atx, _ := a.db.BeginRead()
	defer atx.Rollback()
	btx, _ := b.db.BeginRead()
	defer btx.Rollback()
	for _, name := range src.trees {
		if name == src.oplogTree {
			continue
		}
		if !equalTrees(t, atx, btx, name, name) {
			t.Errorf("tree %q differs", name)
		}
	}
	if _, err := btx.Tree(undoTree); err == nil {
		t.Fatalf("the receiver holds a %s tree after the install", undoTree)
	}
	empty, err := catalog.Get(btx, "db", "empty")
	if err != nil || empty == nil {
		t.Fatalf("the empty collection on the receiver: %v, %v", empty, err)
	}
	if _, err := btx.Tree(empty.DataTree()); err != nil {
		t.Fatalf("the empty collection's data tree on the receiver: %v", err)
	}
	if got, want := len(mustList(t, btx, "db")), len(mustList(t, atx, "db")); got != want || got != 2 {
		t.Fatalf("receiver's db collections %d, source's %d", got, want)
	}
	// The receiver's local database is its own still.
	locals, oplogTree, _ := localTrees(btx)
	for u := range bLocals {
		if !locals[u] {
			t.Fatalf("the receiver's local collection %s is gone", u)
		}
	}
	// Its oplog holds the source's entries from the commit point.
	ot, err := btx.Tree(oplogTree)
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := ot.Cursor().First(); k == nil || repl.Timestamp(be64(k)) < src.oplogFrom {
		t.Fatalf("the receiver's oplog starts at %x, the commit point is %v", k, src.oplogFrom)
	}
	aLast, _, _, _ := oplog.Last(atx)
	if last != aLast {
		t.Fatalf("installed oplog ends at %v, the source's at %v", last, aLast)
	}
	st, err := load(b.db)
	if err != nil {
		t.Fatal(err)
	}
	if st.applied != src.index || st.snapIndex() != src.index || len(st.entries) != 0 {
		t.Fatalf("receiver's raft state: applied %d, snapshot %d, %d entries; want %d", st.applied, st.snapIndex(), len(st.entries), src.index)
	}
}

func be64(k []byte) uint64 {
	var v uint64
	for _, c := range k {
		v = v<<8 | uint64(c)
	}
	return v
}

func mustList(t *testing.T, tx *kv.Tx, db string) []*catalog.Collection {
	t.Helper()
	c, err := catalog.List(tx, db)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func equalTrees(t *testing.T, atx, btx *kv.Tx, an, bn string) bool {
	t.Helper()
	at, err := atx.Tree(an)
	if err != nil {
		t.Fatal(err)
	}
	bt, err := btx.Tree(bn)
	if err != nil {
		t.Logf("receiver has no tree %q: %v", bn, err)
		return false
	}
	ac, bc := at.Cursor(), bt.Cursor()
	ak, av := ac.First()
	bk, bv := bc.First()
	for {
		if an == catalog.TreeName {
			for ak != nil && bytes.HasPrefix(ak, []byte("local.")) {
				ak, av = ac.Next()
			}
			for bk != nil && bytes.HasPrefix(bk, []byte("local.")) {
				bk, bv = bc.Next()
			}
		}
		if ak == nil || bk == nil {
			return ak == nil && bk == nil
		}
		if !bytes.Equal(ak, bk) || !bytes.Equal(av, bv) {
			return false
		}
		ak, av = ac.Next()
		bk, bv = bc.Next()
	}
}
