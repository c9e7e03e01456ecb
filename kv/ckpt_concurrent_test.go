package kv

import (
	"context"
	"fmt"
	"testing"

	"github.com/cairndb/cairn/kv/vfs"
)

// TestCommitsDuringCheckpointSurviveCrash commits durably while a
// background checkpoint is between its journal switch and its meta, then
// loses power there: recovery starts from the previous meta and must follow
// the switch record into the other journal file. A second round lets the
// checkpoint finish and crashes after it: recovery starts from the new meta.
func TestCommitsDuringCheckpointSurviveCrash(t *testing.T) {
	for _, finish := range []bool{false, true} {
		t.Run(fmt.Sprintf("meta written=%v", finish), func(t *testing.T) {
			mem := vfs.NewMem()
			opts := memOpts(mem)
			db := mustOpen(t, mem, opts)
			ctx := context.Background()
			put := func(db *DB, i int) error {
				return db.Update(ctx, func(tx *Tx) error {
					tr, err := tx.CreateTreeIfNotExists("t")
					if err != nil {
						return err
					}
					return tr.Put(fmt.Appendf(nil, "k%03d", i), fmt.Appendf(nil, "v%d", i))
				})
			}
			for i := 0; i < 50; i++ {
				if err := put(db, i); err != nil {
					t.Fatal(err)
				}
			}
			during := 0
			debugCheckpointUnlocked = func(db *DB) {
				// The writer lock is free: these commit into the other file.
				for i := 50; i < 80; i++ {
					if err := put(db, i); err != nil {
						t.Error(err)
						return
					}
					during++
				}
				if !finish {
					mem.Crash(vfs.CrashOptions{})
				}
			}
			err := db.Checkpoint(ctx)
			debugCheckpointUnlocked = nil
			if finish {
				if err != nil {
					t.Fatal(err)
				}
				mem.Crash(vfs.CrashOptions{})
			}
			db.Close()
			if during != 30 {
				t.Fatalf("%d commits during the checkpoint, want 30", during)
			}
			db = mustOpen(t, mem, opts)
			defer db.Close()
			db.View(func(tx *Tx) error {
				tr, err := tx.Tree("t")
				if err != nil {
					t.Fatal(err)
				}
				if n := tr.Len(); n != 80 {
					t.Errorf("%d keys after recovery, want 80", n)
				}
				return nil
			})
			if err := db.Check(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
