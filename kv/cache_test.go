package kv

import (
	"context"
	"runtime"
	"testing"

	"github.com/cairndb/cairn/kv/vfs"
)

// TestCacheForgetsReplacedLeaves rewrites the same keys over many
// checkpoints with a cache far larger than the data: the cache must hold
// about one version of each leaf, not every version ever written (a
// replaced leaf's entry would pin the old node, and the page slab it was
// decoded from, until the budget forced an eviction).
func TestCacheForgetsReplacedLeaves(t *testing.T) {
	opts := memOpts(vfs.NewMem())
	opts.CacheSize = 1 << 30
	db := mustOpen(t, opts.FS, opts)
	defer db.Close()
	ctx := context.Background()
	const n = 4000
	put := func(round int) {
		t.Helper()
		err := db.Update(ctx, func(tx *Tx) error {
			tr, err := tx.CreateTreeIfNotExists("t")
			if err != nil {
				return err
			}
			for i := 0; i < n; i++ {
				if err := tr.Put(key(i), val(i+round)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Checkpoint(ctx); err != nil {
			t.Fatal(err)
		}
	}
	put(0)
	put(1)
	base := db.Stats()
	for round := 2; round < 40; round++ {
		put(round)
	}
	st := db.Stats()
	t.Logf("after 2 checkpoints: %d bytes in %d leaves; after 40: %d bytes in %d leaves, data file %d bytes",
		base.CacheBytes, base.CacheLeaves, st.CacheBytes, st.CacheLeaves, st.DataFileBytes)
	if st.CacheLeaves > 2*base.CacheLeaves || st.CacheBytes > 2*base.CacheBytes {
		t.Errorf("cache grew from %d leaves (%d bytes) to %d leaves (%d bytes) rewriting the same %d keys",
			base.CacheLeaves, base.CacheBytes, st.CacheLeaves, st.CacheBytes, n)
	}
}

// TestCheckpointSlabsAreNotPinned appends a few keys per checkpoint, so
// each checkpoint leaves a leaf that never changes again: the leaves must
// not keep the checkpoints' 8 MiB write slabs allocated (they did when a
// written node was re-decoded in place from its slab).
func TestCheckpointSlabsAreNotPinned(t *testing.T) {
	opts := memOpts(vfs.NewMem())
	opts.CacheSize = 1 << 30
	db := mustOpen(t, opts.FS, opts)
	defer db.Close()
	ctx := context.Background()
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	next := 0
	round := func() {
		t.Helper()
		err := db.Update(ctx, func(tx *Tx) error {
			tr, err := tx.CreateTreeIfNotExists("t")
			if err != nil {
				return err
			}
			for range 100 {
				if err := tr.Put(key(next), val(next)); err != nil {
					return err
				}
				next++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Checkpoint(ctx); err != nil {
			t.Fatal(err)
		}
	}
	round()
	before := heap()
	const rounds = 40
	for range rounds {
		round()
	}
	after := heap()
	st := db.Stats()
	t.Logf("heap %d KiB -> %d KiB after %d appending checkpoints; data file %d KiB, cache %d KiB",
		before>>10, after>>10, rounds, st.DataFileBytes>>10, st.CacheBytes>>10)
	if after > before+32<<20 {
		t.Errorf("heap grew by %d MiB over %d checkpoints that wrote %d KiB of data", (after-before)>>20, rounds, st.DataFileBytes>>10)
	}
}
