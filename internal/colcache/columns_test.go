package colcache

import (
	"bytes"
	"context"
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/kv"
)

// TestColumnChunksMatchTheScan: a set's chunks, read as agg.ColumnSource
// reads them, hold each document's values, and their Doc assembles the
// narrow documents the Scan serves (the field order varies in the later
// chunks, so both ways of ordering are checked).
func TestColumnChunksMatchTheScan(t *testing.T) {
	db := openDB(t)
	n := 2*chunkRows + 123
	putDocs(t, db, 0, n, "t")
	c := New(Options{})
	fields := []string{"_id", "c", "a", "pad1"}
	err := db.View(func(tx *kv.Tx) error {
		tr, _ := tx.Tree("data")
		s, err := c.Get(context.Background(), tr, fields, false)
		if err != nil || s == nil {
			t.Fatalf("%v %v", s, err)
		}
		if s.ColumnChunks() != 3 {
			t.Fatalf("%d chunks, want 3", s.ColumnChunks())
		}
		sc := s.Scan()
		row := 0
		for ci := range s.ColumnChunks() {
			ch := s.ColumnChunk(ci)
			for r := range ch.Rows {
				want, _ := sc.NextBatch(nil, 1)
				if len(want) != 1 {
					t.Fatalf("row %d: the scan ended", row)
				}
				if got := ch.Doc(nil, r); !bytes.Equal(got, want[0]) {
					t.Fatalf("row %d: Doc %v, scan %v", row, bson.Doc(got), want[0])
				}
				for f, name := range fields {
					v, ok := want[0].Lookup(name)
					got := ch.Cols[f].Value(r)
					if ok != (got.Type != 0) || (ok && (v.Type != got.Type || !bytes.Equal(v.Data, got.Data))) {
						t.Fatalf("row %d field %s: column %v, document %v", row, name, got, v)
					}
				}
				row++
			}
		}
		if row != n {
			t.Fatalf("%d rows, want %d", row, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
