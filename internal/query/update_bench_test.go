package query

import (
	"fmt"
	"testing"

	"github.com/cairndb/cairn/bson"
)

// addToSetEach builds {$addToSet: {a: {$each: [0, 1, ..., n-1]}}} and a
// document whose array a holds the first n/2 of them, so half the values
// are new and half already there.
func addToSetEach(n int) (*Update, bson.Doc, error) {
	var b bson.Builder
	b.StartDocument("$addToSet")
	b.StartDocument("a")
	b.StartArray("$each")
	for i := range n {
		b.AppendInt32(bson.Index(i), int32(i))
	}
	b.End()
	b.End()
	b.End()
	upd := b.Finish()
	var db bson.Builder
	db.AppendInt32("_id", 1)
	db.StartArray("a")
	for i := range n / 2 {
		db.AppendInt64(bson.Index(i), int64(i)) // equal to the int32 of the update
	}
	db.End()
	u, err := ParseUpdate(bson.Value{Type: bson.TypeDocument, Data: upd}, nil, nil)
	return u, db.Finish(), err
}

// BenchmarkAddToSetEach: $addToSet with $each of n values onto an array
// holding half of them (was a comparison with every kept value per value,
// O(n²)).
func BenchmarkAddToSetEach(b *testing.B) {
	for _, n := range []int{10_000, 40_000, 100_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			u, doc, err := addToSetEach(n)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				out, _, err := u.Apply(nil, doc, nil, false)
				if err != nil {
					b.Fatal(err)
				}
				if v, _ := out.Lookup("a"); bson.Doc(v.Data).Len() != n {
					b.Fatalf("%d values, want %d", bson.Doc(v.Data).Len(), n)
				}
			}
		})
	}
}
