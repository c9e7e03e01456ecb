package agg

import (
	"fmt"
	"hash/maphash"
	"testing"
)

// TestGroupTable inserts keys past several growths, including keys that
// are prefixes of one another and the empty key, and finds each one (and
// misses keys never inserted), with the real hash and with every key
// hashing alike (all in one probe chain).
func TestGroupTable(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		same bool
	}{
		{"few", 5, false},
		{"grows", 5000, false},
		{"one chain", 300, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := newGroupTable(maphash.MakeSeed())
			hash := func(k string) uint64 {
				if tc.same {
					return 42
				}
				return tab.hash([]byte(k))
			}
			key := func(i int) string { return fmt.Sprintf("%0*d", i%7, i) }
			for i := 0; i < tc.n; i++ {
				k := key(i)
				if tab.find(hash(k), k) != nil {
					t.Fatalf("%q found before insert", k)
				}
				tab.insert(hash(k), &group{key: k, firstSeq: int64(i)})
			}
			if tab.len() != tc.n {
				t.Fatalf("len %d, want %d", tab.len(), tc.n)
			}
			for i := 0; i < tc.n; i++ {
				k := key(i)
				g := tab.find(hash(k), k)
				if g == nil || g.firstSeq != int64(i) {
					t.Fatalf("find %q = %v", k, g)
				}
				if !tc.same {
					if h, g2 := tab.lookup([]byte(k)); g2 != g || h != hash(k) {
						t.Fatalf("lookup %q differs from find", k)
					}
				}
			}
			for _, k := range []string{"x", "-1", key(tc.n) + "0"} {
				if g := tab.find(hash(k), k); g != nil {
					t.Fatalf("found %q never inserted", k)
				}
			}
			seen := 0
			tab.each(func(h uint64, g *group) {
				if h != hash(g.key) {
					t.Fatalf("each: stored hash of %q differs", g.key)
				}
				seen++
			})
			if seen != tc.n {
				t.Fatalf("each saw %d, want %d", seen, tc.n)
			}
		})
	}
}
