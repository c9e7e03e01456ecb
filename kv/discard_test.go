package kv

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cairndb/cairn/kv/vfs"
)

// discardOp is one step of a TestDiscard script, in one write transaction
// on a tree holding key(0) .. key(n-1).
type discardOp struct {
	op   string // discard, discardRange, put, delete, get, len, scan
	i, j int    // key index (discardRange: [i, j))
}

func TestDiscard(t *testing.T) {
	cases := []struct {
		name     string
		n        int // keys committed before the transaction
		ops      []discardOp
		rollback bool
	}{
		{"one key", 100, []discardOp{{op: "discard", i: 7}}, false},
		{"absent key", 100, []discardOp{{op: "discard", i: 1000}, {op: "len"}}, false},
		{"twice", 100, []discardOp{{op: "discard", i: 7}, {op: "discard", i: 7}, {op: "len"}}, false},
		{"then get", 100, []discardOp{{op: "discard", i: 7}, {op: "get", i: 7}, {op: "get", i: 8}}, false},
		{"then put again", 100, []discardOp{{op: "discard", i: 7}, {op: "put", i: 7}, {op: "get", i: 7}}, false},
		{"put then discard", 100, []discardOp{{op: "put", i: 500}, {op: "discard", i: 500}, {op: "get", i: 500}}, false},
		{"then delete", 100, []discardOp{{op: "discard", i: 7}, {op: "delete", i: 7}, {op: "delete", i: 8}}, false},
		{"half in random order", 5000, []discardOp{{op: "discardRandomHalf"}, {op: "len"}, {op: "scan"}}, false},
		{"half, commit settles", 5000, []discardOp{{op: "discardRandomHalf"}}, false},
		{"everything", 3000, []discardOp{{op: "discardRange", i: 0, j: 3000}, {op: "len"}, {op: "put", i: 5}}, false},
		{"everything, commit settles", 3000, []discardOp{{op: "discardRange", i: 0, j: 3000}}, false},
		{"cursor open across", 2000, []discardOp{{op: "cursorAt", i: 100}, {op: "discardRange", i: 100, j: 900}, {op: "cursorNext"}}, false},
		{"empty tree", 0, []discardOp{{op: "discard", i: 1}, {op: "len"}}, false},
		{"rolled back", 2000, []discardOp{{op: "discardRange", i: 0, j: 1000}, {op: "len"}}, true},
		// Over a quarter of the journal (memOpts: 256 KiB): the commit
		// goes through a checkpoint.
		{"commit by checkpoint", 20000, []discardOp{{op: "discardRange", i: 0, j: 15000}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			db := mustOpen(t, fs, nil)
			ctx := context.Background()
			model := map[string]string{}
			err := db.Update(ctx, func(tx *Tx) error {
				tr, err := tx.CreateTree("t")
				if err != nil {
					return err
				}
				for i := range tc.n {
					model[string(key(i))] = string(val(i))
					if err := tr.Put(key(i), val(i)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if tc.n > 0 {
				// Some committed leaves unpacked (journal commits), some
				// packed (checkpointed).
				if err := db.Checkpoint(ctx); err != nil {
					t.Fatal(err)
				}
			}
			work := maps.Clone(model)
			tx, err := db.BeginWrite(ctx)
			if err != nil {
				t.Fatal(err)
			}
			tr, _ := tx.Tree("t")
			var cur *Cursor
			rng := rand.New(rand.NewPCG(1, uint64(len(tc.name))))
			discard := func(i int) {
				if err := tr.Discard(key(i)); err != nil {
					t.Fatalf("discard %d: %v", i, err)
				}
				delete(work, string(key(i)))
			}
			for _, o := range tc.ops {
				switch o.op {
				case "discard":
					discard(o.i)
				case "discardRange":
					for i := o.i; i < o.j; i++ {
						discard(i)
					}
				case "discardRandomHalf":
					for _, i := range rng.Perm(tc.n)[:tc.n/2] {
						discard(i)
					}
				case "put":
					if err := tr.Put(key(o.i), []byte("new")); err != nil {
						t.Fatal(err)
					}
					work[string(key(o.i))] = "new"
				case "delete":
					found, err := tr.Delete(key(o.i))
					_, want := work[string(key(o.i))]
					if err != nil || found != want {
						t.Fatalf("delete %d: %v, %v; want found %v", o.i, found, err, want)
					}
					delete(work, string(key(o.i)))
				case "get":
					v, err := tr.Get(key(o.i))
					want, ok := work[string(key(o.i))]
					if err != nil || (v != nil) != ok || string(v) != want {
						t.Fatalf("get %d: %q, %v; want %q (present %v)", o.i, v, err, want, ok)
					}
				case "len":
					if got := tr.Len(); got != int64(len(work)) {
						t.Fatalf("len %d, want %d", got, len(work))
					}
				case "scan":
					if err := verifyTree(tr, work); err != nil {
						t.Fatal(err)
					}
				case "cursorAt":
					cur = tr.Cursor()
					if k, _ := cur.Seek(key(o.i)); string(k) != string(key(o.i)) {
						t.Fatalf("seek %d: %q", o.i, k)
					}
				case "cursorNext":
					// The cursor continues from its key, now discarded:
					// the next key still there.
					k, _ := cur.Next()
					if want := firstAfter(work, string(key(100))); string(k) != want {
						t.Fatalf("next after discards: %q, want %q", k, want)
					}
				}
			}
			if tc.rollback {
				tx.Rollback()
				work = model
			} else if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			verify := func(when string) {
				t.Helper()
				err := db.View(func(tx *Tx) error {
					tr, err := tx.Tree("t")
					if err != nil {
						return err
					}
					if tr.Len() != int64(len(work)) {
						return fmt.Errorf("len %d, want %d", tr.Len(), len(work))
					}
					return verifyTree(tr, work)
				})
				if err != nil {
					t.Fatalf("%s: %v", when, err)
				}
			}
			verify("after commit")
			// Reopen without a checkpoint: recovery replays the record.
			fs.Crash(vfs.CrashOptions{})
			db.Close() // fails: the handles are dead
			db = mustOpen(t, fs, nil)
			verify("after recovery")
			if err := db.Checkpoint(ctx); err != nil {
				t.Fatal(err)
			}
			if err := db.Check(ctx); err != nil {
				t.Fatal(err)
			}
			db.Close()
			db = mustOpen(t, fs, nil)
			verify("after checkpoint and reopen")
			db.Close()
		})
	}
}

func firstAfter(m map[string]string, k string) string {
	best := ""
	for x := range m {
		if x > k && (best == "" || x < best) {
			best = x
		}
	}
	return best
}

// verifyTree compares every entry of tr, in order, with want.
func verifyTree(tr *Tree, want map[string]string) error {
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	c := tr.Cursor()
	i := 0
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if i >= len(keys) || string(k) != keys[i] || string(v) != want[keys[i]] {
			return fmt.Errorf("entry %d: %q=%q, want %d entries", i, k, v, len(keys))
		}
		i++
	}
	if err := c.Err(); err != nil {
		return err
	}
	if i != len(keys) {
		return fmt.Errorf("%d entries, want %d", i, len(keys))
	}
	return nil
}

// TestDiscardSettleFailure: deferred discards that cannot be applied (a
// leaf that does not read back) fail the operation that settles them, and
// the transaction can no longer commit: its journal record would hold
// deletes its tree is missing.
func TestDiscardSettleFailure(t *testing.T) {
	for _, settleBy := range []string{"get", "commit"} {
		t.Run(settleBy, func(t *testing.T) {
			fs := vfs.NewMem()
			opts := memOpts(fs)
			opts.CacheSize = 1 // every clean leaf is evicted at once
			db := mustOpen(t, fs, opts)
			ctx := context.Background()
			const n = 3000
			err := db.Update(ctx, func(tx *Tx) error {
				tr, err := tx.CreateTree("t")
				if err != nil {
					return err
				}
				for i := range n {
					if err := tr.Put(key(i), val(i)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			db.Close()
			db = mustOpen(t, fs, opts)
			defer db.Close()
			// Damage the last leaf on disk.
			tr := db.current.Load().trees["t"]
			root, err := db.load(tr.root)
			if err != nil || root.leaf {
				t.Fatalf("root: %v (leaf %v)", err, root != nil && root.leaf)
			}
			last := root.kids[len(root.kids)-1]
			if last.ptr.Load() != nil {
				t.Skip("the last leaf is resident")
			}
			f, err := fs.OpenFile("/db/"+dataFileName, 2, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt([]byte("garbage"), int64(last.pgid)*int64(db.pageSize)+pageHeaderSize+8); err != nil {
				t.Fatal(err)
			}
			f.Close()

			tx, err := db.BeginWrite(ctx)
			if err != nil {
				t.Fatal(err)
			}
			tt, _ := tx.Tree("t")
			if err := tt.Discard(key(1)); err != nil {
				t.Fatal(err)
			}
			if err := tt.Discard(key(n - 1)); err != nil { // in the damaged leaf
				t.Fatal(err)
			}
			var corrupt *CorruptionError
			if settleBy == "get" {
				if _, err := tt.Get(key(2)); !errors.As(err, &corrupt) {
					t.Fatalf("get settling a damaged leaf: %v", err)
				}
			}
			if err := tx.Commit(); !errors.As(err, &corrupt) {
				t.Fatalf("commit: %v, want a CorruptionError", err)
			}
			// Nothing committed: key(1) is still there.
			err = db.View(func(tx *Tx) error {
				tr, _ := tx.Tree("t")
				v, err := tr.Get(key(1))
				if err != nil || v == nil {
					return fmt.Errorf("key(1): %q, %v", v, err)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
