package kv

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairndb/cairn/kv/vfs"
)

// BenchmarkConcurrentTx: goroutines each running transactions of 4
// read-modify-write updates, committed NoSync (engine cost, not fsync),
// retrying on conflicts: through concurrent transactions and through
// BeginWrite (serial), on disjoint keys (each goroutine its own 10,000) and
// overlapping ones (64 hot keys shared by all). ns/op is per committed
// transaction; conflicts/op counts the refused writes per commit. The
// think=100µs cases wait 100 µs after each update inside the transaction,
// as a client's round trips do: there a BeginWrite transaction holds the
// writer lock while it waits, and concurrent ones overlap.
func BenchmarkConcurrentTx(b *testing.B) {
	for _, think := range []time.Duration{0, 100 * time.Microsecond} {
		for _, keys := range []string{"disjoint", "overlapping"} {
			for _, mode := range []string{"concurrent", "beginwrite"} {
				for _, workers := range []int{1, 8} {
					if think > 0 && workers == 1 {
						continue
					}
					name := fmt.Sprintf("%s/%s/workers=%d", keys, mode, workers)
					if think > 0 {
						name += "/think=100µs"
					}
					b.Run(name, func(b *testing.B) {
						benchConcurrentTx(b, keys == "overlapping", mode == "concurrent", workers, think)
					})
				}
			}
		}
	}
}

func benchConcurrentTx(b *testing.B, overlap, conc bool, workers int, think time.Duration) {
	db, err := Open("/db", &Options{FS: vfs.NewMem(), Durability: NoSync, JournalSize: 64 << 20, CheckpointInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	const perWorker = 10000
	if err := db.Update(ctx, func(tx *Tx) error {
		tr, err := tx.CreateTree("t")
		for i := 0; i < workers*perWorker && err == nil; i++ {
			err = tr.Put(be64(uint64(i)), be64(0))
		}
		return err
	}); err != nil {
		b.Fatal(err)
	}
	begin := func() (*Tx, error) { return db.BeginConcurrent(ctx) }
	if !conc {
		begin = func() (*Tx, error) { return db.BeginWrite(ctx) }
	}
	var next, conflicts atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			var ks [4][]byte
			for next.Add(1) <= int64(b.N) {
				for j := range ks {
					if overlap {
						ks[j] = be64(uint64(rng.IntN(64)))
					} else {
						ks[j] = be64(uint64(w*perWorker + rng.IntN(perWorker)))
					}
				}
				for {
					err := updateKeys(begin, ks[:], think)
					if err == nil {
						break
					}
					var wce *WriteConflictError
					if !errors.As(err, &wce) {
						b.Error(err)
						return
					}
					conflicts.Add(1)
					wce.Wait(ctx)
				}
			}
		}(w)
	}
	wg.Wait()
	b.ReportMetric(float64(conflicts.Load())/float64(b.N), "conflicts/op")
}

// updateKeys increments keys in one transaction.
func updateKeys(begin func() (*Tx, error), keys [][]byte, think time.Duration) error {
	tx, err := begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	tr, err := tx.Tree("t")
	if err != nil {
		return err
	}
	for _, k := range keys {
		v, err := tr.Get(k)
		if err != nil {
			return err
		}
		if err := tr.Put(k, be64(u64(v)+1)); err != nil {
			return err
		}
		if think > 0 {
			time.Sleep(think)
		}
	}
	return tx.Commit()
}

// BenchmarkPutBatch1000LiveConcurrent is BenchmarkPutBatch1000 while a
// concurrent transaction is live: what ordinary writers pay for the
// ownership checks and the commit log then.
func BenchmarkPutBatch1000LiveConcurrent(b *testing.B) {
	db, _ := loadedDB(b)
	live, err := db.BeginConcurrent(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer live.Rollback()
	if err := func() error { tr, _ := live.Tree("t"); return tr.Put([]byte("owned"), nil) }(); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		err := db.Update(ctx, func(tx *Tx) error {
			tr, _ := tx.Tree("t")
			for j := 0; j < 1000; j++ {
				k, v := benchKV(rng)
				if err := tr.Put(k, v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
