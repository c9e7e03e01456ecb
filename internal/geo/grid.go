package geo

import (
	"math"

	"github.com/golang/geo/r2"
)

// Grid is a 2d index's flat space: [Min, Max) on both axes, cut into
// 2^Bits steps per axis. A point's hash interleaves the bits of its two
// step numbers (x first), so that the points of one quadtree cell have
// consecutive hashes, as mongod's geohash does.
type Grid struct {
	Min, Max float64
	Bits     uint
}

// DefaultGrid is mongod's default 2d index space: longitude and latitude
// bounds, 26 bits per axis.
var DefaultGrid = Grid{Min: -180, Max: 180, Bits: 26}

// Contains reports whether p lies in the grid's space.
func (g Grid) Contains(p r2.Point) bool {
	return p.X >= g.Min && p.X < g.Max && p.Y >= g.Min && p.Y < g.Max
}

func (g Grid) step(v float64) uint64 {
	n := uint64(1) << g.Bits
	s := (v - g.Min) / (g.Max - g.Min) * float64(n)
	switch {
	case s < 0 || math.IsNaN(s):
		return 0
	case s >= float64(n):
		return n - 1
	}
	return uint64(s)
}

// Hash is the cell number of p at full precision (2·Bits bits).
func (g Grid) Hash(p r2.Point) uint64 {
	return interleave(g.step(p.X), g.step(p.Y))
}

func interleave(x, y uint64) uint64 {
	var h uint64
	for i := 31; i >= 0; i-- {
		h = h<<2 | (x>>uint(i)&1)<<1 | y>>uint(i)&1
	}
	return h
}

// HashRange is an inclusive range of hashes.
type HashRange struct{ Lo, Hi uint64 }

// Cover returns hash ranges holding every point of the box [lo, hi]:
// the quadtree cells meeting the box, refined while at most maxCells
// cells are kept (coarser cells are supersets; callers check each point).
func (g Grid) Cover(lo, hi r2.Point, maxCells int) []HashRange {
	x0, x1 := g.step(max(lo.X, g.Min)), g.step(min(hi.X, g.Max))
	y0, y1 := g.step(max(lo.Y, g.Min)), g.step(min(hi.Y, g.Max))
	if lo.X > hi.X || lo.Y > hi.Y || hi.X < g.Min || hi.Y < g.Min || lo.X >= g.Max || lo.Y >= g.Max {
		return nil
	}
	type cell struct {
		level  uint // bits per axis fixed
		cx, cy uint64
	}
	// span is a cell's steps on both axes (inclusive).
	span := func(c cell) (ax0, ax1, ay0, ay1 uint64) {
		shift := g.Bits - c.level
		return c.cx << shift, (c.cx+1)<<shift - 1, c.cy << shift, (c.cy+1)<<shift - 1
	}
	inside := func(c cell) bool {
		ax0, ax1, ay0, ay1 := span(c)
		return ax0 >= x0 && ax1 <= x1 && ay0 >= y0 && ay1 <= y1
	}
	frontier := []cell{{}}
	var done []cell
	for len(frontier) > 0 {
		var next, split []cell
		for _, c := range frontier {
			if c.level == g.Bits || inside(c) {
				done = append(done, c)
				continue
			}
			split = append(split, c)
			for _, d := range [4][2]uint64{{0, 0}, {0, 1}, {1, 0}, {1, 1}} {
				k := cell{c.level + 1, c.cx<<1 | d[0], c.cy<<1 | d[1]}
				bx0, bx1, by0, by1 := span(k)
				if bx1 >= x0 && bx0 <= x1 && by1 >= y0 && by0 <= y1 {
					next = append(next, k)
				}
			}
		}
		if len(done)+len(next) > maxCells {
			// One more level would keep too many cells: the unsplit
			// parents cover their children.
			done = append(done, split...)
			break
		}
		frontier = next
	}
	out := make([]HashRange, 0, len(done))
	for _, c := range done {
		shift := 2 * (g.Bits - c.level)
		prefix := interleave(c.cx, c.cy)
		out = append(out, HashRange{prefix << shift, (prefix+1)<<shift - 1})
	}
	return out
}
