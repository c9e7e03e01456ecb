package index

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRunSort compares run.sort with a comparison sort on runs whose keys
// are random, share long prefixes, are shorter than 8 bytes, repeat, or
// come in order or in reverse order.
func TestRunSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	gens := map[string]func(i, n int) []byte{
		"random":     func(i, n int) []byte { return fmt.Appendf(nil, "%016x", rng.Uint64()) },
		"short":      func(i, n int) []byte { return []byte{byte(rng.IntN(4)), byte(rng.IntN(3))}[:1+rng.IntN(2)] },
		"shared":     func(i, n int) []byte { return fmt.Appendf(nil, "prefix-long-%06d", rng.IntN(n/3+1)) },
		"ascending":  func(i, n int) []byte { return fmt.Appendf(nil, "k%08d", i) },
		"descending": func(i, n int) []byte { return fmt.Appendf(nil, "k%08d", n-i) },
		"fewbytes": func(i, n int) []byte {
			return []byte{7, 7, 7, byte(rng.IntN(2)), 7, 7, 7, byte(rng.IntN(3)), byte(rng.IntN(256))}
		},
	}
	for name, gen := range gens {
		for _, n := range []int{0, 1, 2, 47, 49, 1000, 20000} {
			var r run
			for i := range n {
				k := gen(i, n)
				start := len(r.arena)
				r.arena = append(r.arena, k...)
				r.arena = fmt.Appendf(r.arena, "%05d", i) // the _id, as a non-unique entry ends
				klen := len(r.arena) - start
				r.es = append(r.es, entry{pfx: keyPrefix(r.arena[start:]), off: uint32(start), klen: uint16(klen - 1), vlen: 4})
			}
			want := slices.Clone(r.es)
			slices.SortFunc(want, r.compare)
			r.sort()
			for i := range want {
				if !bytes.Equal(r.key(r.es[i]), r.key(want[i])) {
					t.Fatalf("%s, %d entries: entry %d is %q, want %q", name, n, i, r.key(r.es[i]), r.key(want[i]))
				}
			}
		}
	}
}
