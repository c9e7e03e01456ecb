package kv

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// BenchmarkBatchWrites is kvbench's batch-write row at -scale 10: a tree
// of 500,000 random 24/150-byte entries put in one transaction, then one
// durable transaction of 1,000 random puts per op. The keys are generated
// before the timer starts (BenchmarkPutBatch1000 spends a fifth of its
// time in the random generator); cpu-ns/op is the process's CPU time.
func BenchmarkBatchWrites(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 500_000
	keys := make([][]byte, n)
	vals := make([][]byte, n)
	for i := range keys {
		keys[i], vals[i] = benchKV(rng)
	}
	db, err := Open(filepath.Join(b.TempDir(), "db"), &Options{CacheSize: 4 << 30})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if err := fillTree(ctx, db, "t", keys, vals); err != nil {
		b.Fatal(err)
	}
	bk := make([][]byte, 1000*b.N)
	bv := make([][]byte, 1000*b.N)
	for i := range bk {
		bk[i], bv[i] = benchKV(rng)
	}
	b.ReportAllocs()
	clk := startCPU(b)
	for i := 0; i < b.N; i++ {
		err := db.Update(ctx, func(tx *Tx) error {
			tr, _ := tx.Tree("t")
			for j := i * 1000; j < (i+1)*1000; j++ {
				if err := tr.Put(bk[j], bv[j]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	clk.stop(b)
}
