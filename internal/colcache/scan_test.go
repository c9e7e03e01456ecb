package colcache

import (
	"context"
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/kv"
)

// TestScanReusesBuffers: a batch slice passed back to NextBatch brings its
// buffer back, so a steady scan allocates nothing.
func TestScanReusesBuffers(t *testing.T) {
	db := openDB(t)
	putDocs(t, db, 0, 3*chunkRows, "r")
	c := New(Options{})
	err := db.View(func(tx *kv.Tx) error {
		tr, _ := tx.Tree("data")
		s, err := c.Get(context.Background(), tr, []string{"_id", "a", "c"}, false)
		if err != nil || s == nil {
			t.Fatalf("%v %v", s, err)
		}
		sc := s.Scan()
		var a, b []bson.Doc
		a, _ = sc.NextBatch(a, 512)
		b, _ = sc.NextBatch(b, 512)
		allocs := testing.AllocsPerRun(50, func() {
			a, _ = sc.NextBatch(a, 512)
			a, b = b, a
		})
		if allocs != 0 {
			t.Errorf("%v allocations per batch, want 0", allocs)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
