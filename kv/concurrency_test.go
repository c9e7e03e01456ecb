package kv

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairndb/cairn/kv/vfs"
)

// TestConcurrentSnapshots runs readers against a committing writer (run it
// with -race). The writer keeps the invariant that the values of all keys
// of tree "t" sum to zero and that key "gen" holds the txid; every reader
// must see the invariant hold within its snapshot, see a stable snapshot
// for its whole life, and never go backwards.
func TestConcurrentSnapshots(t *testing.T) {
	fs := vfs.NewMem()
	opts := memOpts(fs)
	opts.JournalSize = 512 << 10
	opts.CacheSize = 32 << 10 // force evictions under the readers
	db := mustOpen(t, fs, opts)
	defer db.Close()
	ctx := context.Background()
	const nkeys = 2000
	enc := func(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
	dec := func(b []byte) int64 { return int64(binary.BigEndian.Uint64(b)) }
	if err := db.Update(ctx, func(tx *Tx) error {
		tr, err := tx.CreateTree("t")
		if err != nil {
			return err
		}
		for i := 0; i < nkeys; i++ {
			if err := tr.Put(key(i), enc(0)); err != nil {
				return err
			}
		}
		return tr.Put([]byte("gen"), enc(0))
	}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := int64(-1)
			for !stop.Load() {
				err := db.View(func(tx *Tx) error {
					tr, err := tx.Tree("t")
					if err != nil {
						return err
					}
					g, _ := tr.Get([]byte("gen"))
					gen := dec(g)
					if gen < last {
						return fmt.Errorf("snapshot went backwards: %d after %d", gen, last)
					}
					last = gen
					for pass := 0; pass < 2; pass++ {
						var sum int64
						n := 0
						c := tr.Cursor()
						for k, v := c.First(); k != nil; k, v = c.Next() {
							if string(k) != "gen" {
								sum += dec(v)
								n++
							}
						}
						if c.Err() != nil {
							return c.Err()
						}
						if sum != 0 || n != nkeys {
							return fmt.Errorf("gen %d: sum %d over %d keys", gen, sum, n)
						}
						if g2, _ := tr.Get([]byte("gen")); dec(g2) != gen {
							return fmt.Errorf("snapshot changed under reader: %d -> %d", gen, dec(g2))
						}
					}
					return nil
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var commits int
	// At least two checkpoints (so that leaves become clean and evictable)
	// even when a loaded machine commits slowly.
	for gen := int64(1); time.Now().Before(deadline) || gen <= 400; gen++ {
		err := db.Update(ctx, func(tx *Tx) error {
			tr, _ := tx.Tree("t")
			a, b := int(gen*7)%nkeys, int(gen*13+1)%nkeys
			if a == b {
				b = (b + 1) % nkeys
			}
			va, _ := tr.Get(key(a))
			vb, _ := tr.Get(key(b))
			if err := tr.Put(key(a), enc(dec(va)+gen)); err != nil {
				return err
			}
			if err := tr.Put(key(b), enc(dec(vb)-gen)); err != nil {
				return err
			}
			return tr.Put([]byte("gen"), enc(gen))
		})
		if err != nil {
			t.Fatal(err)
		}
		commits++
		if gen%40 == 0 {
			if err := db.Checkpoint(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := db.Stats()
	t.Logf("%d commits; cache %d bytes in %d leaves, %d evictions", commits, st.CacheBytes, st.CacheLeaves, st.CacheEvictions)
	if st.CacheEvictions == 0 {
		t.Fatal("the tiny cache never evicted")
	}
}

// TestGroupCommit checks that concurrent Sync committers share fsyncs.
func TestGroupCommit(t *testing.T) {
	fs := vfs.NewMem()
	fault := vfs.NewFault(fs)
	// Make fsync slow enough that committers pile up behind it.
	fault.SetSyncError(func(string) error { time.Sleep(5 * time.Millisecond); return nil })
	opts := memOpts(fault)
	opts.JournalSize = 4 << 20
	db := mustOpen(t, fault, opts)
	defer db.Close()
	ctx := context.Background()
	if err := db.Update(ctx, func(tx *Tx) error { _, err := tx.CreateTree("t"); return err }); err != nil {
		t.Fatal(err)
	}
	before := db.Stats()
	const committers, each = 40, 10
	var wg sync.WaitGroup
	for c := 0; c < committers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				err := db.Update(ctx, func(tx *Tx) error {
					tr, _ := tx.Tree("t")
					return tr.Put([]byte(fmt.Sprintf("%d-%d", c, i)), []byte("v"))
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	st := db.Stats()
	syncs := st.JournalFsyncs - before.JournalFsyncs
	t.Logf("%d commits, %d fsyncs, largest group %d, histogram %v", committers*each, syncs, st.GroupCommitMax, st.GroupCommitHist)
	if syncs >= committers*each/4 {
		t.Fatalf("group commit ineffective: %d fsyncs for %d commits", syncs, committers*each)
	}
	if syncs > 0 && st.JournalFsyncTime <= before.JournalFsyncTime {
		t.Fatalf("%d fsyncs but the time spent in them did not grow (%v -> %v)", syncs, before.JournalFsyncTime, st.JournalFsyncTime)
	}
}

// TestFsyncFailure: an injected fdatasync error is returned by the commit,
// and every later write fails with ErrDatabaseFailed until reopen; the
// reopened database has everything acknowledged before.
func TestFsyncFailure(t *testing.T) {
	mem := vfs.NewMem()
	fault := vfs.NewFault(mem)
	db := mustOpen(t, fault, memOpts(fault))
	ctx := context.Background()
	put := func(k string) error {
		return db.Update(ctx, func(tx *Tx) error {
			tr, err := tx.CreateTreeIfNotExists("t")
			if err != nil {
				return err
			}
			return tr.Put([]byte(k), []byte("v"))
		})
	}
	if err := put("before"); err != nil {
		t.Fatal(err)
	}
	eio := errors.New("injected EIO")
	fault.SetSyncError(func(name string) error { return eio })
	err := put("failing")
	if !errors.Is(err, eio) || !errors.Is(err, ErrDatabaseFailed) {
		t.Fatalf("commit with failing fdatasync: %v", err)
	}
	fault.SetSyncError(nil) // even if the disk recovers, the DB stays failed
	if err := put("after"); !errors.Is(err, ErrDatabaseFailed) {
		t.Fatalf("write after failure: %v", err)
	}
	if err := db.Checkpoint(ctx); !errors.Is(err, ErrDatabaseFailed) {
		t.Fatalf("checkpoint after failure: %v", err)
	}
	if db.Stats().Failed == nil {
		t.Fatal("Stats does not report the failure")
	}
	// Reads keep working.
	if err := db.View(func(tx *Tx) error { _, err := tx.Tree("t"); return err }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	mem.Crash(vfs.CrashOptions{})
	db = mustOpen(t, fault, memOpts(fault))
	defer db.Close()
	db.View(func(tx *Tx) error {
		tr, err := tx.Tree("t")
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := tr.Get([]byte("before")); v == nil {
			t.Fatal("acknowledged commit lost")
		}
		if v, _ := tr.Get([]byte("after")); v != nil {
			t.Fatal("refused commit present")
		}
		return nil
	})
	if err := put("reopened"); err != nil {
		t.Fatalf("write after reopen: %v", err)
	}
}

// TestWriteErrors: short writes and ENOSPC fail the commit cleanly.
func TestWriteErrors(t *testing.T) {
	mem := vfs.NewMem()
	fault := vfs.NewFault(mem)
	db := mustOpen(t, fault, memOpts(fault))
	ctx := context.Background()
	if err := db.Update(ctx, func(tx *Tx) error { _, err := tx.CreateTree("t"); return err }); err != nil {
		t.Fatal(err)
	}
	fault.SetWriteHook(vfs.NoSpaceAfter(10))
	err := db.Update(ctx, func(tx *Tx) error {
		tr, _ := tx.Tree("t")
		return tr.Put([]byte("k"), []byte("value"))
	})
	if err == nil {
		t.Fatal("commit succeeded despite ENOSPC")
	}
	fault.SetWriteHook(nil)
	if err := db.Update(ctx, func(tx *Tx) error { return nil }); !errors.Is(err, ErrDatabaseFailed) {
		t.Fatalf("after ENOSPC: %v", err)
	}
	db.Close()
	mem.Crash(vfs.CrashOptions{KeepUnsynced: 1, Tear: true})
	db = mustOpen(t, fault, memOpts(fault))
	defer db.Close()
	if err := db.Check(ctx); err != nil {
		t.Fatal(err)
	}
	db.View(func(tx *Tx) error {
		tr, _ := tx.Tree("t")
		if v, _ := tr.Get([]byte("k")); v != nil {
			t.Fatal("failed commit visible after reopen")
		}
		return nil
	})
}

// TestLazyDurability: a Lazy commit returns before it is durable and is
// made durable by the flusher within CommitInterval.
func TestLazyDurability(t *testing.T) {
	mem := vfs.NewMem()
	opts := memOpts(mem)
	opts.Durability = Lazy
	opts.CommitInterval = 5 * time.Millisecond
	db := mustOpen(t, mem, opts)
	ctx := context.Background()
	if err := db.Update(ctx, func(tx *Tx) error {
		tr, err := tx.CreateTree("t")
		if err != nil {
			return err
		}
		return tr.Put([]byte("k"), []byte("v"))
	}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for db.Stats().JournalFsyncs == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if db.Stats().JournalFsyncs == 0 {
		t.Fatal("lazy commit never flushed")
	}
	mem.Crash(vfs.CrashOptions{})
	db.Close()
	db = mustOpen(t, mem, opts)
	defer db.Close()
	db.View(func(tx *Tx) error {
		tr, err := tx.Tree("t")
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := tr.Get([]byte("k")); string(v) != "v" {
			t.Fatalf("lazy commit lost after its flush: %q", v)
		}
		return nil
	})
}
