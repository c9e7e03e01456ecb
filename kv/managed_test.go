package kv

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cairndb/cairn/kv/vfs"
)

// TestUpdatePanicReleasesWriter: a panic inside Update's function rolls the
// transaction back and releases the writer lock as it unwinds, so the next
// write works (before, every later write waited forever).
func TestUpdatePanicReleasesWriter(t *testing.T) {
	db := mustOpen(t, vfs.NewMem(), nil)
	defer db.Close()
	ctx := context.Background()
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v, want the function's panic", r)
			}
		}()
		db.Update(ctx, func(tx *Tx) error {
			tr, err := tx.CreateTree("t")
			if err != nil {
				return err
			}
			if err := tr.Put([]byte("a"), []byte("1")); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := db.Update(wctx, func(tx *Tx) error {
		if _, err := tx.Tree("t"); !errors.Is(err, ErrTreeNotFound) {
			t.Errorf("the panicked transaction's tree: %v, want ErrTreeNotFound (rolled back)", err)
		}
		_, err := tx.CreateTree("u")
		return err
	})
	if err != nil {
		t.Fatalf("write after a panic in Update: %v", err)
	}
}

// TestManagedTxCannotBeEndedByFn: the function DB.Update and DB.View run
// may not commit or roll back their transaction.
func TestManagedTxCannotBeEndedByFn(t *testing.T) {
	db := mustOpen(t, vfs.NewMem(), nil)
	defer db.Close()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		end  func(*Tx) error
	}{
		{"Commit", (*Tx).Commit},
		{"Rollback", (*Tx).Rollback},
		{"CommitWith", func(tx *Tx) error { return tx.CommitWith(Sync) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := db.Update(ctx, func(tx *Tx) error {
				if _, err := tx.CreateTree(tc.name); err != nil {
					return err
				}
				if err := tc.end(tx); !errors.Is(err, ErrTxManaged) {
					t.Errorf("%s inside Update: %v, want ErrTxManaged", tc.name, err)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("Update: %v", err)
			}
			// Update committed it, once.
			if err := db.View(func(tx *Tx) error {
				if err := tc.end(tx); !errors.Is(err, ErrTxManaged) {
					t.Errorf("%s inside View: %v, want ErrTxManaged", tc.name, err)
				}
				_, err := tx.Tree(tc.name)
				return err
			}); err != nil {
				t.Fatalf("the tree Update committed: %v", err)
			}
		})
	}
}

// TestCloneReadsItsSnapshot: a clone reads the snapshot of the transaction
// it was made from, whatever commits later, and ends on its own.
func TestCloneReadsItsSnapshot(t *testing.T) {
	db := mustOpen(t, vfs.NewMem(), nil)
	ctx := context.Background()
	put := func(v string) {
		t.Helper()
		if err := db.Update(ctx, func(tx *Tx) error {
			tr, err := tx.Tree("t")
			if errors.Is(err, ErrTreeNotFound) {
				tr, err = tx.CreateTree("t")
			}
			if err != nil {
				return err
			}
			return tr.Put([]byte("k"), []byte(v))
		}); err != nil {
			t.Fatal(err)
		}
	}
	get := func(tx *Tx) string {
		t.Helper()
		tr, err := tx.Tree("t")
		if err != nil {
			t.Fatal(err)
		}
		v, err := tr.Get([]byte("k"))
		if err != nil {
			t.Fatal(err)
		}
		return string(v)
	}
	put("old")
	rtx, err := db.BeginRead()
	if err != nil {
		t.Fatal(err)
	}
	clone, err := rtx.Clone()
	if err != nil {
		t.Fatal(err)
	}
	rtx.Rollback() // the clone lives on
	put("new")
	if v := get(clone); v != "old" {
		t.Errorf("clone read %q, want its snapshot's %q", v, "old")
	}
	if cc, err := clone.Clone(); err != nil {
		t.Errorf("clone of a clone: %v", err)
	} else {
		cc.Rollback()
	}
	clone.Rollback()
	if _, err := clone.Clone(); !errors.Is(err, ErrTxClosed) {
		t.Errorf("Clone of an ended transaction: %v, want ErrTxClosed", err)
	}
	wtx, err := db.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wtx.Clone(); err == nil {
		t.Error("Clone of a write transaction succeeded")
	}
	wtx.Rollback()
	last, err := db.BeginRead()
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := last.Clone(); !errors.Is(err, ErrClosed) {
		t.Errorf("Clone after Close: %v, want ErrClosed", err)
	}
}
