package kv

import (
	"context"
	"strings"
	"testing"

	"github.com/cairndb/cairn/kv/vfs"
)

// TestCommitWithInvalidDurability: a durability that is none of the three
// is refused with an error, not treated as one of them (it committed as
// NoSync, silently), and the transaction stays open with its changes, so
// the caller can commit it properly or roll it back.
func TestCommitWithInvalidDurability(t *testing.T) {
	for _, d := range []Durability{-1, NoSync + 1, 100} {
		t.Run(d.String(), func(t *testing.T) {
			db := mustOpen(t, vfs.NewMem(), nil)
			defer db.Close()
			for _, writable := range []bool{true, false} {
				var tx *Tx
				var err error
				if writable {
					tx, err = db.BeginWrite(context.Background())
				} else {
					tx, err = db.BeginRead()
				}
				if err != nil {
					t.Fatal(err)
				}
				if writable {
					tr, err := tx.CreateTree("t")
					if err != nil {
						t.Fatal(err)
					}
					if err := tr.Put([]byte("k"), []byte("v")); err != nil {
						t.Fatal(err)
					}
				}
				err = tx.CommitWith(d)
				if err == nil || !strings.Contains(err.Error(), "invalid durability") {
					t.Fatalf("writable %v: CommitWith(%d) = %v, want an invalid durability error", writable, int(d), err)
				}
				if err := tx.CommitWith(Sync); err != nil {
					t.Fatalf("writable %v: the transaction did not stay open: %v", writable, err)
				}
			}
			if err := db.View(func(tx *Tx) error {
				tr, err := tx.Tree("t")
				if err != nil {
					return err
				}
				v, err := tr.Get([]byte("k"))
				if string(v) != "v" {
					t.Errorf("after the retried commit: %q, %v", v, err)
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestEmptyValueIsNotAbsent: as the package documentation promises, Get
// answers nil for an absent key and a non-nil empty slice for a key whose
// value is empty, however the entry was stored: a deferred put into a new
// tree, a put into a tree, a bulk load, after a checkpoint and reopen, and
// after journal replay.
func TestEmptyValueIsNotAbsent(t *testing.T) {
	mem := vfs.NewMem()
	db := mustOpen(t, mem, nil)
	ctx := context.Background()
	keys := []string{"deferred", "put", "bulk"}
	check := func(when string) {
		t.Helper()
		if err := db.View(func(tx *Tx) error {
			for _, name := range []string{"t", "b"} {
				tr, err := tx.Tree(name)
				if err != nil {
					return err
				}
				for _, k := range keys {
					v, err := tr.Get([]byte(k))
					if err != nil {
						return err
					}
					if present := (name == "b") == (k == "bulk"); v == nil == present || len(v) != 0 {
						t.Errorf("%s: tree %s, key %s: value %q (nil %v), present %v", when, name, k, v, v == nil, present)
					}
				}
				if k, v := tr.Cursor().First(); k == nil || v == nil {
					t.Errorf("%s: tree %s: cursor gives key %q, value nil %v", when, name, k, v == nil)
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	steps := []func(tx *Tx) error{
		func(tx *Tx) error {
			tr, err := tx.CreateTree("t")
			if err != nil {
				return err
			}
			return tr.Put([]byte("deferred"), nil)
		},
		func(tx *Tx) error {
			tr, err := tx.Tree("t")
			if err != nil {
				return err
			}
			return tr.Put([]byte("put"), []byte{})
		},
		func(tx *Tx) error {
			done := false
			_, err := tx.BulkLoad("b", func() ([]byte, []byte, bool, error) {
				if done {
					return nil, nil, false, nil
				}
				done = true
				return []byte("bulk"), nil, true, nil
			}, 0)
			return err
		},
	}
	for _, step := range steps {
		if err := db.Update(ctx, step); err != nil {
			t.Fatal(err)
		}
	}
	check("in memory")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, mem, nil)
	check("reopened")
	if err := db.Update(ctx, func(tx *Tx) error {
		tr, err := tx.Tree("t")
		if err != nil {
			return err
		}
		return tr.Put([]byte("put"), nil) // replayed from the journal below
	}); err != nil {
		t.Fatal(err)
	}
	mem.Crash(vfs.CrashOptions{})
	db.Close()
	db = mustOpen(t, mem, nil)
	defer db.Close()
	if db.Stats().ReplayedRecords == 0 {
		t.Fatal("nothing replayed from the journal")
	}
	check("replayed")
}
