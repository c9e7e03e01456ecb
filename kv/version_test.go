package kv

import (
	"context"
	"errors"
	"testing"

	"github.com/cairndb/cairn/kv/vfs"
)

// treeVersion reads the version of the named tree in a fresh read
// transaction (0 when the tree does not exist).
func treeVersion(t *testing.T, db *DB, name string) uint64 {
	t.Helper()
	var v uint64
	err := db.View(func(tx *Tx) error {
		tr, err := tx.Tree(name)
		if errors.Is(err, ErrTreeNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		v = tr.Version()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestTreeVersion checks that a tree's Version changes with every
// committed change to it, and only then.
func TestTreeVersion(t *testing.T) {
	fs := vfs.NewMem()
	db := mustOpen(t, fs, nil)
	ctx := context.Background()
	update := func(fn func(tx *Tx) error) uint64 {
		t.Helper()
		tx, err := db.BeginWrite(ctx)
		if err != nil {
			t.Fatal(err)
		}
		id := tx.ID()
		if err := fn(tx); err != nil {
			tx.Rollback()
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		return id
	}
	put := func(name string, i int) func(tx *Tx) error {
		return func(tx *Tx) error {
			tr, err := tx.CreateTreeIfNotExists(name)
			if err != nil {
				return err
			}
			return tr.Put(key(i), val(i))
		}
	}

	steps := []struct {
		name    string
		fn      func(tx *Tx) error
		changes map[string]bool // trees the step changes (others keep their version)
	}{
		{"create a and put", put("a", 1), map[string]bool{"a": true}},
		{"create b and put", put("b", 1), map[string]bool{"b": true}},
		{"put into a tree that has entries", put("a", 2), map[string]bool{"a": true}},
		{"overwrite with the same value", put("a", 2), map[string]bool{"a": true}},
		{"open a, write b", func(tx *Tx) error {
			if _, err := tx.Tree("a"); err != nil {
				return err
			}
			return put("b", 2)(tx)
		}, map[string]bool{"b": true}},
		{"get from a, write b", func(tx *Tx) error {
			tr, err := tx.Tree("a")
			if err != nil {
				return err
			}
			if _, err := tr.Get(key(1)); err != nil {
				return err
			}
			return put("b", 3)(tx)
		}, map[string]bool{"b": true}},
		{"delete a missing key of a, write b", func(tx *Tx) error {
			tr, err := tx.Tree("a")
			if err != nil {
				return err
			}
			if _, err := tr.Delete(key(99)); err != nil {
				return err
			}
			return put("b", 4)(tx)
		}, map[string]bool{"b": true}},
		{"delete from a", func(tx *Tx) error {
			tr, err := tx.Tree("a")
			if err != nil {
				return err
			}
			_, err = tr.Delete(key(1))
			return err
		}, map[string]bool{"a": true}},
		{"delete a range of b", func(tx *Tx) error {
			tr, err := tx.Tree("b")
			if err != nil {
				return err
			}
			_, err = tr.DeleteRange(nil, nil)
			return err
		}, map[string]bool{"b": true}},
		{"drop a and create it again empty", func(tx *Tx) error {
			if err := tx.DropTree("a"); err != nil {
				return err
			}
			_, err := tx.CreateTree("a")
			return err
		}, map[string]bool{"a": true}},
		{"create c empty", func(tx *Tx) error {
			_, err := tx.CreateTree("c")
			return err
		}, map[string]bool{"c": true}},
		{"bulk load e", func(tx *Tx) error {
			i := 0
			_, err := tx.BulkLoad("e", func() ([]byte, []byte, bool, error) {
				i++
				return key(i), val(i), i <= 100, nil
			}, 1)
			return err
		}, map[string]bool{"e": true}},
	}
	names := []string{"a", "b", "c", "e"}
	prev := map[string]uint64{}
	for _, s := range steps {
		id := update(s.fn)
		for _, n := range names {
			v := treeVersion(t, db, n)
			switch {
			case s.changes[n] && v != id:
				t.Errorf("%s: tree %s has version %d, want the step's txid %d", s.name, n, v, id)
			case !s.changes[n] && v != prev[n]:
				t.Errorf("%s: tree %s changed version %d -> %d, the step did not change it", s.name, n, prev[n], v)
			}
			prev[n] = v
		}
	}

	// A rolled-back write and a commit that changes nothing keep versions.
	tx, err := db.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := put("a", 7)(tx); err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	update(func(tx *Tx) error { _, err := tx.Tree("a"); return err })
	for _, n := range names {
		if v := treeVersion(t, db, n); v != prev[n] {
			t.Errorf("after a rollback and an empty commit: tree %s version %d, want %d", n, v, prev[n])
		}
	}

	// Within a write transaction: the committed version until the
	// transaction changes the tree, then 0.
	tx, err = db.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := tx.Tree("c")
	if err != nil {
		t.Fatal(err)
	}
	if v := tr.Version(); v != prev["c"] {
		t.Errorf("unchanged tree in a write tx: version %d, want %d", v, prev["c"])
	}
	if err := tr.Put(key(1000), val(1)); err != nil {
		t.Fatal(err)
	}
	if v := tr.Version(); v != 0 {
		t.Errorf("tree changed by its write tx: version %d, want 0", v)
	}
	nt, err := tx.CreateTree("d")
	if err != nil {
		t.Fatal(err)
	}
	if v := nt.Version(); v != 0 {
		t.Errorf("tree created by its write tx: version %d, want 0", v)
	}
	// A reader that began before the commit keeps the old version.
	old, err := db.BeginRead()
	if err != nil {
		t.Fatal(err)
	}
	defer old.Rollback()
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	ot, err := old.Tree("c")
	if err != nil {
		t.Fatal(err)
	}
	if v := ot.Version(); v != prev["c"] {
		t.Errorf("older reader: version %d, want %d", v, prev["c"])
	}
	if v := treeVersion(t, db, "c"); v == prev["c"] || v == 0 {
		t.Errorf("after the commit: version %d, want a new nonzero one (was %d)", v, prev["c"])
	}

	// Compacting moves pages, not entries. Reopened trees take the
	// checkpoint's txid, and later changes still move versions forward.
	before := map[string]uint64{}
	for _, n := range []string{"a", "b", "c", "d"} {
		before[n] = treeVersion(t, db, n)
	}
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b", "c", "d"} {
		if v := treeVersion(t, db, n); v != before[n] {
			t.Errorf("after Compact: tree %s has version %d, want %d", n, v, before[n])
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, fs, nil)
	defer db.Close()
	for _, n := range []string{"a", "b", "c", "d"} {
		if v := treeVersion(t, db, n); v == 0 {
			t.Errorf("after reopening: tree %s has version 0", n)
		}
	}
	v0 := treeVersion(t, db, "b")
	id := update(put("b", 50))
	if v := treeVersion(t, db, "b"); v != id || v <= v0 {
		t.Errorf("after reopen and a put: version %d, want %d (> %d)", v, id, v0)
	}
}
