package kv

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"testing"
	"time"
)

func TestProbeDel(t *testing.T) {
	if os.Getenv("KV_PROBE") == "" {
		t.Skip()
	}
	dir := t.TempDir()
	db, err := Open(filepath.Join(dir, "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	ctx := context.Background()
	tx, _ := db.BeginWrite(ctx)
	tr, _ := tx.CreateTree("b")
	var keys [][]byte
	for i := 0; i < 1000000; i++ {
		k, v := benchKV(rng)
		keys = append(keys, k)
		tr.Put(k, v)
	}
	tx.Commit()
	f, _ := os.Create("/tmp/cpu.del")
	pprof.StartCPUProfile(f)
	t0 := time.Now()
	db.Update(ctx, func(tx *Tx) error {
		tr, _ := tx.Tree("b")
		for _, k := range keys[:500000] {
			tr.Delete(k)
		}
		return nil
	})
	pprof.StopCPUProfile()
	t.Logf("deletes %v", time.Since(t0))
	db.Close()
}
