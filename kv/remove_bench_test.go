package kv

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// BenchmarkRemoveHalf reproduces kvbench's removals row: a tree filled by
// random puts in one transaction (KV_SHAPE_N keys, default 200,000), then
// the first half of the keys in insertion order (random key order) deleted
// in one durable transaction, by Delete or by Discard. Each op builds a
// fresh database untimed and times the deleting transaction, commit
// included; cpu-ns/op is the process's CPU time in it.
func BenchmarkRemoveHalf(b *testing.B) {
	b.Run("delete", func(b *testing.B) { removeHalf(b, false) })
	b.Run("discard", func(b *testing.B) { removeHalf(b, true) })
}

func removeHalf(b *testing.B, discard bool) {
	rng := rand.New(rand.NewPCG(21, 22))
	keys := make([][]byte, shapeN)
	vals := make([][]byte, shapeN)
	for i := range keys {
		keys[i], vals[i] = benchKV(rng)
	}
	ctx := context.Background()
	b.ReportAllocs()
	var cpu int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, err := Open(filepath.Join(b.TempDir(), "db"), &Options{CheckpointInterval: -1, CacheSize: 4 << 30})
		if err != nil {
			b.Fatal(err)
		}
		err = fillTree(ctx, db, "t", keys, vals)
		if err != nil {
			b.Fatal(err)
		}
		c0 := processCPU()
		b.StartTimer()
		err = db.Update(ctx, func(tx *Tx) error {
			tr, err := tx.Tree("t")
			if err != nil {
				return err
			}
			for _, k := range keys[:len(keys)/2] {
				if discard {
					if err := tr.Discard(k); err != nil {
						return err
					}
					continue
				}
				found, err := tr.Delete(k)
				if err != nil {
					return err
				}
				if !found {
					b.Fatalf("key %x not found", k)
				}
			}
			return nil
		})
		b.StopTimer()
		cpu += int64(processCPU() - c0)
		if err != nil {
			b.Fatal(err)
		}
		if err := db.View(func(tx *Tx) error {
			tr, err := tx.Tree("t")
			if err == nil && tr.Len() != int64(len(keys)-len(keys)/2) {
				b.Fatalf("%d keys left, want %d", tr.Len(), len(keys)-len(keys)/2)
			}
			return err
		}); err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}
