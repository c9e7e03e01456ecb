package kv

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/kv/vfs"
)

// TestWatchTree: a watch is closed by the first commit that changes its
// tree, not by commits to other trees; Rearm waits for the next one; the
// last Cancel forgets the tree.
func TestWatchTree(t *testing.T) {
	db := mustOpen(t, vfs.NewMem(), nil)
	put := func(tree, key string) {
		t.Helper()
		if err := db.Update(context.Background(), func(tx *Tx) error {
			tr, err := tx.CreateTreeIfNotExists(tree)
			if err != nil {
				return err
			}
			return tr.Put([]byte(key), []byte("v"))
		}); err != nil {
			t.Fatal(err)
		}
	}
	closed := func(w *TreeWatch) bool {
		select {
		case <-w.C():
			return true
		default:
			return false
		}
	}
	put("a", "0")
	w, w2 := db.WatchTree("a"), db.WatchTree("a")
	put("b", "1")
	if closed(w) {
		t.Fatal("a commit to another tree closed the watch")
	}
	put("a", "1")
	if !closed(w) || !closed(w2) {
		t.Fatal("a commit to the tree did not close its watches")
	}
	w.Rearm()
	if closed(w) {
		t.Fatal("a rearmed watch is closed")
	}
	put("a", "2")
	if !closed(w) {
		t.Fatal("the rearmed watch missed the commit")
	}
	w.Rearm()
	w.Cancel()
	w2.Cancel()
	if n := db.watches.n.Load(); n != 0 {
		t.Fatalf("%d trees still watched after Cancel", n)
	}
}

// TestWatchTreeConcurrent: watchers that read, find nothing new and wait
// never miss a commit (a missed one would leave a watcher waiting for its
// timeout), while others register and cancel around them. Bounded: 300
// commits, 16 watchers, 10 s per wait.
func TestWatchTreeConcurrent(t *testing.T) {
	db := mustOpen(t, vfs.NewMem(), nil)
	const commits, watchers = 300, 16
	last := func() int {
		tx, err := db.BeginRead()
		if err != nil {
			t.Error(err)
			return commits
		}
		defer tx.Rollback()
		tr, err := tx.Tree("a")
		if err != nil {
			return -1 // not created yet
		}
		k, _ := tr.Cursor().Last()
		if k == nil {
			return -1
		}
		return int(binary.BigEndian.Uint32(k))
	}
	var wg sync.WaitGroup
	errs := make(chan error, watchers)
	for i := range watchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := db.WatchTree("a")
			defer func() { w.Cancel() }()
			for round := 0; ; round++ {
				if last() == commits-1 {
					return
				}
				select {
				case <-w.C():
				case <-time.After(10 * time.Second):
					errs <- fmt.Errorf("watcher %d missed a commit (at %d of %d)", i, last(), commits)
					return
				}
				if i%2 == 0 && round%3 == 0 {
					// start over: the entry may be forgotten and recreated
					w.Cancel()
					w = db.WatchTree("a")
				} else {
					w.Rearm()
				}
			}
		}()
	}
	putCommits(t, db, commits)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := db.watches.n.Load(); n != 0 {
		t.Fatalf("%d trees still watched after Cancel", n)
	}
}

// TestWatchTreeShared: many waiters share one watch through Current (no
// registration of their own), each loading the channel before it reads;
// none misses a commit. Bounded: 300 commits, 16 waiters, 10 s per wait.
func TestWatchTreeShared(t *testing.T) {
	db := mustOpen(t, vfs.NewMem(), nil)
	const commits, waiters = 300, 16
	w := db.WatchTree("a")
	defer w.Cancel()
	last := func() int {
		tx, err := db.BeginRead()
		if err != nil {
			return commits
		}
		defer tx.Rollback()
		tr, err := tx.Tree("a")
		if err != nil {
			return -1
		}
		k, _ := tr.Cursor().Last()
		if k == nil {
			return -1
		}
		return int(binary.BigEndian.Uint32(k))
	}
	var wg sync.WaitGroup
	errs := make(chan error, waiters)
	for i := range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ch := w.Current() // before the read
				if last() == commits-1 {
					return
				}
				select {
				case <-ch:
				case <-time.After(10 * time.Second):
					errs <- fmt.Errorf("waiter %d missed a commit (at %d of %d)", i, last(), commits)
					return
				}
			}
		}()
	}
	putCommits(t, db, commits)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// putCommits commits n transactions, the i-th putting key i (big-endian
// uint32) in tree "a", which the first creates.
func putCommits(t *testing.T, db *DB, n int) {
	t.Helper()
	for i := range n {
		if err := db.Update(context.Background(), func(tx *Tx) error {
			tr, err := tx.CreateTreeIfNotExists("a")
			if err != nil {
				return err
			}
			return tr.Put(binary.BigEndian.AppendUint32(nil, uint32(i)), []byte("v"))
		}); err != nil {
			t.Fatal(err)
		}
	}
}
