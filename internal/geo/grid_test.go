package geo

import (
	"math/rand/v2"
	"testing"

	"github.com/golang/geo/r2"
)

// Every point of a box hashes into one of the box's cover ranges, and the
// cover stays within its cell budget.
func TestGridCover(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	g := DefaultGrid
	for trial := 0; trial < 300; trial++ {
		a := r2.Point{X: rng.Float64()*360 - 180, Y: rng.Float64()*360 - 180}
		w := rng.Float64() * 40
		if trial%3 == 0 {
			w = rng.Float64() * 0.01
		}
		lo, hi := a, r2.Point{X: a.X + w, Y: a.Y + rng.Float64()*40}
		cover := g.Cover(lo, hi, 16)
		if len(cover) == 0 || len(cover) > 16+4*16 {
			t.Fatalf("box %v-%v: %d ranges", lo, hi, len(cover))
		}
		for range 50 {
			p := r2.Point{X: lo.X + rng.Float64()*(hi.X-lo.X), Y: lo.Y + rng.Float64()*(hi.Y-lo.Y)}
			if !g.Contains(p) {
				continue
			}
			h := g.Hash(p)
			found := false
			for _, r := range cover {
				if h >= r.Lo && h <= r.Hi {
					found = true
					break
				}
			}
			if !found {
				t.Fatalf("point %v (hash %x) of box %v-%v is in no range of %v", p, h, lo, hi, cover)
			}
		}
	}
	if c := g.Cover(r2.Point{X: 500, Y: 500}, r2.Point{X: 600, Y: 600}, 16); c != nil {
		t.Errorf("box outside the grid: %v", c)
	}
}
