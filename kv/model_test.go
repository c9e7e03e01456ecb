package kv

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/kv/vfs"
)

var (
	flagSeed = flag.Uint64("seed", 0, "seed for randomized kv tests (0 = time based)")
	flagLong = flag.Bool("long", false, "run long kv soak tests")
)

func testSeed(t *testing.T) uint64 {
	seed := *flagSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -seed %d)", seed, seed)
	return seed
}

// state is the model: tree -> key -> value.
type state map[string]map[string]string

func (s state) clone() state {
	c := make(state, len(s))
	for k, v := range s {
		c[k] = maps.Clone(v)
	}
	return c
}

func (s state) equal(o state) bool {
	if len(s) != len(o) {
		return false
	}
	for k, v := range s {
		ov, ok := o[k]
		if !ok || !maps.Equal(v, ov) {
			return false
		}
	}
	return true
}

func (s state) String() string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(s)) {
		fmt.Fprintf(&b, "%s: %d keys; ", name, len(s[name]))
	}
	return b.String()
}

// dump reads the whole content of a transaction with cursors.
func dump(tx *Tx) (state, error) {
	s := state{}
	err := tx.ForEachTree(func(name string) error {
		tr, err := tx.Tree(name)
		if err != nil {
			return err
		}
		m := map[string]string{}
		c := tr.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			m[string(k)] = string(v)
		}
		if err := c.Err(); err != nil {
			return err
		}
		if int64(len(m)) != tr.Len() {
			return fmt.Errorf("tree %q: Len %d but %d keys", name, tr.Len(), len(m))
		}
		s[name] = m
		return nil
	})
	return s, err
}

type modelRun struct {
	t      *testing.T
	rng    *rand.Rand
	mem    *vfs.Mem
	fault  *vfs.Fault
	opts   *Options
	db     *DB
	ctx    context.Context
	model  state   // last committed state
	hist   []state // states since the last durable one; hist[0] is durable
	readWG sync.WaitGroup
	errMu  sync.Mutex
	errs   []error
	trace  []string
	// conc runs half of the write transactions as concurrent ones
	// (BeginConcurrent): the same operations, read back from their
	// private trees, replayed at commit.
	conc        bool
	concCommits int
}

func (r *modelRun) tracef(format string, args ...any) {
	r.trace = append(r.trace, fmt.Sprintf(format, args...))
	if len(r.trace) > 40 {
		r.trace = r.trace[1:]
	}
}

func (r *modelRun) fatalf(format string, args ...any) {
	r.t.Helper()
	r.t.Logf("last operations:\n  %s", strings.Join(r.trace, "\n  "))
	r.t.Fatalf(format, args...)
}

func (r *modelRun) open() {
	r.t.Helper()
	// Each open picks a journal compression: a journal holds records of
	// the previous open's codec when recovery replays it.
	r.opts.JournalCompression = Compression(r.rng.IntN(int(Zstd) + 1))
	r.opts.PageCompression = Compression(r.rng.IntN(int(Zstd) + 1))
	db, err := Open("/db", r.opts)
	if err != nil {
		r.fatalf("open: %v", err)
	}
	r.db = db
}

var treeNames = []string{"a", "b", "c", "d"}

func (r *modelRun) randKey() []byte {
	i := r.rng.IntN(300)
	k := fmt.Sprintf("k%03d", i)
	switch {
	case i%50 == 7:
		// Keys beyond 64 KiB sharing a 70,000-byte prefix, one of them a
		// proper prefix of the others: their leaves' separators are long.
		k = strings.Repeat("P", 70000) + k[1:1+i%4]
	case i%97 == 0:
		k += strings.Repeat("L", 9000) // multi-page key
	case i%13 == 0:
		k += strings.Repeat("m", 300)
	}
	// A third of the keys share a long prefix, so that nodes strip it
	// before their search prefixes (node.plen); a few are proper prefixes
	// of it, and of each other, and sort before and after it.
	switch r.rng.IntN(6) {
	case 0, 1:
		k = "shared/prefix/" + k
	case 2:
		k = "shared/prefix/"[:1+i%14] + k[:i%4]
	}
	return []byte(k)
}

func (r *modelRun) randVal() []byte {
	n := r.rng.IntN(40)
	switch r.rng.IntN(50) {
	case 0:
		n = 5000 + r.rng.IntN(20000) // multi-page value
	case 1:
		n = 0
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + r.rng.IntN(26))
	}
	return b
}

// verifyTx compares a transaction's full content with want.
func verifyTx(tx *Tx, want state) error {
	got, err := dump(tx)
	if err != nil {
		return err
	}
	if !got.equal(want) {
		return fmt.Errorf("tx %d content differs: got %v want %v", tx.ID(), got, want)
	}
	for name, m := range want {
		tr, err := tx.Tree(name)
		if err != nil {
			return err
		}
		for k, v := range m {
			g, err := tr.Get([]byte(k))
			if err != nil {
				return err
			}
			if g == nil || string(g) != v {
				return fmt.Errorf("tree %q Get(%.20q) = %.20q, want %.20q", name, k, g, v)
			}
		}
	}
	return nil
}

// cursorWalk checks a random cursor walk in both directions against m.
func (r *modelRun) cursorWalk(tr *Tree, m map[string]string) {
	r.t.Helper()
	keys := slices.Sorted(maps.Keys(m))
	c := tr.Cursor()
	probe := r.randKey()
	pos, _ := slices.BinarySearch(keys, string(probe))
	var k []byte
	if r.rng.IntN(2) == 0 {
		k, _ = c.Seek(probe)
	} else {
		k, _ = c.SeekLE(probe)
		if pos == len(keys) || keys[pos] != string(probe) {
			pos--
		}
	}
	for step := 0; step < 30; step++ {
		if pos < 0 || pos >= len(keys) {
			if k != nil {
				r.fatalf("cursor at %.20q, model exhausted (pos %d)", k, pos)
			}
			return
		}
		if string(k) != keys[pos] {
			r.fatalf("cursor at %.20q, model %.20q", k, keys[pos])
		}
		if r.rng.IntN(3) == 0 {
			k, _ = c.Prev()
			pos--
		} else {
			k, _ = c.Next()
			pos++
		}
	}
	if err := c.Err(); err != nil {
		r.fatalf("cursor: %v", err)
	}
}

// writeTx runs one random write transaction.
func (r *modelRun) writeTx() {
	r.t.Helper()
	var tx *Tx
	var err error
	if r.conc && r.rng.IntN(2) == 0 {
		tx, err = r.db.BeginConcurrent(r.ctx)
	} else {
		tx, err = r.db.BeginWrite(r.ctx)
	}
	if err != nil {
		r.fatalf("begin write: %v", err)
	}
	work := r.model.clone()
	nops := 1 + r.rng.IntN(20)
	if r.rng.IntN(20) == 0 {
		nops = 200
	}
	for i := 0; i < nops; i++ {
		name := treeNames[r.rng.IntN(len(treeNames))]
		m, exists := work[name]
		switch op := r.rng.IntN(100); {
		case !exists && (op < 90 || tx.Concurrent()):
			if _, err := tx.CreateTree(name); err != nil {
				r.fatalf("create %q: %v", name, err)
			}
			work[name] = map[string]string{}
		case !exists:
			var keys []string
			for j := 0; j < r.rng.IntN(500); j++ {
				keys = append(keys, string(r.randKey()))
			}
			slices.Sort(keys)
			keys = slices.Compact(keys)
			vals := map[string]string{}
			j := 0
			_, err := tx.BulkLoad(name, func() ([]byte, []byte, bool, error) {
				if j == len(keys) {
					return nil, nil, false, nil
				}
				v := r.randVal()
				vals[keys[j]] = string(v)
				j++
				return []byte(keys[j-1]), v, true, nil
			}, 0.5+r.rng.Float64()/2)
			if err != nil {
				r.fatalf("bulk load: %v", err)
			}
			work[name] = vals
		case op < 60:
			tr, err := tx.Tree(name)
			if err != nil {
				r.fatalf("tree: %v", err)
			}
			k, v := r.randKey(), r.randVal()
			if err := tr.Put(k, v); err != nil {
				r.fatalf("put: %v", err)
			}
			m[string(k)] = string(v)
		case op < 80 && r.rng.IntN(3) == 0:
			// Discard a random key, or about half of the tree's keys
			// (deferred and applied in key order: discard.go).
			tr, _ := tx.Tree(name)
			keys := []string{string(r.randKey())}
			if r.rng.IntN(2) == 0 {
				for _, k := range slices.Sorted(maps.Keys(m)) {
					if r.rng.IntN(2) == 0 {
						keys = append(keys, k)
					}
				}
				r.rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			}
			for _, k := range keys {
				if err := tr.Discard([]byte(k)); err != nil {
					r.fatalf("discard %.20q: %v", k, err)
				}
				delete(m, k)
			}
		case op < 80:
			tr, _ := tx.Tree(name)
			k := r.randKey()
			ok, err := tr.Delete(k)
			_, want := m[string(k)]
			if err != nil || ok != want {
				r.fatalf("delete %.20q: %v %v want %v", k, ok, err, want)
			}
			delete(m, string(k))
		case op < 84:
			tr, _ := tx.Tree(name)
			var s, e []byte
			if r.rng.IntN(4) > 0 {
				s = r.randKey()
			}
			if r.rng.IntN(4) > 0 {
				e = r.randKey()
			}
			n, err := tr.DeleteRange(s, e)
			if err != nil {
				r.fatalf("delete range: %v", err)
			}
			want := 0
			for k := range m {
				if keyInRange([]byte(k), s, e) && validRange(s, e) {
					delete(m, k)
					want++
				}
			}
			if n != int64(want) {
				r.fatalf("delete range removed %d, model %d", n, want)
			}
		case op < 92:
			tr, _ := tx.Tree(name)
			v, err := tr.Get(r.randKey())
			_ = v
			if err != nil {
				r.fatalf("get: %v", err)
			}
			r.cursorWalk(tr, m)
		case op < 95:
			// Mutate while a cursor is open: it must continue correctly.
			tr, _ := tx.Tree(name)
			c := tr.Cursor()
			k, _ := c.First()
			if k == nil {
				continue
			}
			cur := string(k)
			nk := r.randKey()
			if err := tr.Put(nk, []byte("x")); err != nil {
				r.fatalf("put: %v", err)
			}
			m[string(nk)] = "x"
			if r.rng.IntN(2) == 0 {
				if _, err := tr.Delete([]byte(cur)); err != nil {
					r.fatalf("delete: %v", err)
				}
				delete(m, cur)
			}
			next, _ := c.Next()
			keys := slices.Sorted(maps.Keys(m))
			i, _ := slices.BinarySearch(keys, cur)
			if i < len(keys) && keys[i] == cur {
				i++
			}
			var want []byte
			if i < len(keys) {
				want = []byte(keys[i])
			}
			if !bytes.Equal(next, want) {
				r.fatalf("cursor after mutation: next %.20q want %.20q", next, want)
			}
		case op < 97:
			if err := tx.DropTree(name); err != nil {
				r.fatalf("drop: %v", err)
			}
			delete(work, name)
		default:
			tr, _ := tx.Tree(name)
			if tr.Len() != int64(len(m)) {
				r.fatalf("Len %d model %d", tr.Len(), len(m))
			}
		}
	}
	if r.rng.IntN(10) == 0 {
		if err := verifyTx(tx, work); err != nil {
			r.fatalf("in write tx: %v", err)
		}
	}
	if r.rng.IntN(8) == 0 {
		tx.Rollback()
		r.tracef("rollback")
		return
	}
	d := []Durability{Sync, Sync, Lazy, NoSync}[r.rng.IntN(4)]
	err = tx.CommitWith(d)
	r.tracef("commit tx %d %v ops=%d log=%d off=%v force=%v -> %v; now %v", tx.id, d, nops, len(tx.log.buf), tx.log.off, tx.forceCkpt, err, work)
	r.hist = append(r.hist, work)
	if err != nil {
		if !errors.Is(err, ErrDatabaseFailed) {
			r.fatalf("commit: %v", err)
		}
		return // unacknowledged: may or may not survive
	}
	r.model = work
	if tx.Concurrent() {
		r.concCommits++
	}
	if d == Sync {
		r.durable()
	}
	if d == Lazy && tx.dirty && r.rng.IntN(2) == 0 && r.waitLazyFlush() {
		// A j:false commit older than CommitInterval: the periodic
		// flush has synced it (and the NoSync records before it), so it
		// must survive every crash. (A commit that wrote nothing asks
		// for no flush.)
		r.durable()
	}
}

// waitLazyFlush waits until the flusher has made the journal durable up to
// everything written so far (it must, within CommitInterval) and reports
// whether it did; false when the DB failed meanwhile.
func (r *modelRun) waitLazyFlush() bool {
	j := r.db.journal
	j.mu.Lock()
	lsn := j.written
	j.mu.Unlock()
	for i := 0; i < 10000; i++ {
		if r.db.failed.Load() != nil {
			return false
		}
		j.mu.Lock()
		durable := j.durable
		j.mu.Unlock()
		if durable >= lsn {
			return true
		}
		time.Sleep(time.Millisecond)
	}
	r.fatalf("a lazy commit was not flushed within 10 s (CommitInterval %v)", r.opts.CommitInterval)
	return false
}

// durable records that everything committed so far is durable.
func (r *modelRun) durable() {
	r.hist = []state{r.hist[len(r.hist)-1]}
}

// reader starts a read transaction and checks it concurrently while the
// writer keeps committing.
func (r *modelRun) reader() {
	tx, err := r.db.BeginRead()
	if err != nil {
		r.fatalf("begin read: %v", err)
	}
	want := r.model.clone()
	r.readWG.Add(1)
	go func() {
		defer r.readWG.Done()
		defer tx.Rollback()
		for i := 0; i < 2; i++ {
			if err := verifyTx(tx, want); err != nil {
				r.errMu.Lock()
				r.errs = append(r.errs, fmt.Errorf("reader of tx %d: %w", tx.ID(), err))
				r.errMu.Unlock()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
}

func (r *modelRun) joinReaders() {
	r.readWG.Wait()
	if len(r.errs) > 0 {
		r.fatalf("%v", errors.Join(r.errs...))
	}
}

// crash simulates a power loss and checks the recovered state.
func (r *modelRun) crash() {
	r.t.Helper()
	r.joinReaders()
	r.mem.Crash(vfs.CrashOptions{KeepUnsynced: r.rng.Float64() * 0.7, Tear: r.rng.IntN(2) == 0, Rand: r.rng})
	r.db.Close() // fails: handles are dead; releases goroutines
	r.fault.SetSyncError(nil)
	r.open()
	var got state
	err := r.db.View(func(tx *Tx) error {
		var err error
		got, err = dump(tx)
		return err
	})
	if err != nil {
		r.fatalf("dump after crash: %v", err)
	}
	for i := len(r.hist) - 1; i >= 0; i-- {
		if got.equal(r.hist[i]) {
			r.model = r.hist[i]
			r.hist = []state{r.model}
			if err := r.db.Check(r.ctx); err != nil {
				r.fatalf("check after crash: %v", err)
			}
			return
		}
	}
	r.fatalf("state after crash matches none of the %d candidate states: got %v, durable %v, last %v",
		len(r.hist), got, r.hist[0], r.hist[len(r.hist)-1])
}

func runModel(t *testing.T, seed uint64, steps int, cacheSize int64, conc bool) {
	mem := vfs.NewMem()
	fault := vfs.NewFault(mem)
	r := &modelRun{t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), mem: mem, fault: fault, ctx: context.Background(), conc: conc}
	r.opts = &Options{FS: fault, PageSize: 4096, JournalSize: 128 << 10, CheckpointInterval: -1, CommitInterval: time.Millisecond, CacheSize: cacheSize,
		testing: &testingKnobs{verifyCheckpoints: true}}
	r.open()
	r.model = state{}
	r.hist = []state{r.model}
	defer func() {
		r.readWG.Wait()
		r.db.Close()
	}()
	for step := 0; step < steps; step++ {
		op := r.rng.IntN(1000)
		if op >= 800 {
			r.tracef("step %d op %d", step, op)
		}
		switch {
		case op < 800:
			r.writeTx()
		case op < 870:
			r.reader()
		case op < 890:
			if err := r.db.Checkpoint(r.ctx); err != nil {
				r.fatalf("checkpoint: %v", err)
			}
			r.durable()
		case op < 900:
			if err := r.db.Compact(r.ctx); err != nil {
				r.fatalf("compact: %v", err)
			}
			r.durable()
		case op < 910:
			if err := r.db.Sync(r.ctx); err != nil {
				r.fatalf("sync: %v", err)
			}
			r.durable()
		case op < 930:
			r.joinReaders()
			if err := r.db.Close(); err != nil {
				r.fatalf("close: %v", err)
			}
			r.durable()
			r.open()
			err := r.db.View(func(tx *Tx) error { return verifyTx(tx, r.model) })
			if err != nil {
				r.fatalf("after reopen: %v", err)
			}
		case op < 935:
			// A failing fdatasync: the commit must report it, and every
			// later write must be refused until reopen.
			r.joinReaders()
			injected := errors.New("injected EIO")
			r.fault.SetSyncError(func(string) error { return injected })
			tx, err := r.db.BeginWrite(r.ctx)
			if errors.Is(err, injected) && errors.Is(err, ErrDatabaseFailed) {
				r.crash() // a background checkpoint or flush met the failure first
				continue
			}
			if err != nil {
				r.fatalf("begin: %v", err)
			}
			tr, err := tx.CreateTreeIfNotExists("a")
			if err != nil {
				r.fatalf("create: %v", err)
			}
			work := r.model.clone()
			if work["a"] == nil {
				work["a"] = map[string]string{}
			}
			k, v := r.randKey(), r.randVal()
			tr.Put(k, v)
			work["a"][string(k)] = string(v)
			err = tx.CommitWith(Sync)
			r.hist = append(r.hist, work)
			if !errors.Is(err, injected) || !errors.Is(err, ErrDatabaseFailed) {
				r.fatalf("commit with failing fsync returned %v", err)
			}
			if _, err := r.db.BeginWrite(r.ctx); !errors.Is(err, ErrDatabaseFailed) {
				r.fatalf("write after failed fsync: %v", err)
			}
			r.crash()
		case op < 960:
			r.crash()
		default:
			r.joinReaders()
			err := r.db.View(func(tx *Tx) error { return verifyTx(tx, r.model) })
			if err != nil {
				r.fatalf("verify: %v", err)
			}
		}
	}
	r.joinReaders()
	if err := r.db.Check(r.ctx); err != nil {
		r.fatalf("final check: %v", err)
	}
	if conc && r.concCommits == 0 {
		t.Fatal("no concurrent transaction committed")
	}
	st := r.db.Stats()
	t.Logf("concurrent commits %d", r.concCommits)
	t.Logf("cache: budget %d, %d bytes in %d leaves, %d evictions", st.CacheBudget, st.CacheBytes, st.CacheLeaves, st.CacheEvictions)
}

func TestModel(t *testing.T) {
	seed := testSeed(t)
	steps := 1500
	if *flagLong {
		steps = 30000
	}
	runModel(t, seed, steps, 0, false)
}

// TestModelConcurrent runs the model with half of the write transactions
// concurrent ones: every operation read back from the private trees, the
// commits replayed, crashes recovering them.
func TestModelConcurrent(t *testing.T) {
	seed := testSeed(t)
	steps := 1500
	if *flagLong {
		steps = 30000
	}
	runModel(t, seed, steps, 0, true)
}

// TestModelTinyCache runs the model with a node cache of a few pages, so
// leaves are evicted and reloaded all the time (also under concurrent
// readers).
func TestModelTinyCache(t *testing.T) {
	seed := testSeed(t)
	steps := 1000
	if *flagLong {
		steps = 20000
	}
	runModel(t, seed, steps, 16<<10, false)
}
