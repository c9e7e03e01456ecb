package kv

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/cairndb/cairn/kv/vfs"
)

// BenchmarkOrdinaryPutsCPU: write transactions of 100 random puts into a
// 200,000-key tree in memory, committed NoSync, with no concurrent
// transaction live; reports process CPU per transaction (cpu-ns/op),
// which a loaded machine disturbs less than wall time.
func BenchmarkOrdinaryPutsCPU(b *testing.B) {
	db, err := Open("/db", &Options{FS: vfs.NewMem(), Durability: NoSync, JournalSize: 64 << 20, CheckpointInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	if err := db.Update(ctx, func(tx *Tx) error {
		tr, err := tx.CreateTree("t")
		for i := 0; i < 200_000 && err == nil; i++ {
			k, v := benchKV(rng)
			err = tr.Put(k, v)
		}
		return err
	}); err != nil {
		b.Fatal(err)
	}
	db.Checkpoint(ctx)
	clk := startCPU(b)
	for i := 0; i < b.N; i++ {
		err := db.Update(ctx, func(tx *Tx) error {
			tr, _ := tx.Tree("t")
			for j := 0; j < 100; j++ {
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
	clk.stop(b)
}
