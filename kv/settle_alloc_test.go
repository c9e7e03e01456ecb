package kv

import (
	"context"
	"runtime"
	"testing"

	"github.com/cairndb/cairn/kv/vfs"
)

// TestSmallSettleAllocatesLittle: a transaction that empties a tree and
// puts a couple of keys back (a session's retryable-write history, renewed
// at every txnNumber) settles its deferred puts into leaves sized to them.
// The builder used to carve them from a 1 MiB chunk and 16 Ki-entry
// offset arrays: 1.2 MB allocated per commit.
func TestSmallSettleAllocatesLittle(t *testing.T) {
	db := mustOpen(t, vfs.NewMem(), &Options{Durability: NoSync})
	round := func(i int) {
		err := db.Update(context.Background(), func(tx *Tx) error {
			tr, err := tx.CreateTreeIfNotExists("h")
			if err != nil {
				return err
			}
			if _, err := tr.DeleteRange(nil, nil); err != nil {
				return err
			}
			if err := tr.Put([]byte{byte(i), 1}, []byte("header")); err != nil {
				return err
			}
			return tr.Put([]byte{byte(i), 2}, []byte("statement result"))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	round(0)
	const n = 50
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 1; i <= n; i++ {
		round(i)
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 64<<10 {
		t.Fatalf("a two-put commit into an emptied tree allocates %d bytes, want at most 64 KiB", per)
	}
}
