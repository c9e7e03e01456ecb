package kv

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/cairndb/cairn/kv/vfs"
)

func u64(b []byte) uint64 { return binary.BigEndian.Uint64(b) }

func be64(x uint64) []byte { return binary.BigEndian.AppendUint64(nil, x) }

// retryConflict runs fn in transactions until one commits: a write
// conflict (at a write or at commit) rolls back, waits for the owner if
// there is one, and retries; so does an ErrTxAborted of a transaction fn
// itself gave up. It returns the number of attempts.
func retryConflict(t testing.TB, begin func() (*Tx, error), fn func(*Tx) error) int {
	for attempt := 1; ; attempt++ {
		tx, err := begin()
		if err != nil {
			t.Error(err)
			return attempt
		}
		err = fn(tx)
		if err == nil {
			err = tx.Commit()
		}
		tx.Rollback()
		if err == nil {
			return attempt
		}
		var wce *WriteConflictError
		if !errors.As(err, &wce) {
			t.Errorf("attempt %d: %v", attempt, err)
			return attempt
		}
		if err := wce.Wait(context.Background()); err != nil {
			t.Error(err)
			return attempt
		}
	}
}

// TestConcurrentBank is the classic lost-update test: goroutines move money
// between accounts in read-modify-write transactions, concurrent ones and
// ordinary ones, retrying on conflicts, while readers check that every
// snapshot (read transactions and concurrent ones) holds the same total.
// At the end each account holds its initial balance plus exactly the
// transfers that committed.
func TestConcurrentBank(t *testing.T) {
	db := openConcDB(t, nil)
	const accounts, initial = 8, 1000
	workers, transfers := 6, 150
	if testing.Short() {
		transfers = 40
	}
	ctx := context.Background()
	if err := db.Update(ctx, func(tx *Tx) error {
		tr, err := tx.CreateTree("bank")
		for i := 0; i < accounts && err == nil; i++ {
			err = tr.Put(be64(uint64(i)), be64(initial))
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	delta := make([]int64, accounts)
	var wg sync.WaitGroup
	var stop atomic.Bool
	var attempts, checks atomic.Int64
	sum := func(tx *Tx) {
		tr, err := tx.Tree("bank")
		if err != nil {
			t.Error(err)
			return
		}
		var total uint64
		c := tr.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			total += u64(v)
		}
		if total != accounts*initial {
			t.Errorf("a snapshot holds %d, not %d", total, accounts*initial)
		}
		checks.Add(1)
	}
	wg.Add(1)
	go func() { // reader
		defer wg.Done()
		for !stop.Load() {
			if rtx, err := db.BeginRead(); err == nil {
				sum(rtx)
				rtx.Rollback()
			}
			if ctx2, err := db.BeginConcurrent(ctx); err == nil {
				sum(ctx2)
				ctx2.Rollback()
			}
			runtime.Gosched()
		}
	}()
	var writers sync.WaitGroup
	for w := 0; w < workers; w++ {
		writers.Add(1)
		go func(w int) {
			defer writers.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			begin := func() (*Tx, error) { return db.BeginConcurrent(ctx) }
			if w == 0 { // one ordinary writer among them
				begin = func() (*Tx, error) { return db.BeginWrite(ctx) }
			}
			for i := 0; i < transfers; i++ {
				from, to := rng.IntN(accounts), rng.IntN(accounts-1)
				if to >= from {
					to++
				}
				amt := uint64(1 + rng.IntN(20))
				moved := false
				n := retryConflict(t, begin, func(tx *Tx) error {
					moved = false
					tr, err := tx.Tree("bank")
					if err != nil {
						return err
					}
					fv, err := tr.Get(be64(uint64(from)))
					if err != nil {
						return err
					}
					tv, err := tr.Get(be64(uint64(to)))
					if err != nil {
						return err
					}
					f, tb := u64(fv), u64(tv)
					if f < amt {
						return nil
					}
					if err := tr.Put(be64(uint64(from)), be64(f-amt)); err != nil {
						return err
					}
					if i%3 == 0 {
						runtime.Gosched() // widen the window for conflicts
					}
					if err := tr.Put(be64(uint64(to)), be64(tb+amt)); err != nil {
						return err
					}
					moved = true
					return nil
				})
				attempts.Add(int64(n))
				if moved {
					mu.Lock()
					delta[from] -= int64(amt)
					delta[to] += int64(amt)
					mu.Unlock()
				}
			}
		}(w)
	}
	writers.Wait()
	stop.Store(true)
	wg.Wait()
	db.View(func(tx *Tx) error {
		tr, _ := tx.Tree("bank")
		for i := 0; i < accounts; i++ {
			v, _ := tr.Get(be64(uint64(i)))
			if want := int64(initial) + delta[i]; int64(u64(v)) != want {
				t.Errorf("account %d holds %d, want %d (a lost or phantom update)", i, u64(v), want)
			}
		}
		sum(tx)
		return nil
	})
	st := db.Stats().Concurrent
	t.Logf("%d transfers in %d attempts, %d conflicts, %d snapshot checks; %+v", workers*transfers, attempts.Load(), st.Conflicts, checks.Load(), st)
	if st.Live != 0 || st.OwnedKeys != 0 || st.LogKeys != 0 {
		t.Fatalf("left over: %+v", st)
	}
}

// TestConcurrentWriteSkew documents that snapshot isolation permits write
// skew: two transactions each read both keys and write a different one,
// and both commit although together they break x+y >= 1.
func TestConcurrentWriteSkew(t *testing.T) {
	db := openConcDB(t, nil)
	if err := db.Update(context.Background(), func(tx *Tx) error {
		tr, _ := tx.CreateTree("t")
		tr.Put([]byte("x"), be64(1))
		return tr.Put([]byte("y"), be64(1))
	}); err != nil {
		t.Fatal(err)
	}
	a, b := beginConc(t, db), beginConc(t, db)
	for _, s := range []struct {
		tx    *Tx
		write string
	}{{a, "x"}, {b, "y"}} {
		tr, _ := s.tx.Tree("t")
		x, _ := tr.Get([]byte("x"))
		y, _ := tr.Get([]byte("y"))
		if u64(x)+u64(y) >= 2 { // "one of us may go off duty"
			if err := tr.Put([]byte(s.write), be64(0)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatalf("write skew refused (snapshot isolation permits it): %v", err)
	}
	db.View(func(tx *Tx) error {
		if x, y := getStr(t, tx, "t", "x"), getStr(t, tx, "t", "y"); x != string(be64(0)) || y != string(be64(0)) {
			t.Errorf("x=%q y=%q", x, y)
		}
		return nil
	})
}

// TestConcurrentNoLeak: 10,000 concurrent transactions that write, meet
// conflicts, create trees and mostly roll back leave nothing behind: no
// live transaction, owned key, commit log entry or pinned snapshot, and the
// heap does not grow with their number.
func TestConcurrentNoLeak(t *testing.T) {
	db := openConcDB(t, nil)
	seed(t, db, 100)
	ctx := context.Background()
	n := 10000
	if testing.Short() {
		n = 2000
	}
	var heapAt [2]uint64
	for i := 0; i < n; i++ {
		if i == n/10 || i == n-1 {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			heapAt[min(i/(n/2), 1)] = ms.HeapAlloc
		}
		holder, err := db.BeginConcurrent(ctx) // owns k0 while the other writes
		if err != nil {
			t.Fatal(err)
		}
		mustPut(t, holder, "t", "k0", "h")
		tx, err := db.BeginConcurrent(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tr, _ := tx.Tree("t")
		for j := 0; j < 5; j++ {
			tr.Put([]byte(fmt.Sprintf("k%d", (i*7+j)%100+1)), []byte(fmt.Sprint(i)))
		}
		tr.Delete([]byte(fmt.Sprintf("k%d", i%100+1)))
		if err := tr.Put([]byte("k0"), nil); !errors.Is(err, ErrWriteConflict) {
			t.Fatalf("put of an owned key: %v", err)
		}
		tx.CreateTree(fmt.Sprintf("tmp%d", i))
		if i%50 == 0 {
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			db.Update(ctx, func(tx *Tx) error { return tx.DropTree(fmt.Sprintf("tmp%d", i)) })
		} else {
			tx.Rollback()
		}
		if i%3 == 0 {
			holder.Abort()
		}
		holder.Rollback()
	}
	st := db.Stats().Concurrent
	if st.Live != 0 || st.OwnedKeys != 0 || st.LogKeys != 0 || db.cc.hist != nil || len(db.cc.owners) != 0 || len(db.cc.log) != 0 {
		t.Fatalf("left over: %+v, hist %d, owners %d, log %d", st, len(db.cc.hist), len(db.cc.owners), len(db.cc.log))
	}
	if st.Begun != uint64(2*n) || st.Committed+st.RolledBack+st.Aborted != st.Begun {
		t.Fatalf("counters do not add up: %+v", st)
	}
	db.Update(ctx, func(*Tx) error { return nil })
	if err := db.Checkpoint(ctx); err != nil { // retires unpinned snapshots
		t.Fatal(err)
	}
	if cur := db.current.Load(); cur.refs.Load() != 0 {
		t.Fatalf("current snapshot still has %d references", cur.refs.Load())
	}
	if grew := int64(heapAt[1]) - int64(heapAt[0]); grew > 8<<20 {
		t.Fatalf("heap grew by %d bytes from transaction %d to %d", grew, n/10, n)
	}
	t.Logf("heap %d -> %d bytes; %+v", heapAt[0], heapAt[1], st)
}

// TestConcurrentCrashRecovery: the writes of a concurrent transaction
// committed with Sync survive a power loss; one committed with NoSync is
// recovered whole or not at all.
func TestConcurrentCrashRecovery(t *testing.T) {
	mem := vfs.NewMem()
	opts := &Options{FS: mem, JournalSize: 1 << 20, CheckpointInterval: -1}
	db, err := Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	seed(t, db, 50)
	ctx := context.Background()
	a, _ := db.BeginConcurrent(ctx)
	b, _ := db.BeginConcurrent(ctx)
	tr, _ := a.Tree("t")
	tr.Put([]byte("k1"), []byte("A"))
	tr.DeleteRange([]byte("k3"), []byte("k4"))
	nt, _ := a.CreateTree("a-new")
	nt.Put([]byte("x"), []byte("y"))
	// An ordinary commit and b's commit in between: a replays on top.
	db.Update(ctx, func(tx *Tx) error { mustPut(t, tx, "t", "k2", "W"); return nil })
	mustPut(t, b, "t", "k5", "B")
	if err := b.CommitWith(Sync); err != nil {
		t.Fatal(err)
	}
	if err := a.CommitWith(Sync); err != nil {
		t.Fatal(err)
	}
	c, _ := db.BeginConcurrent(ctx)
	mustPut(t, c, "t", "k6", "C")
	mustPut(t, c, "t", "k7", "C")
	if err := c.CommitWith(NoSync); err != nil {
		t.Fatal(err)
	}
	mem.Crash(vfs.CrashOptions{})
	db.Close()
	db, err = Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	want := map[string]string{}
	for i := 0; i < 50; i++ {
		want[fmt.Sprintf("k%d", i)] = fmt.Sprintf("v%d", i)
	}
	want["k1"], want["k2"], want["k5"] = "A", "W", "B"
	for k := range want {
		if keyInRange([]byte(k), []byte("k3"), []byte("k4")) {
			delete(want, k)
		}
	}
	db.View(func(tx *Tx) error {
		got, err := dump(tx)
		if err != nil {
			t.Fatal(err)
		}
		if got["t"]["k6"] == "C" { // the NoSync commit survived: whole
			want["k6"], want["k7"] = "C", "C"
		}
		if w := (state{"t": want, "a-new": {"x": "y"}}); !got.equal(w) {
			t.Errorf("recovered %v, want %v", got, w)
		}
		return nil
	})
	if err := db.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentLinearizable checks with porcupine that single-key
// read-modify-write transactions (concurrent ones), blind ordinary writes
// and snapshot reads, run from several goroutines, form a linearizable
// history of each key (a register): a committed transaction's read is the
// value its commit replaced, as snapshot isolation with first-writer-wins
// guarantees for one key.
func TestConcurrentLinearizable(t *testing.T) {
	db := openConcDB(t, nil)
	const keys = 3
	ctx := context.Background()
	db.Update(ctx, func(tx *Tx) error {
		tr, _ := tx.CreateTree("r")
		for k := 0; k < keys; k++ {
			tr.Put(be64(uint64(k)), be64(0))
		}
		return nil
	})
	type in struct {
		key  int
		kind byte // 'r' read, 'w' blind write, 'x' read-modify-write
		val  uint64
	}
	start := time.Now()
	now := func() int64 { return int64(time.Since(start)) }
	var mu sync.Mutex
	var hist []porcupine.Operation
	var next atomic.Uint64
	var wg sync.WaitGroup
	for g := 0; g < 5; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 11))
			for i := 0; i < 60; i++ {
				k := rng.IntN(keys)
				key := be64(uint64(k))
				call := now()
				var op porcupine.Operation
				switch r := rng.IntN(10); {
				case r < 3:
					tx, _ := db.BeginRead()
					tr, _ := tx.Tree("r")
					v, _ := tr.Get(key)
					out := u64(v)
					tx.Rollback()
					op = porcupine.Operation{ClientId: g, Input: in{k, 'r', 0}, Output: out}
				case r < 4:
					val := next.Add(1) << 8
					retryConflict(t, func() (*Tx, error) { return db.BeginWrite(ctx) }, func(tx *Tx) error {
						tr, _ := tx.Tree("r")
						return tr.Put(key, be64(val))
					})
					op = porcupine.Operation{ClientId: g, Input: in{k, 'w', val}, Output: uint64(0)}
				default:
					tx, _ := db.BeginConcurrent(ctx)
					tr, _ := tx.Tree("r")
					v, _ := tr.Get(key)
					old := u64(v)
					val := next.Add(1) << 8
					runtime.Gosched()
					err := tr.Put(key, be64(val))
					if err == nil {
						err = tx.Commit()
					}
					tx.Rollback()
					if err != nil {
						if !errors.Is(err, ErrWriteConflict) {
							t.Error(err)
						}
						continue // it did not commit: no effect to check
					}
					op = porcupine.Operation{ClientId: g, Input: in{k, 'x', val}, Output: old}
				}
				op.Call, op.Return = call, now()
				mu.Lock()
				hist = append(hist, op)
				mu.Unlock()
			}
		}(g)
	}
	wg.Wait()
	model := porcupine.Model{
		Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
			parts := make([][]porcupine.Operation, keys)
			for _, op := range h {
				k := op.Input.(in).key
				parts[k] = append(parts[k], op)
			}
			return parts
		},
		Init: func() any { return uint64(0) },
		Step: func(state, input, output any) (bool, any) {
			s, i, o := state.(uint64), input.(in), output.(uint64)
			switch i.kind {
			case 'r':
				return o == s, s
			case 'w':
				return true, i.val
			}
			return o == s, i.val
		},
	}
	res := porcupine.CheckOperationsTimeout(model, hist, 30*time.Second)
	if res != porcupine.Ok {
		t.Fatalf("history of %d operations: %v", len(hist), res)
	}
	t.Logf("%d operations linearizable; %+v", len(hist), db.Stats().Concurrent)
}

// TestConcurrentBeginDuringPublish: a concurrent transaction that begins
// while a commit that saw none live is publishing (it recorded no keys)
// must not take the snapshot before that commit, or it could overwrite
// the commit's keys without a conflict (a lost update).
func TestConcurrentBeginDuringPublish(t *testing.T) {
	db := openConcDB(t, &Options{testing: &testingKnobs{}})
	seed(t, db, 4)
	began := make(chan *Tx, 1)
	var once sync.Once
	db.opts.testing.beforePublish = func(db *DB) {
		once.Do(func() {
			go func() {
				tx, err := db.BeginConcurrent(context.Background())
				if err != nil {
					t.Error(err)
				}
				began <- tx
			}()
			for db.cc.live.Load() == 0 { // it has registered: let the commit go on
				runtime.Gosched()
			}
		})
	}
	w, _ := db.BeginWrite(context.Background())
	mustPut(t, w, "t", "k1", "W")
	wid := w.ID()
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	a := <-began
	defer a.Rollback()
	if a.ID() != wid || getStr(t, a, "t", "k1") != "W" {
		t.Fatalf("began on snapshot %d (k1 = %s), before the commit %d it raced with", a.ID(), getStr(t, a, "t", "k1"), wid)
	}
}
