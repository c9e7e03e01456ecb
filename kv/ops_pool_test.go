package kv

import (
	"bytes"
	"context"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/cairndb/cairn/kv/internal/invariants"
	"github.com/cairndb/cairn/kv/vfs"
)

// A commit's journal payload and its compressed form are built in
// recycled buffers: a single-put commit allocates the arena's copy of the
// entry and the nodes it copies, not two or three more copies of the
// entry for its journal record.
func TestOpsBufferReused(t *testing.T) {
	if invariants.Enabled {
		t.Skip("the race detector makes sync.Pool drop buffers at random")
	}
	// Real files: the in-memory FS allocates on every write.
	db, err := Open(t.TempDir(), &Options{PageSize: 4096, JournalSize: 64 << 20, CheckpointInterval: -1, Durability: NoSync})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if err := db.Update(ctx, func(tx *Tx) error { _, err := tx.CreateTree("t"); return err }); err != nil {
		t.Fatal(err)
	}
	const size, n = 12000, 2000
	r := rand.New(rand.NewPCG(3, 4))
	v := make([]byte, size)
	put := func(i int) {
		for j := range v {
			v[j] = byte(r.Uint32())
		}
		if err := db.Update(ctx, func(tx *Tx) error {
			tr, err := tx.Tree("t")
			if err != nil {
				return err
			}
			return tr.Put(seqKey(i), v)
		}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 100 {
		put(i)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 100; i < 100+n; i++ {
		put(i)
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / n
	t.Logf("%d bytes allocated per commit of a %d-byte value", per, size)
	if per > 2*size {
		t.Fatalf("%d bytes allocated per commit of a %d-byte value, want at most %d", per, size, 2*size)
	}
}

// Transactions that commit, roll back, fail or grow past a chunk reuse
// the buffers without mixing their records: after a reopen (replaying the
// journal) the tree holds exactly the committed puts.
func TestOpsBufferReuseReplay(t *testing.T) {
	fs := vfs.NewMem()
	opts := &Options{FS: fs, PageSize: 4096, JournalSize: 16 << 20, CheckpointInterval: -1}
	db := mustOpen(t, fs, opts)
	ctx := context.Background()
	if err := db.Update(ctx, func(tx *Tx) error { _, err := tx.CreateTree("t"); return err }); err != nil {
		t.Fatal(err)
	}
	model := map[string][]byte{}
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 400 {
		tx, err := db.BeginWrite(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := tx.Tree("t")
		if err != nil {
			t.Fatal(err)
		}
		puts := map[string][]byte{}
		size := 1 + r.IntN(3000)
		if i%50 == 7 {
			size = 70 << 10 // a log past the pooled size
		}
		for j := range 1 + r.IntN(5) {
			k := seqKey(r.IntN(300))
			v := bytes.Repeat([]byte{byte(i), byte(j)}, size/2+1)
			if err := tr.Put(k, v); err != nil {
				t.Fatal(err)
			}
			puts[string(k)] = v
		}
		if i%3 == 0 {
			tx.Rollback()
			continue
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		for k, v := range puts {
			model[k] = v
		}
	}
	check := func(db *DB) {
		t.Helper()
		db.View(func(tx *Tx) error {
			tr, err := tx.Tree("t")
			if err != nil {
				t.Fatal(err)
			}
			if tr.Len() != int64(len(model)) {
				t.Fatalf("%d entries, want %d", tr.Len(), len(model))
			}
			for k, v := range model {
				got, err := tr.Get([]byte(k))
				if err != nil || !bytes.Equal(got, v) {
					t.Fatalf("key %x: %d bytes (%v), want %d", k, len(got), err, len(v))
				}
			}
			return nil
		})
	}
	check(db)
	// Reopen without a checkpoint: the journal records are replayed.
	fs.Crash(vfs.CrashOptions{})
	db.Close()
	db = mustOpen(t, fs, opts)
	defer db.Close()
	check(db)
}
