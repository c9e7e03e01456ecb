package kv

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// cpuClock reports the CPU time (user+system, all threads) the process
// spends during a benchmark as cpu-ns/op: on a shared machine it is far
// steadier than the wall time, which includes the time other processes
// hold the cores. (Under -race or -tags invariants the engine's
// self-checks run too and are measured with the rest: benchmark without
// them.)
type cpuClock struct {
	start time.Duration
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU(b *testing.B) cpuClock {
	var c cpuClock
	b.ResetTimer()
	c.start = processCPU()
	return c
}

func (c cpuClock) stop(b *testing.B) {
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-c.start)/float64(b.N), "cpu-ns/op")
}

// The "shape" benchmarks reproduce the state in which bench/cmd/kvbench
// reads: a tree filled by Puts in one transaction (committed through a
// checkpoint, so every leaf is full and packed), then a few batches of
// random inserts committed through the journal (so that leaves have
// been split and rewritten since, and are unpacked) and no checkpoint.
// KV_SHAPE_KVBENCH=1 makes the batches kvbench's (100 of 1,000 inserts:
// at 5,000,000 keys most leaves are then unpacked); KV_SHAPE_CHECKPOINT=1
// checkpoints after them (every leaf packed again).

const (
	shapeBatches = 4
	shapeBatch   = 1_100
)

// shapeN is the number of keys of the first transaction: 200,000 (kvbench
// -scale 25), or KV_SHAPE_N (5000000 is kvbench's full scale).
var shapeN = func() int {
	if n, err := strconv.Atoi(os.Getenv("KV_SHAPE_N")); err == nil && n > 0 {
		return n
	}
	return 200_000
}()

var shapeCache struct {
	db   *DB
	keys [][]byte // the keys of the first transaction, in insertion order
	rng  *rand.Rand
}

// shapeDB returns the shared kvbench-shaped database.
func shapeDB(b *testing.B) (*DB, [][]byte) {
	if shapeCache.db != nil {
		return shapeCache.db, shapeCache.keys
	}
	dir := benchTempDir(b, "kvshape")
	db, err := Open(filepath.Join(dir, "db"), &Options{CheckpointInterval: -1, CacheSize: 4 << 30})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	keys := make([][]byte, shapeN)
	ctx := context.Background()
	err = db.Update(ctx, func(tx *Tx) error {
		tr, err := tx.CreateTree("t")
		if err != nil {
			return err
		}
		for i := range keys {
			k, v := benchKV(rng)
			keys[i] = k
			if err := tr.Put(k, v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	batches, batch := shapeBatches, shapeBatch
	if os.Getenv("KV_SHAPE_KVBENCH") != "" {
		batches, batch = 100, 1000 // kvbench's batch writes
	}
	for range batches {
		if err := shapeInsert(db, rng, batch); err != nil {
			b.Fatal(err)
		}
	}
	if os.Getenv("KV_SHAPE_CHECKPOINT") != "" {
		if err := db.Checkpoint(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	shapeCache.db, shapeCache.keys, shapeCache.rng = db, keys, rng
	return db, keys
}

func shapeInsert(db *DB, rng *rand.Rand, n int) error {
	return db.Update(context.Background(), func(tx *Tx) error {
		tr, err := tx.Tree("t")
		if err != nil {
			return err
		}
		for range n {
			k, v := benchKV(rng)
			if err := tr.Put(k, v); err != nil {
				return err
			}
		}
		return nil
	})
}

func BenchmarkShapeGet(b *testing.B) {
	db, keys := shapeDB(b)
	var clk cpuClock
	serialGets(b, db, keys, func() { clk = startCPU(b) })
	clk.stop(b)
}

func BenchmarkShapeGetParallel(b *testing.B) {
	db, keys := shapeDB(b)
	clk := startCPU(b)
	defer clk.stop(b)
	parallelGets(b, db, keys)
}

func BenchmarkShapeRange10(b *testing.B) {
	db, keys := shapeDB(b)
	tx, _ := db.BeginRead()
	defer tx.Rollback()
	tr, _ := tx.Tree("t")
	c := tr.Cursor()
	clk := startCPU(b)
	for i := 0; i < b.N; i++ {
		n := 0
		for k, _ := c.Seek(keys[i%len(keys)]); k != nil && n < 10; k, _ = c.Next() {
			n++
		}
	}
	clk.stop(b)
}

// BenchmarkShapeBatch1000: one durable transaction of 1,000 random inserts
// per op, continuing from the shaped state.
func BenchmarkShapeBatch1000(b *testing.B) { shapeInserts(b, 1000) }

// BenchmarkShapeCommit1: one durable transaction of one random insert per
// op (kvbench's individual writes), continuing from the shaped state.
func BenchmarkShapeCommit1(b *testing.B) { shapeInserts(b, 1) }

// shapeInserts runs one durable transaction of n random inserts per op,
// continuing from the shaped state.
func shapeInserts(b *testing.B, n int) {
	db, _ := shapeDB(b)
	b.ReportAllocs()
	clk := startCPU(b)
	for i := 0; i < b.N; i++ {
		if err := shapeInsert(db, shapeCache.rng, n); err != nil {
			b.Fatal(err)
		}
	}
	clk.stop(b)
}

// BenchmarkGetSharedPrefix reads keys that share a prefix longer than the
// 8 search bytes of a node (the shape of YCSB's "user…" keys behind a
// collection prefix): without stripping the common prefix, every step of
// the binary search ties on the 8 bytes and compares whole keys.
func BenchmarkGetSharedPrefix(b *testing.B) {
	db, keys := sharedPrefixDB(b)
	var clk cpuClock
	serialGets(b, db, keys, func() { clk = startCPU(b) })
	clk.stop(b)
}

var sharedPrefixCache struct {
	db   *DB
	keys [][]byte
}

func sharedPrefixDB(b *testing.B) (*DB, [][]byte) {
	if sharedPrefixCache.db != nil {
		return sharedPrefixCache.db, sharedPrefixCache.keys
	}
	dir := benchTempDir(b, "kvprefix")
	db, err := Open(filepath.Join(dir, "db"), &Options{CheckpointInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(13, 14))
	keys := make([][]byte, benchN)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "coll\x00\x02user%019d", rng.Uint64()>>1)
	}
	err = db.Update(context.Background(), func(tx *Tx) error {
		tr, err := tx.CreateTree("t")
		if err != nil {
			return err
		}
		v := make([]byte, 100)
		for _, k := range keys {
			if err := tr.Put(k, v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	sharedPrefixCache.db, sharedPrefixCache.keys = db, keys
	return db, keys
}

// BenchmarkShapeLoad: kvbench's bulk load, shapeN random 24-byte keys with
// 150-byte values put into a fresh tree in one durable transaction.
func BenchmarkShapeLoad(b *testing.B) {
	ctx := context.Background()
	var k [24]byte
	var v [150]byte
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := b.TempDir()
		db, err := Open(filepath.Join(dir, fmt.Sprint("db", i)), &Options{CheckpointInterval: -1, CacheSize: 4 << 30})
		if err != nil {
			b.Fatal(err)
		}
		clk := startCPU(b)
		b.StartTimer()
		s := uint64(i) * 0x9E3779B97F4A7C15
		err = db.Update(ctx, func(tx *Tx) error {
			tr, err := tx.CreateTree("t")
			if err != nil {
				return err
			}
			for range shapeN {
				for j := 0; j < len(k); j += 8 {
					s = splitmix(s)
					binary.LittleEndian.PutUint64(k[j:], s)
				}
				for j := 0; j+8 <= len(v); j += 8 {
					s = splitmix(s)
					binary.LittleEndian.PutUint64(v[j:], s)
				}
				if err := tr.Put(k[:], v[:]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		b.ReportMetric(float64(processCPU()-clk.start)/1e6, "cpu-ms/load")
		db.Close()
	}
}

func splitmix(s uint64) uint64 {
	s += 0x9E3779B97F4A7C15
	z := s
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}
