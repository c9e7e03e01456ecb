package index

import (
	"bytes"
	"context"
	"errors"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/kv"
)

// TestHashedValueStable pins the hash of hashed indexes to FNV-1a of the
// key encoding: existing indexes depend on it.
func TestHashedValueStable(t *testing.T) {
	for _, d := range []dbson.D{{{Key: "v", Value: 1}}, {{Key: "v", Value: "abc"}}, {{Key: "v", Value: 2.5}}, {{Key: "v", Value: dbson.D{{Key: "x", Value: true}}}}} {
		v, _ := doc(t, d).Lookup("v")
		h := fnv.New64a()
		h.Write(bson.AppendKey(nil, v, false))
		if got := HashedValue(v); got != int64(h.Sum64()) {
			t.Errorf("HashedValue(%v) = %d, want %d", v, got, int64(h.Sum64()))
		}
	}
}

// buildDocs loads n documents into a fresh engine's "data" tree.
func buildDocs(t *testing.T, n int, dupAt int) *kv.DB {
	t.Helper()
	db, err := kv.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	rng := rand.New(rand.NewPCG(3, 4))
	i := 0
	err = db.Update(context.Background(), func(tx *kv.Tx) error {
		_, err := tx.BulkLoad("data", func() ([]byte, []byte, bool, error) {
			if i == n {
				return nil, nil, false, nil
			}
			u := i
			if i == dupAt {
				u = 7
			}
			arr := dbson.A{rng.IntN(50), rng.IntN(50), rng.IntN(50)}
			raw, _ := dbson.Marshal(dbson.D{{Key: "_id", Value: i}, {Key: "r", Value: rng.IntN(1000)}, {Key: "u", Value: u}, {Key: "arr", Value: arr}, {Key: "s", Value: "w" + string(rune('a'+i%26))}})
			v, _ := bson.Doc(raw).Lookup("_id")
			i++
			return bson.AppendKey(nil, v, false), raw, true, nil
		}, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestBuildWorkersAgree builds the same indexes with one and with several
// extractors and compares every entry.
func TestBuildWorkersAgree(t *testing.T) {
	db := buildDocs(t, 3000, -1)
	specs := []dbson.D{
		{{Key: "key", Value: dbson.D{{Key: "r", Value: 1}}}},
		{{Key: "key", Value: dbson.D{{Key: "r", Value: -1}, {Key: "arr", Value: 1}}}},
		{{Key: "key", Value: dbson.D{{Key: "u", Value: 1}}}, {Key: "unique", Value: true}},
		{{Key: "key", Value: dbson.D{{Key: "s", Value: "hashed"}}}},
	}
	dump := func(workers int) [][]byte {
		var out [][]byte
		err := db.Update(context.Background(), func(tx *kv.Tx) error {
			data, err := tx.Tree("data")
			if err != nil {
				return err
			}
			var targets []*BuildTarget
			for i, sd := range specs {
				s, err := Parse(doc(t, sd))
				if err != nil {
					return err
				}
				targets = append(targets, &BuildTarget{Spec: s, TreeName: "ix" + string(rune('0'+i))})
			}
			if err := BuildAllWith(context.Background(), tx, data, "t.c", targets, BuildOptions{Workers: workers}); err != nil {
				return err
			}
			if !targets[1].Multikey || targets[0].Multikey {
				t.Errorf("workers %d: multikey flags %v %v", workers, targets[0].Multikey, targets[1].Multikey)
			}
			for _, tg := range targets {
				tr, err := tx.Tree(tg.TreeName)
				if err != nil {
					return err
				}
				c := tr.Cursor()
				var prev []byte
				for k, v := c.First(); k != nil; k, v = c.Next() {
					if prev != nil && bytes.Compare(prev, k) >= 0 {
						t.Fatalf("workers %d: index %s out of order", workers, tg.Spec.Name)
					}
					prev = append(prev[:0], k...)
					out = append(out, append(append([]byte(tg.TreeName), k...), v...))
				}
				if err := tx.DropTree(tg.TreeName); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	one, three := dump(1), dump(3)
	if len(one) == 0 || len(one) != len(three) {
		t.Fatalf("entries: %d with one worker, %d with three", len(one), len(three))
	}
	for i := range one {
		if !bytes.Equal(one[i], three[i]) {
			t.Fatalf("entry %d differs", i)
		}
	}
}

// TestBuildUniqueAcrossRuns finds a duplicate whose two documents went to
// different extractors.
func TestBuildUniqueAcrossRuns(t *testing.T) {
	db := buildDocs(t, 3000, 2500)
	for _, workers := range []int{1, 2} {
		err := db.Update(context.Background(), func(tx *kv.Tx) error {
			data, _ := tx.Tree("data")
			s, err := Parse(doc(t, dbson.D{{Key: "key", Value: dbson.D{{Key: "u", Value: 1}}}, {Key: "unique", Value: true}}))
			if err != nil {
				return err
			}
			return BuildAllWith(context.Background(), tx, data, "t.c", []*BuildTarget{{Spec: s, TreeName: "u"}}, BuildOptions{Workers: workers})
		})
		if e := mongoerr.As(err); e == nil || e.Code != mongoerr.DuplicateKey {
			t.Errorf("workers %d: %v, want a duplicate key", workers, err)
		}
	}
}

// TestBuildSpills builds with a tiny memory budget, so that every worker
// spills many sorted runs, and compares with an in-memory build; a
// duplicate across spilled runs is still found, and no file is left.
func TestBuildSpills(t *testing.T) {
	db := buildDocs(t, 3000, 2500)
	tmp := t.TempDir()
	build := func(o BuildOptions, sd dbson.D) ([][]byte, error) {
		var out [][]byte
		err := db.Update(context.Background(), func(tx *kv.Tx) error {
			data, _ := tx.Tree("data")
			s, err := Parse(doc(t, sd))
			if err != nil {
				return err
			}
			if err := BuildAllWith(context.Background(), tx, data, "t.c", []*BuildTarget{{Spec: s, TreeName: "ix"}}, o); err != nil {
				return err
			}
			tr, _ := tx.Tree("ix")
			c := tr.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				out = append(out, append(append([]byte(nil), k...), v...))
			}
			return tx.DropTree("ix")
		})
		return out, err
	}
	multikey := dbson.D{{Key: "key", Value: dbson.D{{Key: "arr", Value: 1}, {Key: "r", Value: -1}}}}
	for _, workers := range []int{1, 2} {
		mem, err := build(BuildOptions{Workers: workers}, multikey)
		if err != nil {
			t.Fatal(err)
		}
		spilled, err := build(BuildOptions{Workers: workers, MemoryBudget: 16 << 10, TempDir: tmp}, multikey)
		if err != nil {
			t.Fatal(err)
		}
		if len(mem) != len(spilled) || len(mem) < 3000 {
			t.Fatalf("workers %d: %d entries in memory, %d spilled", workers, len(mem), len(spilled))
		}
		for i := range mem {
			if !bytes.Equal(mem[i], spilled[i]) {
				t.Fatalf("workers %d: entry %d differs", workers, i)
			}
		}
		_, err = build(BuildOptions{Workers: workers, MemoryBudget: 16 << 10, TempDir: tmp}, dbson.D{{Key: "key", Value: dbson.D{{Key: "u", Value: 1}}}, {Key: "unique", Value: true}})
		if e := mongoerr.As(err); e == nil || e.Code != mongoerr.DuplicateKey {
			t.Errorf("workers %d: spilled unique build: %v", workers, err)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("%d spill directories left behind", len(left))
	}
}

// TestBuildLongKeys builds indexes whose entries' lengths lie around 64
// KiB, where an entry's lengths no longer fit its 16-bit fields and move
// into the arena (long entries), and far beyond, in memory and spilled.
func TestBuildLongKeys(t *testing.T) {
	db, err := kv.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	// A string of n bytes gives a key of n+4 bytes (tag, terminator) and,
	// non-unique, n+6 with the _id: the lengths 65534-65537 meet both.
	lens := []int{1, 300, 40000, 65528, 65529, 65530, 65531, 65532, 65533, 65534, 17, 1 << 20, 3 << 20, 70000, 5}
	build := func(lens []int, sd dbson.D, o BuildOptions) (got, want map[int]int, err error) {
		got, want = map[int]int{}, map[int]int{} // key length -> entries
		err = db.Update(context.Background(), func(tx *kv.Tx) error {
			i := 0
			data, err := tx.BulkLoad("data", func() ([]byte, []byte, bool, error) {
				if i == len(lens) {
					return nil, nil, false, nil
				}
				raw, _ := dbson.Marshal(dbson.D{{Key: "_id", Value: i}, {Key: "s", Value: strings.Repeat("x", lens[i])}})
				v, _ := bson.Doc(raw).Lookup("_id")
				i++
				return bson.AppendKey(nil, v, false), raw, true, nil
			}, 0)
			if err != nil {
				return err
			}
			s, err := Parse(doc(t, sd))
			if err != nil {
				return err
			}
			if err := BuildAllWith(context.Background(), tx, data, "t.c", []*BuildTarget{{Spec: s, TreeName: "ix"}}, o); err != nil {
				return err
			}
			c := data.Cursor()
			for _, d := c.First(); d != nil; _, d = c.Next() {
				keys, _, err := s.Keys(d)
				if err != nil {
					return err
				}
				want[len(keys[0])]++
			}
			tr, _ := tx.Tree("ix")
			c = tr.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if s.Unique {
					got[len(k)]++
				} else {
					got[len(k)-len(v)]++
				}
				if id, rest, err := bson.DecodeKey(v); err != nil || len(rest) > 0 || !id.IsNumber() {
					t.Errorf("entry of %d bytes: value %x is not an _id (%v)", len(k), v, err)
				}
			}
			return errors.New("roll back")
		})
		if err != nil && err.Error() == "roll back" {
			err = nil
		}
		return got, want, err
	}
	for _, o := range []BuildOptions{{}, {Workers: 2, MemoryBudget: 64 << 10, TempDir: t.TempDir()}} {
		for _, sd := range []dbson.D{
			{{Key: "key", Value: dbson.D{{Key: "s", Value: 1}}}},
			{{Key: "key", Value: dbson.D{{Key: "s", Value: -1}}}, {Key: "unique", Value: true}},
		} {
			got, want, err := build(lens, sd, o)
			if err != nil {
				t.Fatalf("%v (budget %d): %v", sd, o.MemoryBudget, err)
			}
			if len(want) != len(lens) || !maps.Equal(got, want) {
				t.Errorf("%v (budget %d): entries by key length %v, want %v", sd, o.MemoryBudget, got, want)
			}
		}
	}
}
