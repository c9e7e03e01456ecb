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
