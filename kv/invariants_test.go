package kv

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cairndb/cairn/kv/internal/invariants"
	"github.com/cairndb/cairn/kv/vfs"
)

func requireInvariants(t *testing.T) {
	t.Helper()
	if !invariants.Enabled {
		t.Skip("invariant checks are compiled out: run with -race or -tags invariants")
	}
}

// mustPanic runs fn and returns the message it panicked with.
func mustPanic(t *testing.T, fn func()) (msg string) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			t.Fatal("no panic")
		}
		msg = fmt.Sprint(r)
	}()
	fn()
	return ""
}

// TestInvariantsCatchBrokenNodes: a commit that would publish a node the
// write path left inconsistent panics (invariants.go, checkSealed) instead
// of publishing it. Each case breaks one property of a node the
// transaction created, then commits.
func TestInvariantsCatchBrokenNodes(t *testing.T) {
	requireInvariants(t)
	cases := []struct {
		name    string
		want    string
		leaf    bool // break the first leaf (else the root branch)
		corrupt func(n *node)
	}{
		{"no prefixes", "without search prefixes", true, func(n *node) { n.pfx = nil }},
		{"stale prefix", "stale prefix", true, func(n *node) { n.pfx[1]++ }},
		{"size", "records size", true, func(n *node) { n.size++ }},
		{"missing value", "values for", true, func(n *node) { n.vals = n.vals[:len(n.vals)-1] }},
		{"order", "does not sort after", true, func(n *node) {
			n.keys[1], n.keys[2] = n.keys[2], n.keys[1]
			n.buildPrefixes()
		}},
		{"bounds", "outside its parent's bounds", true, func(n *node) {
			// The leaf's last key moves past the separator of the next
			// leaf: still ascending within the leaf, but in the wrong child.
			last := len(n.keys) - 1
			n.keys[last] = append(bytes.Clone(key(1_000_000)), 'x')
			n.size++
			n.buildPrefixes()
		}},
		{"branch children", "children for", false, func(n *node) { n.kids = n.kids[:len(n.kids)-1] }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db := mustOpen(t, vfs.NewMem(), nil)
			ctx := context.Background()
			if err := db.Update(ctx, func(tx *Tx) error {
				tr, err := tx.CreateTree("t")
				if err != nil {
					return err
				}
				for i := range 2000 {
					if err := tr.Put(key(i), val(i)); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			tx, err := db.BeginWrite(ctx)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := tx.Tree("t")
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Put(key(0), []byte("changed")); err != nil { // copies the root and first leaf
				t.Fatal(err)
			}
			root := tr.tr.root.ptr.Load()
			if root.leaf || root.txid != tx.id {
				t.Fatalf("want a root branch of this transaction (leaf %v, txid %d)", root.leaf, root.txid)
			}
			n := root
			if c.leaf {
				for !n.leaf {
					n = n.kids[0].ptr.Load()
				}
				if n.txid != tx.id {
					t.Fatal("first leaf not copied by the put")
				}
			}
			c.corrupt(n)
			msg := mustPanic(t, func() { tx.Commit() })
			if !strings.Contains(msg, "invariant") || !strings.Contains(msg, c.want) {
				t.Fatalf("panic %q, want one naming the %q invariant", msg, c.want)
			}
			// The broken snapshot was not published.
			if got := db.current.Load().txid; got == tx.id {
				t.Fatal("the broken transaction was published")
			}
			db.releaseWriter() // the panic left it held
			db.Close()
		})
	}
}

// TestInvariantsCatchBadAccounting: the page accounting checks a
// checkpoint runs (checkAccounting, checkRelease) detect a free list that
// holds a page twice, a page that is also waiting to be freed, a page of
// the current tree, and a release of a page a snapshot still reaches.
func TestInvariantsCatchBadAccounting(t *testing.T) {
	requireInvariants(t)
	cases := []struct {
		name  string
		want  string
		check func(db *DB, live extent)
	}{
		{"duplicate free page", "twice in the free list", func(db *DB, _ extent) {
			db.alloc.free = append(db.alloc.free, db.alloc.free[len(db.alloc.free)-1])
			db.checkAccounting()
		}},
		{"free and pending", "both free and pending", func(db *DB, _ extent) {
			db.freedAt = append(db.freedAt, ckptFree{txid: 1, pages: []extent{{db.alloc.free[0], 1}}})
			db.checkAccounting()
		}},
		{"live page free", "live page", func(db *DB, live extent) {
			db.alloc.free = append(db.alloc.free, live.pgid)
			db.checkAccounting()
		}},
		{"release reachable page", "reachable from snapshot", func(db *DB, live extent) {
			db.checkRelease([]extent{live}, db.current.Load().txid)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db := mustOpen(t, vfs.NewMem(), nil)
			defer db.Close()
			ctx := context.Background()
			// Tree a is written below tree b, then dropped: once two
			// checkpoints have passed, its pages are free.
			for _, step := range []func(tx *Tx) error{
				func(tx *Tx) error {
					for _, name := range []string{"a", "b"} {
						tr, err := tx.CreateTree(name)
						if err != nil {
							return err
						}
						for i := range 500 {
							if err := tr.Put(key(i), val(i)); err != nil {
								return err
							}
						}
					}
					return nil
				},
				func(tx *Tx) error { return tx.DropTree("a") },
				func(tx *Tx) error { return nil },
			} {
				if err := db.Update(ctx, step); err != nil {
					t.Fatal(err)
				}
				if err := db.Checkpoint(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if len(db.alloc.free) == 0 {
				t.Fatal("no free pages to work with")
			}
			pg, np := db.current.Load().trees["b"].root.extent()
			if pg == 0 {
				t.Fatal("root not on disk")
			}
			if err := db.acquireWriter(ctx); err != nil {
				t.Fatal(err)
			}
			db.ckptMu.Lock()
			free, freedAt := append([]uint64(nil), db.alloc.free...), db.freedAt
			msg := mustPanic(t, func() { c.check(db, extent{pg, np}) })
			db.alloc.free, db.freedAt = free, freedAt
			db.ckptMu.Unlock()
			db.releaseWriter()
			if !strings.Contains(msg, "invariant") || !strings.Contains(msg, c.want) {
				t.Fatalf("panic %q, want %q", msg, c.want)
			}
		})
	}
}

// TestTestingKnobsArePerDB: the test hooks belong to one DB (they were
// package variables, so tests could not run in parallel with different
// ones): a hook set on one DB does not run for another opened from the
// same Options, and changing a DB's knobs leaves the Options alone.
func TestTestingKnobsArePerDB(t *testing.T) {
	mem := vfs.NewMem()
	var calls [2]atomic.Int64
	opts := memOpts(mem)
	opts.testing.afterCheckpoint = func(*DB) { calls[0].Add(1) }
	ctx := context.Background()
	var dbs [2]*DB
	for i := range dbs {
		db, err := Open(fmt.Sprintf("/db%d", i), opts)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		dbs[i] = db
	}
	dbs[1].opts.testing.afterCheckpoint = func(*DB) { calls[1].Add(1) }
	for i, db := range dbs {
		for range i + 1 {
			if err := db.Update(ctx, func(tx *Tx) error {
				tr, err := tx.CreateTreeIfNotExists("t")
				if err != nil {
					return err
				}
				return tr.Put([]byte("k"), []byte("v"))
			}); err != nil {
				t.Fatal(err)
			}
			if err := db.Checkpoint(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if a, b := calls[0].Load(), calls[1].Load(); a != 1 || b != 2 {
		t.Fatalf("hook calls: first DB %d, second %d; want 1 and 2", a, b)
	}
	if dbs[0].opts.testing == dbs[1].opts.testing || dbs[0].opts.testing == opts.testing {
		t.Fatal("DBs share testing knobs")
	}
	if !opts.testing.verifyCheckpoints || !dbs[1].opts.testing.verifyCheckpoints {
		t.Fatal("knobs not copied from Options")
	}
}
