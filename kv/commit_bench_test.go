package kv

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cairndb/cairn/kv/vfs"
)

// BenchmarkCommitManyWriters: many goroutines committing small Lazy
// (j: false) transactions at once, as 1,000 connections writing do. Each
// commit takes the writer lock briefly and appends its journal record
// after releasing it, in turn; the cost per commit must not grow with the
// number of committers waiting for their turn.
func BenchmarkCommitManyWriters(b *testing.B) {
	for _, writers := range []int{8, 100, 1000} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			db, err := Open("/db", &Options{FS: vfs.NewMem(), Durability: Lazy, JournalSize: 64 << 20, CheckpointInterval: -1})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			ctx := context.Background()
			if err := db.Update(ctx, func(tx *Tx) error { _, err := tx.CreateTree("t"); return err }); err != nil {
				b.Fatal(err)
			}
			var next atomic.Int64
			val := make([]byte, 200)
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := 0; w < writers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := next.Add(1)
						if i > int64(b.N) {
							return
						}
						err := db.Update(ctx, func(tx *Tx) error {
							t, err := tx.Tree("t")
							if err != nil {
								return err
							}
							return t.Put(key(int(i%100000)), val)
						})
						if err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}
