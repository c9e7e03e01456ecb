package hugemem

import "testing"

func TestBlockGrowth(t *testing.T) {
	for _, tc := range []struct {
		name     string
		last, lo int
		wantCap  int
	}{
		{"first block", 0, 8, 8},
		{"doubles", 8, 8, 16},
		{"lo wins", 8, 100, 100},
		{"capped at MaxBlock", MaxBlock / 8, 8, MaxBlock / 8},
		{"lo above the cap", MaxBlock / 8, MaxBlock, MaxBlock},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := Block[uint64](tc.last, tc.lo)
			if len(b) != 0 || cap(b) != tc.wantCap {
				t.Fatalf("Block(%d, %d): len %d cap %d, want 0 and %d", tc.last, tc.lo, len(b), cap(b), tc.wantCap)
			}
		})
	}
	if c := cap(Block[[3]byte](MaxBlock, 1)); c != MaxBlock/3 {
		t.Fatalf("Block of 3-byte elements capped at %d, want %d", c, MaxBlock/3)
	}
	if c := cap(Block[struct{}](10, 1)); c != 20 {
		t.Fatalf("Block of empty elements: cap %d, want 20", c)
	}
}

func TestMake(t *testing.T) {
	s := Make[uint64](Min / 8 * 4)
	if len(s) != Min/8*4 {
		t.Fatalf("len %d", len(s))
	}
	for i := range s {
		s[i] = uint64(i)
	}
	if s[len(s)-1] != uint64(len(s)-1) {
		t.Fatal("write lost")
	}
}
