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
