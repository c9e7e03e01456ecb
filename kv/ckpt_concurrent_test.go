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
			db.opts.testing.checkpointUnlocked = func(db *DB) {
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
			db.opts.testing.checkpointUnlocked = nil
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

// TestCheckpointRacesCommitsReplacingDirtyNodes lets commits replace node
// versions while a background checkpoint, which no longer holds the writer
// lock while it writes pages, is writing those very versions: before the
// first page is written (every replaced version is still dirty: the
// checkpoint frees the extents it gives them on the commit's behalf) and
// halfway (some replaced versions are written already: the commit frees
// them). Afterwards every page of the file must be referenced by the
// checkpoint, free, or waiting to be freed — exactly one of them — and the
// data must be the last committed.
func TestCheckpointRacesCommitsReplacingDirtyNodes(t *testing.T) {
	db := openBigJournal(t)
	defer db.Close()
	ctx := context.Background()
	const n = 20000
	model := map[string]string{}
	put := func(round, from, step int) {
		t.Helper()
		if err := rewrite(db, model, round, from, step, n); err != nil {
			t.Fatal(err)
		}
	}
	put(0, 0, 1)
	if err := db.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	put(1, 0, 1) // every leaf dirty again
	calls, freedForCommit := 0, 0
	db.opts.testing.beforeNodeWrite = func(db *DB, _ *node) {
		calls++
		switch calls {
		case 1:
			put(2, 0, 7)
		case 30:
			put(3, 3, 5)
		}
	}
	db.opts.testing.freedForCommit = func() { freedForCommit++ }
	err := db.Checkpoint(ctx)
	db.opts.testing.beforeNodeWrite, db.opts.testing.freedForCommit = nil, nil
	if err != nil {
		t.Fatal(err)
	}
	if calls < 30 {
		t.Fatalf("checkpoint wrote %d nodes, want at least 30", calls)
	}
	if freedForCommit == 0 {
		t.Fatal("no version was replaced while dirty and then written: the race is not exercised")
	}
	t.Logf("checkpoint wrote %d nodes; %d of them were replaced by commits while dirty", calls, freedForCommit)
	if db.st.checkpoints.Load() < 2 {
		t.Fatal("no checkpoint")
	}
	// Further checkpoints release what the racing commits freed.
	for i := 0; i < 3; i++ {
		if err := db.Checkpoint(ctx); err != nil {
			t.Fatal(err)
		}
	}
	checkModel(t, db, "t", model)
	checkPageAccounting(t, db)
}

// TestCheckpointsUnderConcurrentCommits runs background-style checkpoints
// in a loop while a writer keeps rewriting keys all over the tree (run it
// with -race), then checks the data and the page accounting.
func TestCheckpointsUnderConcurrentCommits(t *testing.T) {
	db := openBigJournal(t)
	defer db.Close()
	ctx := context.Background()
	model := map[string]string{}
	done := make(chan struct{})
	var werr error
	go func() {
		defer close(done)
		for round := 0; round < 60 && werr == nil; round++ {
			werr = rewrite(db, model, round, round%11, 11, 2000)
		}
	}()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		if err := db.Checkpoint(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if werr != nil {
		t.Fatal(werr)
	}
	for i := 0; i < 3; i++ {
		if err := db.Checkpoint(ctx); err != nil {
			t.Fatal(err)
		}
	}
	checkModel(t, db, "t", model)
	checkPageAccounting(t, db)
}

// openBigJournal opens an in-memory database whose journal holds every
// test's commits, so that only the tests' own checkpoints run.
func openBigJournal(t *testing.T) *DB {
	mem := vfs.NewMem()
	opts := memOpts(mem)
	opts.JournalSize = 16 << 20
	return mustOpen(t, mem, opts)
}

// rewrite commits, in one transaction on tree "t", the keys from, from+step,
// ... below n with values naming round, and records them in model.
func rewrite(db *DB, model map[string]string, round, from, step, n int) error {
	return db.Update(context.Background(), func(tx *Tx) error {
		tr, err := tx.CreateTreeIfNotExists("t")
		if err != nil {
			return err
		}
		for i := from; i < n; i += step {
			k, v := fmt.Sprintf("k%05d", i), fmt.Sprintf("v%d-%d", round, i)
			if err := tr.Put([]byte(k), []byte(v)); err != nil {
				return err
			}
			model[k] = v
		}
		return nil
	})
}

func checkModel(t *testing.T, db *DB, tree string, model map[string]string) {
	t.Helper()
	err := db.View(func(tx *Tx) error {
		tr, err := tx.Tree(tree)
		if err != nil {
			return err
		}
		if got := tr.Len(); got != int64(len(model)) {
			return fmt.Errorf("tree has %d keys, want %d", got, len(model))
		}
		for k, v := range model {
			got, err := tr.Get([]byte(k))
			if err != nil {
				return err
			}
			if string(got) != v {
				return fmt.Errorf("%s = %q, want %q", k, got, v)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkPageAccounting asserts that every page of the data file after the
// two meta pages is exactly one of: referenced by the last checkpoint,
// free, or freed and waiting for a checkpoint or for readers (a page in
// none of them leaked; a page in two is freed twice or freed while in use).
func checkPageAccounting(t *testing.T, db *DB) {
	t.Helper()
	db.ckptMu.Lock()
	defer db.ckptMu.Unlock()
	seen, err := checkPages(context.Background(), &pager{f: db.pager.f, pageSize: db.pageSize})
	if err != nil {
		t.Fatal(err)
	}
	owner := map[uint64]string{}
	add := func(p uint64, what string) {
		if o, ok := owner[p]; ok {
			t.Errorf("page %d is %s and %s", p, o, what)
		}
		owner[p] = what
	}
	for p := range seen {
		add(p, "in the checkpoint")
	}
	for _, p := range db.alloc.free {
		add(p, "free")
	}
	addExtents := func(pages []extent, what string) {
		for _, e := range pages {
			for i := uint64(0); i < uint64(e.npages); i++ {
				add(e.pgid+i, what)
			}
		}
	}
	db.freeMu.Lock()
	for _, f := range db.pendingFree {
		addExtents(f.pages, "pending free")
	}
	db.freeMu.Unlock()
	for _, f := range db.freedAt {
		addExtents(f.pages, "freed")
	}
	for p := uint64(2); p < db.alloc.end; p++ {
		if _, ok := owner[p]; !ok {
			t.Errorf("page %d leaked (neither in the checkpoint nor free)", p)
		}
	}
}
