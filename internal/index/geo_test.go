package index

import (
	"bytes"
	"cmp"
	"math/rand/v2"
	"testing"

	"github.com/golang/geo/s2"
)

// The keys of cell ids sort as the ids do as unsigned numbers, which is
// what range scans over a cell's descendants rely on.
func TestGeoCellKeyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ids := []s2.CellID{0, 1, 1 << 63, 1<<63 - 1, 1<<64 - 1, s2.CellIDFromFace(5).RangeMax(), s2.CellIDFromFace(0).RangeMin()}
	for range 2000 {
		ids = append(ids, s2.CellID(rng.Uint64()))
	}
	for i := range ids {
		a, b := ids[i], ids[(i*7+1)%len(ids)]
		if got, want := bytes.Compare(AppendGeoCell(nil, a), AppendGeoCell(nil, b)), cmp.Compare(uint64(a), uint64(b)); got != want {
			t.Fatalf("%x vs %x: key order %d, id order %d", uint64(a), uint64(b), got, want)
		}
	}
}
