package kv

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/cairndb/cairn/kv/vfs"
)

// TestPutIntoPackedLeaves puts into trees whose leaves are packed (bulk
// loaded and checkpointed, or read back after a reopen), in transactions
// that insert new keys, replace values (smaller, equal and larger), touch
// a leaf several times and split full leaves. After every transaction the
// tree must hold the model, a snapshot taken before it must still hold the
// state before, the offline check must pass after a reopen, and no put may
// add more than one leaf (a split leaves two pieces).
func TestPutIntoPackedLeaves(t *testing.T) {
	cases := []struct {
		name   string
		n      int    // keys bulk loaded
		prefix string // shared key prefix (stripped by the leaves)
		vlen   int    // value length of the load and of new keys
		txs    int
		puts   int // per transaction
		reopen bool
	}{
		{"random new keys", 3000, "", 40, 5, 300, false},
		{"after reopen", 3000, "", 40, 5, 300, true},
		{"shared prefix", 3000, "collection/index/", 30, 5, 300, false},
		{"large values", 400, "", 700, 4, 100, false},
		{"one leaf many times", 200, "", 40, 3, 2000, false},
		{"empty values", 2000, "", 0, 3, 400, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			db := mustOpen(t, fs, nil)
			defer func() { db.Close() }()
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(uint64(tc.n), uint64(tc.puts)))
			mk := func(i int) []byte { return fmt.Appendf(nil, "%s%08d", tc.prefix, i) }
			mv := func(n int) []byte {
				v := make([]byte, n)
				for j := range v {
					v[j] = byte('a' + rng.IntN(26))
				}
				return v
			}
			model := map[string]string{}
			err := db.Update(ctx, func(tx *Tx) error {
				i := 0
				_, err := tx.BulkLoad("t", func() ([]byte, []byte, bool, error) {
					if i == tc.n {
						return nil, nil, false, nil
					}
					k, v := mk(2*i), mv(tc.vlen) // even keys: new keys go between
					model[string(k)] = string(v)
					i++
					return k, v, true, nil
				}, 1.0)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			for x := range tc.txs {
				if tc.reopen {
					if err := db.Close(); err != nil {
						t.Fatal(err)
					}
					db = mustOpen(t, fs, nil)
				} else if err := db.Checkpoint(ctx); err != nil {
					t.Fatal(err)
				}
				before := maps.Clone(model)
				snap, err := db.BeginRead()
				if err != nil {
					t.Fatal(err)
				}
				leavesBefore := countLeaves(t, db)
				err = db.Update(ctx, func(tx *Tx) error {
					tr, err := tx.Tree("t")
					if err != nil {
						return err
					}
					for range tc.puts {
						i := rng.IntN(2 * tc.n)
						if tc.name == "one leaf many times" {
							i = rng.IntN(40)
						}
						k := mk(i)
						vl := tc.vlen
						if _, ok := model[string(k)]; ok && tc.vlen > 0 {
							vl = []int{tc.vlen / 2, tc.vlen, 2 * tc.vlen}[rng.IntN(3)]
						}
						v := mv(vl)
						if err := tr.Put(k, v); err != nil {
							return err
						}
						model[string(k)] = string(v)
						if got, _ := tr.Get(k); !bytes.Equal(got, v) {
							return fmt.Errorf("get %q after put: %q", k, got)
						}
					}
					return verifyTree(tr, model)
				})
				if err != nil {
					t.Fatalf("tx %d: %v", x, err)
				}
				if err := db.View(func(tx *Tx) error {
					tr, err := tx.Tree("t")
					if err != nil {
						return err
					}
					return verifyTree(tr, model)
				}); err != nil {
					t.Fatalf("tx %d: after commit: %v", x, err)
				}
				st, err := snap.Tree("t")
				if err != nil {
					t.Fatal(err)
				}
				if err := verifyTree(st, before); err != nil {
					t.Fatalf("tx %d: snapshot from before: %v", x, err)
				}
				snap.Rollback()
				// At most two pieces per split: every put adds at most
				// one leaf.
				if after := countLeaves(t, db); after-leavesBefore > tc.puts {
					t.Fatalf("tx %d: %d leaves became %d with %d puts", x, leavesBefore, after, tc.puts)
				}
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if err := Check("/db", memOpts(fs)); err != nil {
				t.Fatalf("check: %v", err)
			}
			db = mustOpen(t, fs, nil)
			if err := db.View(func(tx *Tx) error {
				tr, err := tx.Tree("t")
				if err != nil {
					return err
				}
				if tr.Len() != int64(len(model)) {
					return fmt.Errorf("Len %d, want %d", tr.Len(), len(model))
				}
				return verifyTree(tr, model)
			}); err != nil {
				t.Fatalf("after reopen: %v", err)
			}
		})
	}
}

// countLeaves returns the number of leaves of tree "t" in the latest
// committed state.
func countLeaves(t *testing.T, db *DB) int {
	t.Helper()
	leaves := 0
	err := db.View(func(tx *Tx) error {
		tr := tx.trees["t"]
		var walk func(r *childRef, h int) error
		walk = func(r *childRef, h int) error {
			if h == 1 {
				leaves++
				return nil
			}
			n, err := db.load(r)
			if err != nil {
				return err
			}
			for _, k := range n.kids {
				if err := walk(k, h-1); err != nil {
					return err
				}
			}
			return nil
		}
		return walk(tr.root, tr.height)
	})
	if err != nil {
		t.Fatal(err)
	}
	return leaves
}

// TestHalfSplitTwoPieces: a full unpacked leaf that a put in its middle
// makes overflow is split into two leaves, not into two halves and a leaf
// of one entry (the pieces after the first fill their pages).
func TestHalfSplitTwoPieces(t *testing.T) {
	db := mustOpen(t, vfs.NewMem(), nil)
	defer db.Close()
	tx, err := db.BeginWrite(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, n := range []int{55, 56, 60, 80, 100} { // entries of 75 bytes, 4 KiB pages
		for _, at := range []int{0, 1, n / 2, n - 2} {
			m := &node{leaf: true, txid: tx.id, size: pageHeaderSize}
			for i := range n {
				m.keys = append(m.keys, key(i))
				m.vals = append(m.vals, bytes.Repeat([]byte{'v'}, 62))
				m.size += leafEntrySize(m.keys[i], m.vals[i])
			}
			m.buildPrefixes()
			res := tx.maybeSplit(m, at)
			want := 2
			if m.size > 2*tx.pageSize() {
				want = 3
			}
			total := 0
			for _, p := range res {
				if p.size > tx.pageSize() {
					t.Errorf("%d entries, change at %d: a piece of %d bytes", n, at, p.size)
				}
				total += p.count()
			}
			if len(res) > want || total != n {
				t.Errorf("%d entries, change at %d: %d pieces holding %d entries, want at most %d pieces", n, at, len(res), total, want)
			}
		}
	}
}
