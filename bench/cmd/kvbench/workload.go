package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

const (
	keySize   = 24
	valueSize = 150
	rngSeed   = 3

	fullBulk        = 5_000_000
	fullIndividual  = 1_000
	fullBatchTxns   = 100
	batchSize       = 1_000
	fullReads       = 1_000_000
	fullScans       = 500_000
	scanLen         = 10
	readIterations  = 2
	scanIterations  = 2
	floorWrites     = 1_000
	floorRecordSize = keySize + valueSize
)

// counts are the element counts of one run.
type counts struct {
	Scale      int `json:"scale"`
	Bulk       int `json:"bulk"`
	Individual int `json:"individual"`
	BatchTxns  int `json:"batch_txns"`
	BatchSize  int `json:"batch_size"`
	Reads      int `json:"reads"`
	Scans      int `json:"scans"`
	ScanLen    int `json:"scan_len"`
	Elements   int `json:"elements"`
}

// countsFor divides the bulk load, the batches and the reads by scale. The
// 1,000 individual durable writes are never divided: they are compared with
// 1,000 bare write+fdatasync calls, and they are cheap.
func countsFor(scale int) counts {
	c := counts{
		Scale:      scale,
		Bulk:       max(fullBulk/scale, 1),
		Individual: fullIndividual,
		BatchTxns:  max(fullBatchTxns/scale, 1),
		BatchSize:  batchSize,
		Reads:      max(fullReads/scale, 1),
		Scans:      max(fullScans/scale, 1),
		ScanLen:    scanLen,
	}
	c.Elements = c.Bulk + c.Individual + c.BatchTxns*c.BatchSize
	return c
}

// pair fills key and value with the i-th pair of the seeded sequence. The
// sequence is a SplitMix64 stream per element, so any element can be
// produced without generating the ones before it (the goroutine shards of
// the multi-threaded reads start in the middle of the sequence).
func pair(i int, key *[keySize]byte, value *[valueSize]byte) {
	seed := uint64(rngSeed)
	s := seed*0xD1B54A32D192ED03 + uint64(i)*0x9E3779B97F4A7C15
	next := func() uint64 {
		s += 0x9E3779B97F4A7C15
		z := s
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		return z ^ (z >> 31)
	}
	for o := 0; o < keySize; o += 8 {
		binary.LittleEndian.PutUint64(key[o:], next())
	}
	var tail [8]byte
	for o := 0; o < valueSize; o += 8 {
		if o+8 <= valueSize {
			binary.LittleEndian.PutUint64(value[o:], next())
		} else {
			binary.LittleEndian.PutUint64(tail[:], next())
			copy(value[o:], tail[:])
		}
	}
}

// result is one measured row of one engine.
type result struct {
	Name string `json:"name"`
	// Kind is "time" (Nanos is set), "size" (Bytes, and Apparent the sum of
	// file lengths) or "na".
	Kind     string `json:"kind"`
	Nanos    int64  `json:"nanos,omitempty"`
	CPUNanos int64  `json:"cpu_nanos,omitempty"`
	Bytes    int64  `json:"bytes,omitempty"`
	Apparent int64  `json:"apparent_bytes,omitempty"`
}

// runner drives one engine through the benchmark and records its results.
type runner struct {
	name     string
	dir      string // the engine's data directory
	floorDir string // where the floor is measured: beside dir, same disk
	c        counts
	results  []result
	// floors are the floor measurements: just before and just after the
	// individual writes.
	floors []time.Duration
	// saved, if set, is called after every recorded row.
	saved func()
}

func (r *runner) floor() error {
	d, err := measureFloor(r.floorDir)
	if err != nil {
		return err
	}
	r.floors = append(r.floors, d)
	progress("%s: floor: %d x write(%d B)+fdatasync in %s", r.name, floorWrites, floorRecordSize, fmtDur(d))
	return nil
}

func (r *runner) timed(name string, m measure, what string) {
	r.results = append(r.results, result{Name: name, Kind: "time", Nanos: m.wall.Nanoseconds(), CPUNanos: m.cpu.Nanoseconds()})
	progress("%s: %s: %s in %s (CPU %s; %s)", r.name, name, what, fmtDur(m.wall), fmtDur(m.cpu), m.sched)
	if r.saved != nil {
		r.saved()
	}
}

// A stopwatch measures wall time and the CPU time (user+system, all
// threads) of this process. On a shared machine the CPU time is the steadier
// figure for the CPU-bound rows; the wall time is what the table shows.
//
// The progress line of each row also reports what took the process off the
// CPU: voluntary context switches (blocking: I/O, futex waits), involuntary
// ones (preempted by the kernel: other processes competing for the cores),
// and major page faults (reads from disk through the page cache).
type stopwatch struct {
	wall time.Time
	ru   syscall.Rusage
}

type measure struct {
	wall, cpu time.Duration
	sched     string
}

func startWatch() stopwatch { return stopwatch{wall: time.Now(), ru: rusage()} }

func (w stopwatch) stop() measure {
	ru := rusage()
	return measure{
		wall: time.Since(w.wall),
		cpu:  cpuOf(ru) - cpuOf(w.ru),
		sched: fmt.Sprintf("%d voluntary, %d involuntary context switches, %d major faults",
			ru.Nvcsw-w.ru.Nvcsw, ru.Nivcsw-w.ru.Nivcsw, ru.Majflt-w.ru.Majflt),
	}
}

func rusage() syscall.Rusage {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru
}

func cpuOf(ru syscall.Rusage) time.Duration {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// run executes the benchmark of lmdb_benchmark on s, in its order.
func (r *runner) run(s store) (store, error) {
	c := r.c
	var key [keySize]byte
	var value [valueSize]byte
	next := 0 // next element of the sequence to insert

	// Bulk load: every element in one transaction.
	start := startWatch()
	tx, err := s.BeginWrite()
	if err != nil {
		return s, fmt.Errorf("bulk load: begin: %w", err)
	}
	for range c.Bulk {
		pair(next, &key, &value)
		next++
		if err := tx.Put(key[:], value[:]); err != nil {
			return s, fmt.Errorf("bulk load: put: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return s, fmt.Errorf("bulk load: commit: %w", err)
	}
	r.timed("bulk load", start.stop(), fmt.Sprintf("%d inserts in one transaction", c.Bulk))

	// Individual durable writes, between two measurements of the floor.
	if err := r.floor(); err != nil {
		return s, err
	}
	start = startWatch()
	for range c.Individual {
		tx, err := s.BeginWrite()
		if err != nil {
			return s, fmt.Errorf("individual writes: begin: %w", err)
		}
		pair(next, &key, &value)
		next++
		if err := tx.Put(key[:], value[:]); err != nil {
			return s, fmt.Errorf("individual writes: put: %w", err)
		}
		if err := tx.Commit(); err != nil {
			return s, fmt.Errorf("individual writes: commit: %w", err)
		}
	}
	r.timed("individual writes", start.stop(), fmt.Sprintf("%d transactions of one insert", c.Individual))
	if err := r.floor(); err != nil {
		return s, err
	}

	// Batch writes.
	start = startWatch()
	for range c.BatchTxns {
		tx, err := s.BeginWrite()
		if err != nil {
			return s, fmt.Errorf("batch writes: begin: %w", err)
		}
		for range c.BatchSize {
			pair(next, &key, &value)
			next++
			if err := tx.Put(key[:], value[:]); err != nil {
				return s, fmt.Errorf("batch writes: put: %w", err)
			}
		}
		if err := tx.Commit(); err != nil {
			return s, fmt.Errorf("batch writes: commit: %w", err)
		}
	}
	r.timed("batch writes", start.stop(), fmt.Sprintf("%d transactions of %d inserts", c.BatchTxns, c.BatchSize))
	if next != c.Elements {
		return s, fmt.Errorf("internal error: inserted %d elements, want %d", next, c.Elements)
	}

	if err := r.reads(s); err != nil {
		return s, err
	}
	for _, threads := range []int{4, 8, 16, 32} {
		if err := r.parallelReads(s, threads); err != nil {
			return s, err
		}
	}

	// Removal of the first half of the elements, in one transaction.
	start = startWatch()
	tx, err = s.BeginWrite()
	if err != nil {
		return s, fmt.Errorf("removals: begin: %w", err)
	}
	deletes := c.Elements / 2
	for i := range deletes {
		pair(i, &key, &value)
		if err := tx.Delete(key[:]); err != nil {
			return s, fmt.Errorf("removals: delete: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return s, fmt.Errorf("removals: commit: %w", err)
	}
	r.timed("removals", start.stop(), fmt.Sprintf("%d deletes in one transaction", deletes))

	// Sizes before and after compaction. As in lmdb_benchmark, one more
	// durable insert follows the compaction before the size is taken.
	if err := r.size("uncompacted size"); err != nil {
		return s, err
	}
	start = startWatch()
	ok, err := s.Compact()
	if err != nil {
		return s, fmt.Errorf("compaction: %w", err)
	}
	if !ok {
		r.results = append(r.results, result{Name: "compaction", Kind: "na"}, result{Name: "compacted size", Kind: "na"})
		progress("%s: compaction: not supported", r.name)
		return s, nil
	}
	r.timed("compaction", start.stop(), "compacted")
	tx, err = s.BeginWrite()
	if err != nil {
		return s, fmt.Errorf("after compaction: begin: %w", err)
	}
	pair(next, &key, &value)
	if err := tx.Put(key[:], value[:]); err != nil {
		return s, fmt.Errorf("after compaction: put: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return s, fmt.Errorf("after compaction: commit: %w", err)
	}
	return s, r.size("compacted size")
}

// reads runs len() and the single-threaded point and range reads, all in
// one read transaction.
func (r *runner) reads(s store) error {
	c := r.c
	var key [keySize]byte
	var value [valueSize]byte
	rtx, err := s.BeginRead()
	if err != nil {
		return fmt.Errorf("reads: begin: %w", err)
	}
	defer rtx.Close()

	start := startWatch()
	n, err := rtx.Len()
	if err != nil {
		return fmt.Errorf("len: %w", err)
	}
	d := start.stop()
	if n != int64(c.Elements) {
		return fmt.Errorf("len() = %d, want %d", n, c.Elements)
	}
	r.timed("len()", d, fmt.Sprintf("%d", n))

	for range readIterations {
		start := startWatch()
		var sum, want uint64
		for i := range c.Reads {
			pair(i, &key, &value)
			v, err := rtx.Get(key[:])
			if err != nil {
				return fmt.Errorf("random reads: get: %w", err)
			}
			if len(v) != valueSize {
				return fmt.Errorf("random reads: element %d: got %d-byte value, want %d bytes", i, len(v), valueSize)
			}
			sum += uint64(v[0])
			want += uint64(value[0])
		}
		d := start.stop()
		if sum != want {
			return fmt.Errorf("random reads: checksum %d, want %d", sum, want)
		}
		r.timed("random reads", d, fmt.Sprintf("%d gets", c.Reads))
	}

	for range scanIterations {
		start := startWatch()
		var sum uint64
		seen, bad := 0, 0
		for i := range c.Scans {
			pair(i, &key, &value)
			first := true
			err := rtx.Scan(key[:], c.ScanLen, func(k, v []byte) {
				if first && (!bytes.Equal(k, key[:]) || !bytes.Equal(v, value[:])) {
					bad++
				}
				first = false
				sum += uint64(v[0])
				seen++
			})
			if err != nil {
				return fmt.Errorf("range reads: %w", err)
			}
		}
		d := start.stop()
		if bad > 0 || seen < c.Scans || sum == 0 {
			return fmt.Errorf("range reads: %d scans did not start at their key (%d entries seen, value sum %d)", bad, seen, sum)
		}
		r.timed("random range reads", d, fmt.Sprintf("%d scans of %d (%d entries)", c.Scans, c.ScanLen, seen))
	}
	return nil
}

// parallelReads reads every element once, split into equal consecutive
// shards of the sequence over threads goroutines, each in its own read
// transaction.
func (r *runner) parallelReads(s store, threads int) error {
	per := r.c.Elements / threads
	errs := make([]error, threads)
	var ready, wg sync.WaitGroup
	ready.Add(threads)
	startGate := make(chan struct{})
	for t := range threads {
		wg.Go(func() {
			ready.Done()
			<-startGate
			errs[t] = readShard(s, t*per, per)
		})
	}
	ready.Wait()
	start := startWatch()
	close(startGate)
	wg.Wait()
	d := start.stop()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("random reads (%d threads): %w", threads, err)
		}
	}
	r.timed(fmt.Sprintf("random reads (%d threads)", threads), d, fmt.Sprintf("%d gets", per*threads))
	return nil
}

func readShard(s store, from, n int) error {
	var key [keySize]byte
	var value [valueSize]byte
	rtx, err := s.BeginRead()
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer rtx.Close()
	var sum, want uint64
	for i := from; i < from+n; i++ {
		pair(i, &key, &value)
		v, err := rtx.Get(key[:])
		if err != nil {
			return fmt.Errorf("get: %w", err)
		}
		if len(v) == 0 {
			return fmt.Errorf("element %d missing", i)
		}
		sum += uint64(v[0])
		want += uint64(value[0])
	}
	if sum != want {
		return fmt.Errorf("checksum %d, want %d", sum, want)
	}
	return nil
}

// size records the disk space of the engine's directory: blocks allocated
// (what df sees) and, for reference, the sum of the file lengths.
func (r *runner) size(name string) error {
	alloc, apparent, err := dirSize(r.dir)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	r.results = append(r.results, result{Name: name, Kind: "size", Bytes: alloc, Apparent: apparent})
	progress("%s: %s: %s allocated (%s apparent)", r.name, name, fmtBytes(alloc), fmtBytes(apparent))
	if r.saved != nil {
		r.saved()
	}
	return nil
}

func dirSize(dir string) (alloc, apparent int64, err error) {
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(path, &st); err != nil {
			if os.IsNotExist(err) { // a file removed by a background job
				return nil
			}
			return fmt.Errorf("stat %s: %w", path, err)
		}
		alloc += st.Blocks * 512
		apparent += st.Size
		return nil
	})
	return alloc, apparent, err
}
