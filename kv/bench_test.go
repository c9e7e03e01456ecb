package kv

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// Benchmarks use the real file system (a temporary directory) and the
// shapes of the project benchmark: 24-byte random keys, 150-byte values.

const benchN = 200_000

func benchKV(rng *rand.Rand) ([]byte, []byte) {
	k := make([]byte, 24)
	v := make([]byte, 150)
	for i := range k {
		k[i] = byte(rng.Uint32())
	}
	for i := range v {
		v[i] = byte(rng.Uint32())
	}
	return k, v
}

func sortedBenchData(n int) ([][]byte, [][]byte) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := make(map[string][]byte, n)
	for len(m) < n {
		k, v := benchKV(rng)
		m[string(k)] = v
	}
	keys := make([][]byte, 0, n)
	for k := range m {
		keys = append(keys, []byte(k))
	}
	sortBytes(keys)
	vals := make([][]byte, n)
	for i, k := range keys {
		vals[i] = m[string(k)]
	}
	return keys, vals
}

func sortBytes(keys [][]byte) {
	// simple radix-free sort via the standard library
	sortSlice(keys)
}

func openBenchDB(b *testing.B) *DB {
	b.Helper()
	db, err := Open(filepath.Join(b.TempDir(), "db"), &Options{CheckpointInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

func bulkLoad(b *testing.B, db *DB, name string, keys, vals [][]byte) {
	b.Helper()
	tx, err := db.BeginWrite(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	_, err = tx.BulkLoad(name, func() ([]byte, []byte, bool, error) {
		if i == len(keys) {
			return nil, nil, false, nil
		}
		i++
		return keys[i-1], vals[i-1], true, nil
	}, 0)
	if err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkBulkLoad(b *testing.B) {
	keys, vals := sortedBenchData(benchN)
	db := openBenchDB(b)
	b.SetBytes(int64(benchN * 174))
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		bulkLoad(b, db, "t"+string(rune('a'+n%26))+string(rune('a'+n/26%26))+string(rune('a'+n/676)), keys, vals)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchN), "ns/key")
}

var benchCache struct {
	name string
	db   *DB
	keys [][]byte
}

// loadedDB returns a database with benchN bulk-loaded entries, shared by
// the rounds of one benchmark, and its keys in random order.
func loadedDB(b *testing.B) (*DB, [][]byte) {
	if benchCache.name == b.Name() {
		return benchCache.db, benchCache.keys
	}
	if benchCache.db != nil {
		benchCache.db.Close()
		os.RemoveAll(benchCache.db.dir)
	}
	keys, vals := sortedBenchData(benchN)
	dir := benchTempDir(b, "kvbench")
	db, err := Open(filepath.Join(dir, "db"), &Options{CheckpointInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	bulkLoad(b, db, "t", keys, vals)
	perm := rand.New(rand.NewPCG(3, 4)).Perm(len(keys))
	shuffled := make([][]byte, len(keys))
	for i, p := range perm {
		shuffled[i] = keys[p]
	}
	benchCache.name, benchCache.db, benchCache.keys = b.Name(), db, shuffled
	return db, shuffled
}

func BenchmarkGet(b *testing.B) {
	db, keys := loadedDB(b)
	serialGets(b, db, keys, b.ResetTimer)
}

// serialGets reads b.N keys in one read transaction; start is called
// just before the first read (to start the timer or a CPU clock).
func serialGets(b *testing.B, db *DB, keys [][]byte, start func()) {
	tx, _ := db.BeginRead()
	defer tx.Rollback()
	tr, _ := tx.Tree("t")
	b.ReportAllocs()
	start()
	for i := 0; i < b.N; i++ {
		if v, err := tr.Get(keys[i%len(keys)]); v == nil || err != nil {
			b.Fatal("missing", err)
		}
	}
}

func BenchmarkGetParallel(b *testing.B) {
	db, keys := loadedDB(b)
	b.ReportAllocs()
	b.ResetTimer()
	parallelGets(b, db, keys)
}

// parallelGets reads keys from every goroutine of b.RunParallel, each in
// its own read transaction, each starting at a different key.
func parallelGets(b *testing.B, db *DB, keys [][]byte) {
	var seq atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		tx, _ := db.BeginRead()
		defer tx.Rollback()
		tr, _ := tx.Tree("t")
		i := int(seq.Add(1)) * 7919
		for pb.Next() {
			if v, _ := tr.Get(keys[i%len(keys)]); v == nil {
				b.Fatal("missing")
			}
			i++
		}
	})
}

func BenchmarkCursorRange10(b *testing.B) {
	db, keys := loadedDB(b)
	tx, _ := db.BeginRead()
	defer tx.Rollback()
	tr, _ := tx.Tree("t")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := tr.Cursor()
		n := 0
		for k, _ := c.Seek(keys[i%len(keys)]); k != nil && n < 10; k, _ = c.Next() {
			n++
		}
	}
}

func BenchmarkCursorFullScan(b *testing.B) {
	db, _ := loadedDB(b)
	tx, _ := db.BeginRead()
	defer tx.Rollback()
	tr, _ := tx.Tree("t")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := tr.Cursor()
		n := 0
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			n++
		}
		if n != benchN {
			b.Fatal(n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchN), "ns/key")
}

// BenchmarkPutCommitSync: one durable single-insert transaction per op.
func BenchmarkPutCommitSync(b *testing.B) {
	db, _ := loadedDB(b)
	rng := rand.New(rand.NewPCG(5, 6))
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k, v := benchKV(rng)
		err := db.Update(ctx, func(tx *Tx) error {
			tr, _ := tx.Tree("t")
			return tr.Put(k, v)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareFdatasync is the physical floor for BenchmarkPutCommitSync.
func BenchmarkBareFdatasync(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "f"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	f.WriteAt(make([]byte, 1<<20), 0)
	f.Sync()
	clk := startCPU(b)
	for i := 0; i < b.N; i++ {
		f.WriteAt(buf[:200], int64(i*200%(1<<20-200)))
		if err := datasyncFile(f); err != nil {
			b.Fatal(err)
		}
	}
	clk.stop(b)
}

// BenchmarkPutBatch1000: 1000 random inserts per durable transaction.
func BenchmarkPutBatch1000(b *testing.B) {
	db, _ := loadedDB(b)
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

// BenchmarkPutRandomOneTx: 100,000 random inserts in one durable
// transaction (the shape of the project benchmark's "bulk load" row).
func BenchmarkPutRandomOneTx(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	const n = 100_000
	keys := make([][]byte, n)
	vals := make([][]byte, n)
	for i := range keys {
		keys[i], vals[i] = benchKV(rng)
	}
	db := openBenchDB(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		err := fillTree(ctx, db, fmt.Sprintf("t%d", i), keys, vals)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/key")
}

// fillTree creates the tree name and puts keys[j] = vals[j] into it in one
// transaction (the load of the batch-write and removal benchmarks).
func fillTree(ctx context.Context, db *DB, name string, keys, vals [][]byte) error {
	return db.Update(ctx, func(tx *Tx) error {
		tr, err := tx.CreateTree(name)
		if err != nil {
			return err
		}
		for j := range keys {
			if err := tr.Put(keys[j], vals[j]); err != nil {
				return err
			}
		}
		return nil
	})
}
