package kv

import (
	"bytes"
	"context"
	"testing"

	"github.com/cairndb/cairn/kv/vfs"
)

// TestBulkLoadThenWrite changes a bulk-loaded tree (packed leaves, large
// values spanning pages among them) in the transaction that loaded it and
// in later ones, and checks every entry before and after a reopen.
func TestBulkLoadThenWrite(t *testing.T) {
	fs := vfs.NewMem()
	db := mustOpen(t, fs, nil)
	ctx := context.Background()
	const n = 30000
	want := map[string][]byte{}
	bigVal := func(i int) []byte {
		if i%5000 == 7 {
			return bytes.Repeat([]byte{byte(i)}, 3*db.pageSize) // a leaf of its own
		}
		return val(i)
	}
	tx, err := db.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	tr, err := tx.BulkLoad("b", func() ([]byte, []byte, bool, error) {
		if i == n {
			return nil, nil, false, nil
		}
		i++
		want[string(key(i-1))] = bigVal(i - 1)
		return key(i - 1), bigVal(i - 1), true, nil
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for j := 0; j < n; j += 101 {
		if err := tr.Put(key(j), []byte("changed")); err != nil {
			t.Fatal(err)
		}
		want[string(key(j))] = []byte("changed")
		k := key(j + 50)
		if _, err := tr.Delete(k); err != nil {
			t.Fatal(err)
		}
		delete(want, string(k))
	}
	if err := tr.Put([]byte("key-between"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	want["key-between"] = []byte("x")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	check := func(db *DB, label string) {
		t.Helper()
		if err := db.Check(ctx); err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		err := db.View(func(tx *Tx) error {
			tr, err := tx.Tree("b")
			if err != nil {
				return err
			}
			if tr.Len() != int64(len(want)) {
				t.Fatalf("%s: %d entries, want %d", label, tr.Len(), len(want))
			}
			c := tr.Cursor()
			var prev []byte
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if prev != nil && bytes.Compare(prev, k) >= 0 {
					t.Fatalf("%s: %q after %q", label, k, prev)
				}
				prev = append(prev[:0], k...)
				if !bytes.Equal(v, want[string(k)]) {
					t.Fatalf("%s: key %q: value %.20q, want %.20q", label, k, v, want[string(k)])
				}
			}
			return c.Err()
		})
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
	}
	check(db, "after the commit")
	err = db.Update(ctx, func(tx *Tx) error {
		tr, err := tx.Tree("b")
		if err != nil {
			return err
		}
		for j := 1; j < n; j += 997 {
			if err := tr.Put(key(j), []byte("later")); err != nil {
				return err
			}
			want[string(key(j))] = []byte("later")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	check(db, "after a later write")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, fs, nil)
	defer db.Close()
	check(db, "after reopening")
}
