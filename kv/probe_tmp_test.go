package kv

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

func TestProbeCompact(t *testing.T) {
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
	var keys [][]byte
	db.Update(ctx, func(tx *Tx) error {
		tr, _ := tx.CreateTree("b")
		for i := 0; i < 100000; i++ {
			k, v := benchKV(rng)
			keys = append(keys, k)
			tr.Put(k, v)
		}
		return nil
	})
	db.Update(ctx, func(tx *Tx) error {
		tr, _ := tx.Tree("b")
		for _, k := range keys[:50000] {
			tr.Delete(k)
		}
		return nil
	})
	st := db.Stats()
	t.Logf("before: file %d pages %d free %d pending %d", st.DataFileBytes, st.FilePages, st.FreePages, st.PendingFreePages)
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	st = db.Stats()
	t.Logf("after: file %d pages %d free %d pending %d trees %+v", st.DataFileBytes, st.FilePages, st.FreePages, st.PendingFreePages, st.Trees)
	db.Close()
}
