package colcache

import (
	"context"
	"strings"
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/kv"
)

// treeSource is a Source made from a tree's documents, as a column store
// index stores them; drop leaves out a row (or, negative, adds a stray
// cell) to make it disagree with the tree.
type treeSource struct {
	t    *kv.Tree
	drop int
}

func (s *treeSource) Name() string   { return "test" }
func (s *treeSource) Parallel() bool { return true }

func (s *treeSource) Rows(ctx context.Context, fn func(key []byte) error) error {
	cur := s.t.Cursor()
	i := 0
	for k, _ := cur.First(); k != nil; k, _ = cur.Next() {
		if i++; i == s.drop {
			continue
		}
		if err := fn(k); err != nil {
			return err
		}
	}
	return cur.Err()
}

func (s *treeSource) Column(ctx context.Context, field string, fn func(key []byte, ord int, val []byte) error) error {
	cur := s.t.Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		it := bson.Doc(v).Iter()
		for ord := 0; it.Next(); ord++ {
			e := it.Element()
			if e.Key == field {
				if err := fn(k, ord, append([]byte{byte(e.Value.Type)}, e.Value.Data...)); err != nil {
					return err
				}
				break
			}
		}
	}
	if s.drop < 0 {
		return fn([]byte("zzz-no-such-document"), 0, []byte{byte(bson.TypeNull)})
	}
	return cur.Err()
}

// TestGetFromSource checks that columns built from stored columns serve
// the same narrow documents as columns built from the documents (field
// order, missing fields, arrays, embedded documents, mixed types, three
// chunks), and that a source out of step with the tree is an error, not
// an answer.
func TestGetFromSource(t *testing.T) {
	db := openDB(t)
	n := 2*chunkRows + 77
	putDocs(t, db, 0, n, "s")
	c := New(Options{})
	for _, fields := range [][]string{{"a"}, {"c", "pad1"}, {"_id", "a", "b", "c"}, {"missing", "b"}} {
		err := db.View(func(tx *kv.Tx) error {
			tr, _ := tx.Tree("data")
			s, err := c.GetFrom(context.Background(), tr, fields, false, &treeSource{t: tr})
			if err != nil || s == nil || s.Rows() != n {
				t.Fatalf("%v: %v, %v", fields, s, err)
			}
			checkSet(t, s, tr)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if st := c.Stats(); st.FromSource != 4 || st.Builds != 4 {
		t.Errorf("stats %+v: want 4 builds, all from the source", st)
	}
	for _, tc := range []struct {
		drop int
		want string
	}{{5, "holds"}, {-1, "no document has"}} {
		c := New(Options{})
		err := db.View(func(tx *kv.Tx) error {
			tr, _ := tx.Tree("data")
			_, err := c.GetFrom(context.Background(), tr, []string{"a", "c"}, false, &treeSource{t: tr, drop: tc.drop})
			return err
		})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("drop %d: err %v, want one saying %q", tc.drop, err, tc.want)
		}
	}
}
