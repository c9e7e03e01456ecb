package index

import (
	"bytes"
	"context"
	"errors"
	"sort"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/kv"
)

// TestColumnStoreSpecs checks createIndexes' validation of column store
// indexes (mongod's jstests/core/columnstore_validindex.js cases) and the
// fields each accepted spec stores.
func TestColumnStoreSpecs(t *testing.T) {
	cs := dbson.D{{Key: "$**", Value: "columnstore"}}
	spec := func(key dbson.D, opts ...dbson.E) dbson.D {
		return append(dbson.D{{Key: "key", Value: key}}, opts...)
	}
	proj := func(p dbson.D) dbson.E { return dbson.E{Key: "columnstoreProjection", Value: p} }
	cases := []struct {
		name   string
		spec   dbson.D
		code   int32    // expected error code (0: accepted)
		stores []string // fields stored, of a, b, c, _id, z
	}{
		{"all", spec(cs), 0, []string{"a", "b", "c", "_id", "z"}},
		{"subtree", spec(dbson.D{{Key: "a.$**", Value: "columnstore"}}), 0, []string{"a"}},
		{"inclusion", spec(cs, proj(dbson.D{{Key: "a", Value: 1}, {Key: "b", Value: true}})), 0, []string{"a", "b", "_id"}},
		{"exclusion", spec(cs, proj(dbson.D{{Key: "a", Value: 0}, {Key: "b", Value: 0}})), 0, []string{"c", "_id", "z"}},
		{"exclusion keeps _id", spec(cs, proj(dbson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 0}})), 0, []string{"b", "c", "_id", "z"}},
		{"inclusion without _id", spec(cs, proj(dbson.D{{Key: "_id", Value: 0}, {Key: "a", Value: 1}})), 0, []string{"a"}},
		{"dotted inclusion keeps the top field", spec(cs, proj(dbson.D{{Key: "c.x", Value: 1}})), 0, []string{"c", "_id"}},
		{"hidden", spec(cs, dbson.E{Key: "hidden", Value: true}), 0, []string{"a", "b", "c", "_id", "z"}},
		{"collation", spec(cs, dbson.E{Key: "collation", Value: dbson.D{{Key: "locale", Value: "fr"}}}), mongoerr.CannotCreateIndex, nil},
		{"partial", spec(cs, dbson.E{Key: "partialFilterExpression", Value: dbson.D{{Key: "a", Value: dbson.D{{Key: "$gt", Value: 0}}}}}), mongoerr.CannotCreateIndex, nil},
		{"sparse", spec(cs, dbson.E{Key: "sparse", Value: true}), mongoerr.CannotCreateIndex, nil},
		{"ttl", spec(cs, dbson.E{Key: "expireAfterSeconds", Value: 3000}), mongoerr.CannotCreateIndex, nil},
		{"v1", spec(cs, dbson.E{Key: "v", Value: 1}), mongoerr.CannotCreateIndex, nil},
		{"unique", spec(cs, dbson.E{Key: "unique", Value: true}), mongoerr.CannotCreateIndex, nil},
		{"wildcardProjection", spec(cs, dbson.E{Key: "wildcardProjection", Value: dbson.D{{Key: "a", Value: 1}}}), mongoerr.BadValue, nil},
		{"capitalised", spec(dbson.D{{Key: "$**", Value: "ColumnStore"}}), mongoerr.CannotCreateIndex, nil},
		{"compound", spec(dbson.D{{Key: "$**", Value: "columnstore"}, {Key: "a", Value: 1}}), mongoerr.CannotCreateIndex, nil},
		{"compound after", spec(dbson.D{{Key: "a", Value: 1}, {Key: "$**", Value: "columnstore"}}), mongoerr.CannotCreateIndex, nil},
		{"double wildcard", spec(dbson.D{{Key: "a.$**.$**", Value: "columnstore"}}), mongoerr.CannotCreateIndex, nil},
		{"plain path", spec(dbson.D{{Key: "a", Value: "columnstore"}}), mongoerr.CannotCreateIndex, nil},
		{"mixed projection", spec(cs, proj(dbson.D{{Key: "a", Value: 1}, {Key: "b", Value: 0}})), mongoerr.ExclusionInInclusionProjection, nil},
		{"computed projection", spec(cs, proj(dbson.D{{Key: "a", Value: 1}, {Key: "b", Value: "string"}})), mongoerr.IndexProjectionNotFieldPath, nil},
		{"empty projection", spec(cs, proj(dbson.D{})), mongoerr.FailedToParse, nil},
		{"projection not an object", spec(dbson.D{{Key: "a.$**", Value: "columnstore"}}, dbson.E{Key: "columnstoreProjection", Value: "string"}), mongoerr.TypeMismatch, nil},
		{"projection on another index", spec(dbson.D{{Key: "a", Value: 1}}, proj(dbson.D{{Key: "a", Value: 1}})), mongoerr.InvalidIndexSpecificationOption, nil},
		{"projection on a wildcard index", spec(dbson.D{{Key: "$**", Value: 1}}, proj(dbson.D{{Key: "a", Value: 1}})), mongoerr.InvalidIndexSpecificationOption, nil},
		{"subtree and projection", spec(dbson.D{{Key: "a.$**", Value: "columnstore"}}, proj(dbson.D{{Key: "a", Value: 1}})), mongoerr.FailedToParse, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(doc(t, tc.spec))
			if tc.code != 0 {
				var me *mongoerr.Error
				if !errors.As(err, &me) || me.Code != tc.code {
					t.Fatalf("got %v, want code %d", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Column == nil || s.Usable() {
				t.Fatalf("Column %v, Usable %v: want a column store the planner does not use", s.Column, s.Usable())
			}
			var got []string
			for _, f := range []string{"a", "b", "c", "_id", "z"} {
				if s.Column.Stores(f) {
					got = append(got, f)
				}
			}
			if !equalStrings(got, tc.stores) {
				t.Errorf("stores %v, want %v", got, tc.stores)
			}
		})
	}
	s, err := Parse(doc(t, spec(cs)))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "$**_columnstore" {
		t.Errorf("default name %q, want $**_columnstore", s.Name)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestColumnStoreEntries checks the entries a document makes: one per
// stored field (the first of repeated keys), keyed by column and document
// key, valued by the field's ordinal and value, and one row-id entry; and
// that the bulk build and Insert make the same tree.
func TestColumnStoreEntries(t *testing.T) {
	s, err := Parse(doc(t, dbson.D{{Key: "key", Value: dbson.D{{Key: "$**", Value: "columnstore"}}}, {Key: "columnstoreProjection", Value: dbson.D{{Key: "skip", Value: 0}}}}))
	if err != nil {
		t.Fatal(err)
	}
	// A raw document with a repeated key (the driver would not build one).
	var b bson.Builder
	b.AppendInt32("_id", 7)
	b.AppendString("skip", "no")
	b.AppendDocument("sub", doc(t, dbson.D{{Key: "x", Value: dbson.A{1, 2}}}))
	b.AppendInt64("n", 5)
	b.AppendString("n", "second")
	d := b.Finish()
	id := []byte("K7")
	type ent struct{ key, val string }
	var got []ent
	keys, _, err := s.Keys(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		ek, ev := s.EntryOf(k, id)
		got = append(got, ent{string(ek), string(ev)})
	}
	sub, _ := d.Lookup("sub")
	idv, _ := d.Lookup("_id")
	nv, _ := d.Lookup("n")
	cell := func(ord int, v bson.Value) string { return string(append([]byte{byte(ord), byte(v.Type)}, v.Data...)) }
	want := []ent{
		{string(ColumnPrefix(RowIDColumn)) + "K7", "\x00"},
		{string(ColumnPrefix("n")) + "K7", cell(3, nv)},
		{string(ColumnPrefix("_id")) + "K7", cell(0, idv)},
		{string(ColumnPrefix("sub")) + "K7", cell(2, sub)},
	}
	sort.Slice(want, func(i, j int) bool { return want[i].key < want[j].key })
	if len(got) != len(want) {
		t.Fatalf("entries %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d = %q, want %q", i, got[i], want[i])
		}
	}
	c, ok := DecodeCell([]byte(want[3].val))
	if !ok || c.Ordinal != 2 || !bson.Equal(c.Value, sub) {
		t.Errorf("DecodeCell = %v %v", c, ok)
	}
	if _, ok := DecodeCell([]byte{0, byte(bson.TypeInt64), 1}); ok {
		t.Error("DecodeCell accepted a truncated value")
	}

	// The bulk build and one-by-one inserts make the same entries.
	db, err := kv.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.BeginWrite(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	data, err := tx.CreateTree("data")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		dv := dbson.D{{Key: "_id", Value: i}, {Key: "v", Value: i % 7}}
		if i%3 == 0 {
			dv = append(dv, dbson.E{Key: "big", Value: string(bytes.Repeat([]byte{'x'}, 70000))})
		}
		if err := data.Put([]byte{byte(i >> 8), byte(i)}, doc(t, dv)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := Build(context.Background(), tx, data, "bulk", "db.c", s, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.CreateTree("one"); err != nil {
		t.Fatal(err)
	}
	one, err := Open(tx, "one", "db.c", s)
	if err != nil {
		t.Fatal(err)
	}
	cur := data.Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		if _, err := one.Insert(v, k); err != nil {
			t.Fatal(err)
		}
	}
	bulk, err := tx.Tree("bulk")
	if err != nil {
		t.Fatal(err)
	}
	if bulk.Len() != one.T.Len() || bulk.Len() != 300*2+300+100 {
		t.Fatalf("bulk %d entries, inserts %d, want %d", bulk.Len(), one.T.Len(), 300*2+300+100)
	}
	bc, oc := bulk.Cursor(), one.T.Cursor()
	bk, bv := bc.First()
	ok2, ov := oc.First()
	for bk != nil {
		if !bytes.Equal(bk, ok2) || !bytes.Equal(bv, ov) {
			t.Fatalf("bulk entry %x=%x, insert entry %x=%x", bk, bv[:min(len(bv), 16)], ok2, ov[:min(len(ov), 16)])
		}
		bk, bv = bc.Next()
		ok2, ov = oc.Next()
	}
}
