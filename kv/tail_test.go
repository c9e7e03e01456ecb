package kv

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cairndb/cairn/kv/vfs"
)

// shape walks the tree name of tx and returns its nodes by level (0: the
// root) and the entry counts of its right edge, root first.
func shape(t *testing.T, tx *Tx, name string) (nodes []int, edge []int) {
	t.Helper()
	tr, err := tx.Tree(name)
	if err != nil {
		t.Fatal(err)
	}
	level := []*childRef{tr.tr.root}
	for len(level) > 0 {
		nodes = append(nodes, len(level))
		var next []*childRef
		for i, r := range level {
			n, err := tx.db.load(r)
			if err != nil {
				t.Fatal(err)
			}
			if i == len(level)-1 {
				edge = append(edge, n.count())
			}
			next = append(next, n.kids...)
		}
		level = next
	}
	return nodes, edge
}

func seqKey(i int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(i)+1<<40) }

// An append (a key after every key: the oplog, capped collections) keeps
// every node of the tree's right edge at most tailMax+1 entries, so that the
// next appending transaction copies a few dozen entries per level instead
// of up to a page of them, and leaves the tree as packed as a bulk load
// (within a few nodes).
func TestAppendKeepsRightEdgeShort(t *testing.T) {
	for _, c := range []struct {
		name          string
		n, perTx, val int
	}{
		{"small values, one per transaction", 60000, 1, 8},
		{"small values, 7 per transaction", 40000, 7, 16},
		{"oplog-sized values", 8000, 1, 1200},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := vfs.NewMem()
			db := mustOpen(t, fs, &Options{FS: fs, PageSize: 4096, JournalSize: 8 << 20, CheckpointInterval: -1, Durability: NoSync})
			defer db.Close()
			ctx := context.Background()
			if err := db.Update(ctx, func(tx *Tx) error { _, err := tx.CreateTree("log"); return err }); err != nil {
				t.Fatal(err)
			}
			v := bytes.Repeat([]byte{'v'}, c.val)
			worst := 0
			for i := 0; i < c.n; i += c.perTx {
				err := db.Update(ctx, func(tx *Tx) error {
					tr, err := tx.Tree("log")
					if err != nil {
						return err
					}
					for j := i; j < i+c.perTx && j < c.n; j++ {
						if err := tr.Put(seqKey(j), v); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if i%97 != 0 && i+c.perTx < c.n {
					continue
				}
				db.View(func(tx *Tx) error {
					_, edge := shape(t, tx, "log")
					if len(edge) == 1 {
						return nil // a root leaf: it splits when full
					}
					for _, e := range edge {
						worst = max(worst, e)
					}
					if worst > tailMax+1 {
						t.Fatalf("after %d appends the right edge holds %v entries per level, want at most %d", i+c.perTx, edge, tailMax+1)
					}
					return nil
				})
			}
			var got, want []int
			db.View(func(tx *Tx) error {
				got, _ = shape(t, tx, "log")
				tr, _ := tx.Tree("log")
				if tr.Len() != int64(c.n) {
					t.Fatalf("%d entries, want %d", tr.Len(), c.n)
				}
				cur, i := tr.Cursor(), 0
				for k, got := cur.First(); k != nil; k, got = cur.Next() {
					if !bytes.Equal(k, seqKey(i)) || !bytes.Equal(got, v) {
						t.Fatalf("entry %d: %x", i, k)
					}
					i++
				}
				return nil
			})
			// The same entries bulk loaded, pages full.
			if err := db.Update(ctx, func(tx *Tx) error {
				i := 0
				_, err := tx.BulkLoad("bulk", func() ([]byte, []byte, bool, error) {
					if i == c.n {
						return nil, nil, false, nil
					}
					i++
					return seqKey(i - 1), v, true, nil
				}, 1)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			db.View(func(tx *Tx) error { want, _ = shape(t, tx, "bulk"); return nil })
			t.Logf("nodes per level %v (bulk loaded: %v), widest right-edge node %d", got, want, worst)
			if len(got) > len(want)+1 {
				t.Errorf("height %d, bulk loaded %d", len(got), len(want))
			}
			gl, wl := got[len(got)-1], want[len(want)-1]
			if gl > wl+wl/50+2 {
				t.Errorf("%d leaves, bulk loaded %d: appends left them underfull", gl, wl)
			}
		})
	}
}

// Appends mixed with other writes (overwrites, deletes at both ends and
// inside, puts before the first key) keep the tree's contents those of a
// map, across a reopen.
func TestAppendMixedModel(t *testing.T) {
	fs := vfs.NewMem()
	opts := &Options{FS: fs, PageSize: 4096, JournalSize: 1 << 20, CheckpointInterval: -1,
		testing: &testingKnobs{verifyCheckpoints: true}}
	db := mustOpen(t, fs, opts)
	ctx := context.Background()
	if err := db.Update(ctx, func(tx *Tx) error { _, err := tx.CreateTree("t"); return err }); err != nil {
		t.Fatal(err)
	}
	model := map[string]string{}
	r := rand.New(rand.NewPCG(7, 21))
	next, low := 0, 0
	for round := range 3000 {
		err := db.Update(ctx, func(tx *Tx) error {
			tr, err := tx.Tree("t")
			if err != nil {
				return err
			}
			for range 1 + r.IntN(4) {
				var k []byte
				v := []byte(fmt.Sprintf("v%d-%s", round, bytes.Repeat([]byte{'x'}, r.IntN(40))))
				switch op := r.IntN(20); {
				case op < 14: // append
					k = seqKey(next)
					next++
				case op < 16 && next > low: // overwrite
					k = seqKey(low + r.IntN(next-low))
				case op < 18 && next > low: // delete the oldest (truncation)
					k = seqKey(low)
					low++
					if _, err := tr.Delete(k); err != nil {
						return err
					}
					delete(model, string(k))
					continue
				case op < 19 && next > low: // delete inside
					k = seqKey(low + r.IntN(next-low))
					if _, err := tr.Delete(k); err != nil {
						return err
					}
					delete(model, string(k))
					continue
				default: // before every key
					k = append([]byte{0}, seqKey(r.IntN(1000))...)
				}
				if err := tr.Put(k, v); err != nil {
					return err
				}
				model[string(k)] = string(v)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if round == 1500 {
			if err := db.Checkpoint(ctx); err != nil {
				t.Fatal(err)
			}
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
				t.Fatalf("%d entries, model %d", tr.Len(), len(model))
			}
			n := 0
			cur := tr.Cursor()
			for k, v := cur.First(); k != nil; k, v = cur.Next() {
				if model[string(k)] != string(v) {
					t.Fatalf("key %x: %q, model %q", k, v, model[string(k)])
				}
				n++
			}
			if n != len(model) {
				t.Fatalf("cursor saw %d entries, model %d", n, len(model))
			}
			return nil
		})
	}
	check(db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, fs, opts)
	defer db.Close()
	check(db)
	if err := db.Check(ctx); err != nil {
		t.Fatal(err)
	}
}
