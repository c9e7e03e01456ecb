package kv

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// laterDB returns a DB whose tree "t" holds keys k0000…k1999 (several
// levels) with values "v0".
func laterDB(t *testing.T) *DB {
	t.Helper()
	db := openConcDB(t, nil)
	if err := db.Update(context.Background(), func(tx *Tx) error {
		tr, err := tx.CreateTree("t")
		if err != nil {
			return err
		}
		for i := range 2000 {
			if err := tr.Put(fmt.Appendf(nil, "k%04d", i), []byte("v0")); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestLaterPutsCopyNothing: a concurrent transaction's puts into a tree
// that is not empty leave its private copy of the tree untouched (no path
// copied) until it reads the tree otherwise than by Get, and its Gets see
// them; the commit writes them.
func TestLaterPutsCopyNothing(t *testing.T) {
	db := laterDB(t)
	tx, err := db.BeginConcurrent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	snapRoot := tx.snap.trees["t"].root
	mustPut(t, tx, "t", "k0001", "v1")
	mustPut(t, tx, "t", "k5000", "new")
	mustPut(t, tx, "t", "k0001", "v2")
	tr := tx.trees["t"]
	if tr.root != snapRoot || len(tr.later) != 3 {
		t.Fatalf("after 3 puts: private root copied %v, %d later puts; want no copy, 3", tr.root != snapRoot, len(tr.later))
	}
	for k, want := range map[string]string{"k0001": "v2", "k5000": "new", "k0002": "v0", "k4999": "<nil>"} {
		if got := getStr(t, tx, "t", k); got != want {
			t.Errorf("Get(%s) = %s, want %s", k, got, want)
		}
	}
	if tr.root != snapRoot {
		t.Fatal("Get copied the private tree")
	}
	tree, _ := tx.Tree("t")
	if n := tree.Len(); n != 2001 {
		t.Fatalf("Len = %d, want 2001", n)
	}
	if tr.root == snapRoot || tr.later != nil {
		t.Fatal("Len did not apply the later puts")
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.View(func(rt *Tx) error {
		for k, want := range map[string]string{"k0001": "v2", "k5000": "new", "k0002": "v0"} {
			if got := getStr(t, rt, "t", k); got != want {
				t.Errorf("after commit Get(%s) = %s, want %s", k, got, want)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestLaterPutsModel runs random operations in concurrent transactions
// over the tree of laterDB, checking every read against a model, with an
// open cursor moving across puts, then the committed tree against the
// model.
func TestLaterPutsModel(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	db := laterDB(t)
	model := map[string]string{}
	for i := range 2000 {
		model[fmt.Sprintf("k%04d", i)] = "v0"
	}
	key := func() string { // half of them among 20 hot keys, present or not
		if r.IntN(2) == 0 {
			return fmt.Sprintf("k%04d", 1990+r.IntN(20))
		}
		return fmt.Sprintf("k%04d", r.IntN(2200))
	}
	for round := range 20 {
		tx, err := db.BeginConcurrent(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		tree, err := tx.Tree("t")
		if err != nil {
			t.Fatal(err)
		}
		cur := tree.Cursor()
		ck, _ := cur.First()
		want := map[string]string{}
		maps.Copy(want, model)
		for step := range 200 {
			where := fmt.Sprintf("seed %d round %d step %d", seed, round, step)
			switch op := r.IntN(40); { // mostly puts and gets: long later lists
			case op < 20:
				k, v := key(), fmt.Sprintf("r%d.%d", round, step)
				if err := tree.Put([]byte(k), []byte(v)); err != nil {
					t.Fatalf("%s: put: %v", where, err)
				}
				want[k] = v
			case op < 36:
				k := key()
				got, err := tree.Get([]byte(k))
				if err != nil {
					t.Fatalf("%s: get: %v", where, err)
				}
				if w, ok := want[k]; string(got) != w || (got == nil) == ok {
					t.Fatalf("%s: Get(%s) = %q, want %q (present %v)", where, k, got, w, ok)
				}
			case op < 38:
				k := key()
				found, err := tree.Delete([]byte(k))
				if err != nil {
					t.Fatalf("%s: delete: %v", where, err)
				}
				if _, ok := want[k]; found != ok {
					t.Fatalf("%s: Delete(%s) found %v, want %v", where, k, found, ok)
				}
				delete(want, k)
			case op < 39:
				if n := tree.Len(); n != int64(len(want)) {
					t.Fatalf("%s: Len = %d, want %d", where, n, len(want))
				}
			default:
				// The open cursor moves on: its next key is the model's
				// next key after the one it is on.
				if ck == nil {
					ck, _ = cur.First()
					break
				}
				prev := string(ck)
				ck, _ = cur.Next()
				keys := slices.Sorted(maps.Keys(want))
				i, _ := slices.BinarySearch(keys, prev+"\x00")
				wantNext := ""
				if i < len(keys) {
					wantNext = keys[i]
				}
				if string(ck) != wantNext {
					t.Fatalf("%s: cursor after %s at %q, want %q", where, prev, ck, wantNext)
				}
			}
		}
		if err := cur.Err(); err != nil {
			t.Fatal(err)
		}
		if r.IntN(4) == 0 {
			tx.Rollback()
			continue
		}
		if err := tx.Commit(); err != nil {
			t.Fatalf("seed %d round %d: commit: %v", seed, round, err)
		}
		model = want
	}
	if err := db.View(func(rt *Tx) error {
		tree, err := rt.Tree("t")
		if err != nil {
			return err
		}
		got := map[string]string{}
		c := tree.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			got[string(k)] = string(v)
		}
		if !maps.Equal(got, model) {
			t.Errorf("seed %d: committed tree has %d keys, model %d (or values differ)", seed, len(got), len(model))
		}
		return c.Err()
	}); err != nil {
		t.Fatal(err)
	}
}
