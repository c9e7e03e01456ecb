package kv

import (
	"bytes"
	"context"
	"fmt"
	"testing"
)

// BenchmarkAppendCommit: one transaction per op appending one entry (a key
// after every key) to a tree of 200,000 entries, as the oplog does on every
// write: 8-byte increasing keys, values of 100 bytes (an index on an
// increasing value) and of 1,200 bytes (an oplog entry of a 1 KB document).
// NoSync, so that the figure is the CPU of the put and the commit.
//
//	go test ./kv -run '^$' -bench BenchmarkAppendCommit -benchtime 50000x
func BenchmarkAppendCommit(b *testing.B) {
	for _, vs := range []int{100, 1200} {
		b.Run(fmt.Sprintf("value=%d", vs), func(b *testing.B) {
			const preload = 200000
			db, err := Open(b.TempDir(), &Options{Durability: NoSync, CheckpointInterval: -1})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			ctx := context.Background()
			v := bytes.Repeat([]byte{'v'}, vs)
			i := 0
			if err := db.Update(ctx, func(tx *Tx) error {
				_, err := tx.BulkLoad("log", func() ([]byte, []byte, bool, error) {
					if i == preload {
						return nil, nil, false, nil
					}
					i++
					return seqKey(i - 1), v, true, nil
				}, 1)
				return err
			}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			clk := startCPU(b)
			for n := range b.N {
				if err := db.Update(ctx, func(tx *Tx) error {
					tr, err := tx.Tree("log")
					if err != nil {
						return err
					}
					return tr.Put(seqKey(preload+n), v)
				}); err != nil {
					b.Fatal(err)
				}
			}
			clk.stop(b)
		})
	}
}
