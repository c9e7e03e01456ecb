package kv

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// TestSearchPfx checks the interpolating search against sort.Search with
// exact, wrong and missing spans, on even, skewed and tied prefixes.
func TestSearchPfx(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := range 20000 {
		n := rng.IntN(300)
		pfx := make([]uint64, n)
		for i := range pfx {
			switch iter % 4 {
			case 0:
				pfx[i] = rng.Uint64()
			case 1:
				pfx[i] = rng.Uint64N(8) // many ties
			case 2:
				pfx[i] = uint64(math.Exp(rng.Float64() * 40)) // skewed
			default:
				pfx[i] = rng.Uint64() >> (rng.IntN(64))
			}
		}
		slices.Sort(pfx)
		lo := 0
		if n > 0 && rng.IntN(2) == 0 {
			lo = 1
		}
		var s span
		switch rng.IntN(4) {
		case 0:
			s = noSpan
		case 1:
			s = fullSpan
		case 2:
			s = span{lo: rng.Uint64(), hi: rng.Uint64()}
		default:
			if n > 0 {
				s = span{lo: pfx[0], hi: pfx[n-1]}
			}
		}
		for range 20 {
			var kp uint64
			if n > 0 && rng.IntN(2) == 0 {
				kp = pfx[rng.IntN(n)] + uint64(rng.IntN(3)) - 1
			} else {
				kp = rng.Uint64() >> rng.IntN(64)
			}
			want := lo + sort.Search(n-lo, func(i int) bool { return pfx[lo+i] >= kp })
			if n < lo {
				continue
			}
			if got := searchPfx(pfx, lo, kp, s, 0); got != want {
				t.Fatalf("n %d lo %d span %+v kp %d: got %d, want %d", n, lo, s, kp, got, want)
			}
		}
	}
}

// TestSortPending checks the bucketed sort of deferred puts against a
// comparison sort, for random, clustered and equal prefixes.
func TestSortPending(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{10, 1 << 14, 50000, 150000} {
		for shape := range 4 {
			pp := &pendingPuts{}
			for range n {
				k := make([]byte, 1+rng.IntN(12))
				for j := range k {
					k[j] = byte(rng.Uint32())
				}
				switch shape {
				case 1:
					k[0] = 7 // shared first byte
				case 2:
					k = append([]byte("samesame"), byte(rng.IntN(50))) // ties, duplicates
				case 3:
					k = k[:1] // many duplicates
				}
				v := make([]byte, rng.IntN(3)*10000) // some beyond a small chunk
				pp.add(k, v)
			}
			var want []kvPair
			pp.each(func(c []kvPair) { want = append(want, c...) })
			slices.SortFunc(want, pp.compare)
			got := sortPending(pp)
			for i := range want {
				if got[i].seq != want[i].seq {
					t.Fatalf("n %d shape %d: entry %d is put %d, want put %d", n, shape, i, got[i].seq, want[i].seq)
				}
			}
		}
	}
}
