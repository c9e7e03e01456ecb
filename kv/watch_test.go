package kv

import (
	"context"
	"testing"

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
