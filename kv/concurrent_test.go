package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cairndb/cairn/kv/vfs"
)

func openConcDB(t testing.TB, opts *Options) *DB {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	if opts.FS == nil {
		opts.FS = vfs.NewMem()
	}
	opts.CheckpointInterval = -1
	if opts.JournalSize == 0 {
		opts.JournalSize = 1 << 20
	}
	db, err := Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustPut(t testing.TB, tx *Tx, tree, k, v string) {
	t.Helper()
	tr, err := tx.Tree(tree)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Put([]byte(k), []byte(v)); err != nil {
		t.Fatalf("put %s/%s: %v", tree, k, err)
	}
}

func getStr(t testing.TB, tx *Tx, tree, k string) string {
	t.Helper()
	tr, err := tx.Tree(tree)
	if err != nil {
		t.Fatal(err)
	}
	v, err := tr.Get([]byte(k))
	if err != nil {
		t.Fatal(err)
	}
	if v == nil {
		return "<nil>"
	}
	return string(v)
}

// seed commits tree "t" holding keys k0..k(n-1) = "v0"...
func seed(t testing.TB, db *DB, n int) {
	t.Helper()
	err := db.Update(context.Background(), func(tx *Tx) error {
		tr, err := tx.CreateTreeIfNotExists("t")
		if err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			if err := tr.Put([]byte(fmt.Sprintf("k%d", i)), []byte(fmt.Sprintf("v%d", i))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func beginConc(t testing.TB, db *DB) *Tx {
	t.Helper()
	tx, err := db.BeginConcurrent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback() })
	return tx
}

func TestConcurrentReadYourWrites(t *testing.T) {
	db := openConcDB(t, nil)
	seed(t, db, 10)
	tx := beginConc(t, db)
	tr, _ := tx.Tree("t")
	steps := []struct {
		name string
		do   func() error
		want map[string]string // expected view of tree t afterwards (full)
	}{
		{"put new", func() error { return tr.Put([]byte("k10"), []byte("new")) }, nil},
		{"overwrite", func() error { return tr.Put([]byte("k3"), []byte("over")) }, nil},
		{"delete", func() error { _, err := tr.Delete([]byte("k5")); return err }, nil},
		{"delete absent", func() error {
			ok, err := tr.Delete([]byte("nope"))
			if ok {
				return errors.New("deleted an absent key")
			}
			return err
		}, nil},
		{"delete range", func() error {
			n, err := tr.DeleteRange([]byte("k6"), []byte("k8"))
			if err == nil && n != 2 {
				err = fmt.Errorf("deleted %d, want 2", n)
			}
			return err
		}, nil},
	}
	model := map[string]string{}
	for i := 0; i < 10; i++ {
		model[fmt.Sprintf("k%d", i)] = fmt.Sprintf("v%d", i)
	}
	apply := []func(){
		func() { model["k10"] = "new" },
		func() { model["k3"] = "over" },
		func() { delete(model, "k5") },
		func() {},
		func() { delete(model, "k6"); delete(model, "k7") },
	}
	for i, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		apply[i]()
		if err := verifyTx(tx, state{"t": model}); err != nil {
			t.Fatalf("after %s: %v", s.name, err)
		}
	}
	// Backward iteration too.
	c := tr.Cursor()
	n := 0
	var prev []byte
	for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
		if prev != nil && bytes.Compare(k, prev) >= 0 {
			t.Fatalf("Prev out of order: %q after %q", k, prev)
		}
		prev = append(prev[:0], k...)
		n++
	}
	if n != len(model) || tr.Len() != int64(len(model)) {
		t.Fatalf("backward %d keys, Len %d, model %d", n, tr.Len(), len(model))
	}
	// A tree created and filled inside, and one dropped.
	nt, err := tx.CreateTree("new")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 500; i++ {
		nt.Put([]byte(fmt.Sprintf("n%03d", 499-i)), []byte("x"))
	}
	if nt.Len() != 500 || getStr(t, tx, "new", "n007") != "x" {
		t.Fatalf("new tree: Len %d", nt.Len())
	}
	// Nothing is visible outside before commit.
	db.View(func(rt *Tx) error {
		if _, err := rt.Tree("new"); !errors.Is(err, ErrTreeNotFound) {
			t.Errorf("uncommitted tree visible: %v", err)
		}
		if v := getStr(t, rt, "t", "k3"); v != "v3" {
			t.Errorf("uncommitted put visible: %s", v)
		}
		return nil
	})
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	db.View(func(rt *Tx) error {
		if err := verifyTx(rt, state{"t": model, "new": func() map[string]string {
			m := map[string]string{}
			for i := 0; i < 500; i++ {
				m[fmt.Sprintf("n%03d", i)] = "x"
			}
			return m
		}()}); err != nil {
			t.Error(err)
		}
		return nil
	})
	if st := db.Stats().Concurrent; st.Live != 0 || st.OwnedKeys != 0 || st.Committed != 1 {
		t.Fatalf("stats after commit: %+v", st)
	}
}

func TestConcurrentIsolation(t *testing.T) {
	db := openConcDB(t, nil)
	seed(t, db, 4)
	a := beginConc(t, db)
	if getStr(t, a, "t", "k1") != "v1" {
		t.Fatal("initial read")
	}
	// Later commits, ordinary and concurrent, to keys a does not write.
	if err := db.Update(context.Background(), func(tx *Tx) error {
		mustPut(t, tx, "t", "k1", "ordinary")
		_, err := tx.CreateTree("later")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	b := beginConc(t, db)
	mustPut(t, b, "t", "k2", "conc")
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	// a still reads its snapshot, repeatably, and its own writes.
	mustPut(t, a, "t", "k3", "mine")
	for i := 0; i < 2; i++ {
		if got := [3]string{getStr(t, a, "t", "k1"), getStr(t, a, "t", "k2"), getStr(t, a, "t", "k3")}; got != [3]string{"v1", "v2", "mine"} {
			t.Fatalf("a reads %v", got)
		}
		if _, err := a.Tree("later"); !errors.Is(err, ErrTreeNotFound) {
			t.Fatalf("a sees a later tree: %v", err)
		}
	}
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	db.View(func(rt *Tx) error {
		want := state{"later": {}, "t": {"k0": "v0", "k1": "ordinary", "k2": "conc", "k3": "mine"}}
		if err := verifyTx(rt, want); err != nil {
			t.Error(err)
		}
		return nil
	})
}

// conflictStep is one action of a conflict scenario, by transaction name:
// "A", "B" (concurrent), "W" (an ordinary write transaction, begun and
// ended by the step).
type conflictStep struct {
	who  string
	op   string // put, del, create, drop, delrange, commit, rollback, begin
	key  string // or tree for create/drop
	want string // "", "conflict", "committed-conflict", "other error"
}

func TestConcurrentConflicts(t *testing.T) {
	tests := []struct {
		name  string
		steps []conflictStep
		final map[string]string // tree t afterwards
	}{
		{"concurrent put, put: second loses at once", []conflictStep{
			{"A", "put", "k1", ""}, {"B", "put", "k1", "conflict"}, {"A", "commit", "", ""},
			{"B", "put", "k1", "committed-conflict"}, {"B", "put", "k2", ""}, {"B", "commit", "", ""},
		}, map[string]string{"k0": "v0", "k1": "A", "k2": "B", "k3": "v3"}},
		{"committed after snapshot, other order", []conflictStep{
			{"B", "put", "k2", ""}, {"A", "put", "k1", ""}, {"A", "commit", "", ""}, {"B", "put", "k1", "committed-conflict"},
			{"B", "commit", "", ""},
		}, map[string]string{"k0": "v0", "k1": "A", "k2": "B", "k3": "v3"}},
		{"delete vs put", []conflictStep{
			{"A", "del", "k1", ""}, {"B", "put", "k1", "conflict"}, {"A", "commit", "", ""},
		}, map[string]string{"k0": "v0", "k2": "v2", "k3": "v3"}},
		{"put vs delete", []conflictStep{
			{"A", "put", "k1", ""}, {"B", "del", "k1", "conflict"}, {"B", "delrange", "k0", "conflict"}, {"A", "rollback", "", ""},
			{"B", "del", "k1", ""}, {"B", "commit", "", ""},
		}, map[string]string{"k0": "v0", "k2": "v2", "k3": "v3"}},
		{"ordinary writer vs owner", []conflictStep{
			{"A", "put", "k1", ""}, {"W", "put", "k1", "conflict"}, {"W", "del", "k1", "conflict"},
			{"W", "delrange", "k0", "conflict"}, {"W", "drop", "t", "conflict"}, {"W", "put", "k2", ""}, {"A", "commit", "", ""},
			{"W", "put", "k1", ""},
		}, map[string]string{"k0": "v0", "k1": "W", "k2": "W", "k3": "v3"}},
		{"ordinary commit after snapshot", []conflictStep{
			{"A", "put", "k0", ""}, {"W", "put", "k1", ""}, {"A", "put", "k1", "committed-conflict"}, {"A", "commit", "", ""},
		}, map[string]string{"k0": "A", "k1": "W", "k2": "v2", "k3": "v3"}},
		{"ordinary delete range after snapshot", []conflictStep{
			{"A", "put", "k0", ""}, {"W", "delrange", "k2", ""}, {"A", "put", "k3", "committed-conflict"}, {"A", "put", "k1", ""}, {"A", "commit", "", ""},
		}, map[string]string{"k0": "A", "k1": "A"}},
		{"tree created by both", []conflictStep{
			{"A", "create", "u", ""}, {"B", "create", "u", "conflict"}, {"W", "create", "u", "conflict"}, {"A", "commit", "", ""},
			{"B", "create", "u", "committed-conflict"},
		}, nil},
		{"drop vs put", []conflictStep{
			{"A", "drop", "t", ""}, {"B", "put", "k1", "conflict"}, {"W", "put", "k1", "conflict"}, {"A", "commit", "", ""},
			{"B", "put", "k1", "committed-conflict"},
		}, nil},
		{"put vs drop", []conflictStep{
			{"A", "put", "k1", ""}, {"B", "drop", "t", "conflict"}, {"A", "commit", "", ""}, {"B", "drop", "t", "committed-conflict"},
		}, map[string]string{"k0": "v0", "k1": "A", "k2": "v2", "k3": "v3"}},
		{"disjoint keys both commit", []conflictStep{
			{"A", "put", "k1", ""}, {"B", "put", "k2", ""}, {"B", "commit", "", ""}, {"A", "commit", "", ""},
		}, map[string]string{"k0": "v0", "k1": "A", "k2": "B", "k3": "v3"}},
		{"rollback releases", []conflictStep{
			{"A", "put", "k1", ""}, {"A", "rollback", "", ""}, {"B", "put", "k1", ""}, {"B", "commit", "", ""},
		}, map[string]string{"k0": "v0", "k1": "B", "k2": "v2", "k3": "v3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := openConcDB(t, nil)
			seed(t, db, 4)
			txs := map[string]*Tx{"A": beginConc(t, db), "B": beginConc(t, db)}
			for i, s := range tc.steps {
				var err error
				tx := txs[s.who]
				if s.who == "W" {
					if tx, err = db.BeginWrite(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
				tr, _ := tx.Tree("t")
				switch s.op {
				case "put":
					err = tr.Put([]byte(s.key), []byte(s.who))
				case "del":
					_, err = tr.Delete([]byte(s.key))
				case "delrange":
					_, err = tr.DeleteRange([]byte(s.key), nil)
				case "create":
					_, err = tx.CreateTree(s.key)
				case "drop":
					err = tx.DropTree(s.key)
				case "commit":
					err = tx.Commit()
				case "rollback":
					err = tx.Rollback()
				}
				var wce *WriteConflictError
				switch s.want {
				case "":
					if err != nil {
						t.Fatalf("step %d %v: %v", i, s, err)
					}
				case "conflict", "committed-conflict":
					if !errors.Is(err, ErrWriteConflict) || !errors.As(err, &wce) || wce.Committed != (s.want == "committed-conflict") {
						t.Fatalf("step %d %v: got %v (%+v), want %s", i, s, err, wce, s.want)
					}
				}
				if s.who == "W" {
					if err == nil {
						err = tx.Commit()
					} else {
						tx.Rollback()
					}
					if s.want == "" && err != nil {
						t.Fatalf("step %d commit of W: %v", i, err)
					}
				}
			}
			if tc.final == nil {
				return
			}
			db.View(func(rt *Tx) error {
				if err := verifyTx(rt, state{"t": tc.final}); err != nil {
					t.Error(err)
				}
				return nil
			})
		})
	}
}

// TestConcurrentCommitValidates: an ordinary transaction that began before
// any concurrent one wrote a key without seeing an owner; the concurrent
// transaction that then wrote it first is refused at commit.
func TestConcurrentCommitValidates(t *testing.T) {
	db := openConcDB(t, nil)
	seed(t, db, 4)
	w, err := db.BeginWrite(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, w, "t", "k1", "W") // no concurrent transaction live: no check
	a := beginConc(t, db)
	mustPut(t, a, "t", "k1", "A") // W has not committed: nothing to see
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	err = a.Commit()
	if !errors.Is(err, ErrWriteConflict) {
		t.Fatalf("commit over an ordinary commit of the same key: %v", err)
	}
	if got := db.Stats().Concurrent; got.Live != 0 || got.RolledBack != 1 {
		t.Fatalf("stats: %+v", got)
	}
	db.View(func(rt *Tx) error {
		if v := getStr(t, rt, "t", "k1"); v != "W" {
			t.Errorf("k1 = %s", v)
		}
		return nil
	})
}

func TestConcurrentWaitConflict(t *testing.T) {
	db := openConcDB(t, nil)
	seed(t, db, 4)
	a := beginConc(t, db)
	mustPut(t, a, "t", "k1", "A")
	w, _ := db.BeginWrite(context.Background())
	tr, _ := w.Tree("t")
	err := tr.Put([]byte("k1"), []byte("W"))
	var wce *WriteConflictError
	if !errors.As(err, &wce) {
		t.Fatalf("put: %v", err)
	}
	w.Rollback() // the owner needs the writer lock to commit
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := wce.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with a done context while the owner lives: %v", err)
	}
	woke := make(chan error, 1)
	go func() { woke <- wce.Wait(context.Background()) }()
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-woke; err != nil {
		t.Fatal(err)
	}
	if err := db.Update(context.Background(), func(tx *Tx) error {
		tr, _ := tx.Tree("t")
		return tr.Put([]byte("k1"), []byte("W"))
	}); err != nil {
		t.Fatalf("retry after the owner ended: %v", err)
	}
}

func TestConcurrentAbort(t *testing.T) {
	for _, how := range []string{"Abort", "context", "Close"} {
		t.Run(how, func(t *testing.T) {
			db := openConcDB(t, nil)
			seed(t, db, 4)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			a, err := db.BeginConcurrent(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Rollback()
			mustPut(t, a, "t", "k1", "A")
			tr, _ := a.Tree("t")
			b := beginConc(t, db)
			err = func() error { tr, _ := b.Tree("t"); return tr.Put([]byte("k1"), []byte("B")) }()
			var wce *WriteConflictError
			if !errors.As(err, &wce) {
				t.Fatalf("B's put: %v", err)
			}
			woke := make(chan error, 1)
			go func() { woke <- wce.Wait(context.Background()) }()
			done := make(chan struct{})
			go func() { // from another goroutine
				defer close(done)
				switch how {
				case "Abort":
					a.Abort()
				case "context":
					cancel()
				case "Close":
					db.Close()
				}
			}()
			<-done
			if err := <-woke; err != nil {
				t.Fatal(err)
			}
			if how != "Close" {
				if err := tr.Put([]byte("k2"), nil); !errors.Is(err, ErrTxAborted) {
					t.Fatalf("put after abort: %v", err)
				}
				if _, err := tr.Get([]byte("k1")); !errors.Is(err, ErrTxAborted) {
					t.Fatalf("get after abort: %v", err)
				}
				if how == "context" {
					if _, err := a.Tree("t"); !errors.Is(err, context.Canceled) {
						t.Fatalf("the cause is not in the error: %v", err)
					}
				}
				// The key is free: B's transaction began before A's
				// abort and can take it now.
				if err := func() error { tr, _ := b.Tree("t"); return tr.Put([]byte("k1"), []byte("B")) }(); err != nil {
					t.Fatalf("B after A's abort: %v", err)
				}
			}
			if err := a.Commit(); !errors.Is(err, ErrTxAborted) {
				t.Fatalf("commit after abort: %v", err)
			}
			if how == "Close" {
				return
			}
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
			if st := db.Stats().Concurrent; st.Aborted != 1 || st.Live != 0 || st.OwnedKeys != 0 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// TestConcurrentAbortWhileWaitingForWriter: a commit waiting for the writer
// lock gives up when the transaction is aborted.
func TestConcurrentAbortWhileWaitingForWriter(t *testing.T) {
	db := openConcDB(t, nil)
	seed(t, db, 4)
	a := beginConc(t, db)
	mustPut(t, a, "t", "k1", "A")
	w, _ := db.BeginWrite(context.Background()) // holds the writer lock
	res := make(chan error, 1)
	go func() { res <- a.Commit() }()
	a.Abort() // before or while Commit waits for the writer lock

	if err := <-res; !errors.Is(err, ErrTxAborted) {
		t.Fatalf("commit: %v", err)
	}
	w.Rollback()
}

func TestConcurrentMemoryLimit(t *testing.T) {
	db := openConcDB(t, &Options{ConcurrentTxMemory: 256 << 10})
	seed(t, db, 1)
	a := beginConc(t, db)
	tr, _ := a.Tree("t")
	val := bytes.Repeat([]byte("x"), 1000)
	var err error
	n := 0
	for ; n < 10000; n++ {
		if err = tr.Put([]byte(fmt.Sprintf("big%05d", n)), val); err != nil {
			break
		}
	}
	if !errors.Is(err, ErrTxTooLarge) {
		t.Fatalf("after %d puts: %v", n, err)
	}
	if used := a.MemoryUsage(); used > 256<<10 || used < 100<<10 {
		t.Fatalf("MemoryUsage %d with limit %d", used, 256<<10)
	}
	if tr.Len() != int64(n+1) {
		t.Fatalf("the refused put changed the tree: Len %d, %d puts succeeded", tr.Len(), n)
	}
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	db.View(func(rt *Tx) error {
		tr, _ := rt.Tree("t")
		if tr.Len() != int64(n+1) {
			t.Errorf("committed Len %d want %d", tr.Len(), n+1)
		}
		return nil
	})
}

func TestConcurrentRefusals(t *testing.T) {
	db := openConcDB(t, nil)
	a := beginConc(t, db)
	if _, err := a.BulkLoad("x", func() ([]byte, []byte, bool, error) { return nil, nil, false, nil }, 0); err == nil {
		t.Fatal("BulkLoad in a concurrent transaction")
	}
	if _, err := a.Clone(); err == nil {
		t.Fatal("Clone of a concurrent transaction")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := db.BeginConcurrent(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("begin with a done context: %v", err)
	}
	a.Rollback()
	if err := a.Commit(); !errors.Is(err, ErrTxClosed) {
		t.Fatalf("commit after rollback: %v", err)
	}
	_ = time.Second
}
