package colcache

import (
	"context"
	"fmt"
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/kv"
)

// TestScanEqual: a scan narrowed by an equality serves, in order, exactly
// the rows whose value may equal the wanted one: numbers equal across
// types, the same string, and the arrays, documents and decimals it
// leaves to the caller; never a different number or string, a missing
// field or another type. A value found only in the last chunk is found.
func TestScanEqual(t *testing.T) {
	db := openDB(t)
	rows := 3*chunkRows + 100
	kinds := 10
	err := db.Update(context.Background(), func(tx *kv.Tx) error {
		tr, err := tx.CreateTreeIfNotExists("data")
		if err != nil {
			return err
		}
		for i := 0; i < rows; i++ {
			var b bson.Builder
			b.AppendInt32("_id", int32(i))
			switch k := i % 7; i % kinds {
			case 0:
				b.AppendInt32("v", int32(k))
			case 1:
				b.AppendInt64("v", int64(k))
			case 2:
				b.AppendDouble("v", float64(k))
			case 3:
				b.AppendDouble("v", float64(k)+0.5)
			case 4:
				b.AppendString("v", fmt.Sprintf("s%d", k))
			case 5:
				b.AppendDecimal128("v", 0x3040000000000000, uint64(k))
			case 6:
				b.StartArray("v")
				b.AppendInt32("0", int32(k))
				b.End()
			case 7:
				b.StartDocument("v")
				b.AppendInt32("x", int32(k))
				b.End()
			case 8:
				b.AppendNull("v")
			}
			if i == rows-1 {
				b = bson.Builder{}
				b.AppendInt32("_id", int32(i))
				b.AppendInt32("v", 99999)
			}
			if err := tr.Put(docKey(i), b.Finish()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c := New(Options{})
	for _, tc := range []struct {
		name string
		want bson.Value
		keep func(i int) bool
	}{
		{"int 3", val(func(b *bson.Builder) { b.AppendInt32("v", 3) }), func(i int) bool {
			switch i % kinds {
			case 0, 1, 2:
				return i%7 == 3
			case 5, 6, 7:
				return true
			}
			return false
		}},
		{"double 3.5", val(func(b *bson.Builder) { b.AppendDouble("v", 3.5) }), func(i int) bool {
			switch i % kinds {
			case 3:
				return i%7 == 3
			case 5, 6, 7:
				return true
			}
			return false
		}},
		{"string s2", val(func(b *bson.Builder) { b.AppendString("v", "s2") }), func(i int) bool {
			switch i % kinds {
			case 4:
				return i%7 == 2
			case 6, 7:
				return true
			}
			return false
		}},
		{"last row", val(func(b *bson.Builder) { b.AppendInt64("v", 99999) }), func(i int) bool { return i == rows-1 || (i%kinds >= 5 && i%kinds <= 7 && i != rows-1) }},
	} {
		err := db.View(func(tx *kv.Tx) error {
			tr, _ := tx.Tree("data")
			s, err := c.Get(context.Background(), tr, []string{"_id", "v"}, false)
			if err != nil || s == nil {
				t.Fatalf("%v %v", s, err)
			}
			sc := s.Scan()
			if sc.Equal("nope", tc.want) || !sc.Equal("v", tc.want) {
				t.Fatalf("%s: Equal accepted the wrong field or refused v", tc.name)
			}
			var got []int
			var batch []bson.Doc
			for {
				if batch, err = sc.NextBatch(batch, 300); err != nil || len(batch) == 0 {
					break
				}
				for _, d := range batch {
					id, _ := d.Lookup("_id")
					got = append(got, int(id.Int32()))
				}
			}
			var want []int
			for i := 0; i < rows; i++ {
				if tc.keep(i) {
					want = append(want, i)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: got %d rows, want %d (first got %v)", tc.name, len(got), len(want), got[:min(len(got), 10)])
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// val is the value a builder function appends as "v".
func val(f func(b *bson.Builder)) bson.Value {
	var b bson.Builder
	f(&b)
	v, _ := b.Finish().Lookup("v")
	return v
}
