package bson

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// foldOnly compares strings case-insensitively but makes no sort keys, so
// a ValueSet over it compares with every member.
type foldOnly struct{}

func (foldOnly) CompareStrings(a, b string) int {
	return strings.Compare(strings.ToLower(a), strings.ToLower(b))
}

func TestValueSet(t *testing.T) {
	cases := []struct {
		name string
		c    StringComparer
		add  []Value
		want []bool // Add's answers
	}{
		{"numbers of every type are one value", nil,
			[]Value{vInt32(1), vInt64(1), vDouble(1), vDecimal("1.0"), vDouble(2)},
			[]bool{true, false, false, false, true}},
		{"zero and negative zero, NaN and NaN", nil,
			[]Value{vDouble(0), vDouble(math.Copysign(0, -1)), vDouble(math.NaN()), vDecimal("NaN")},
			[]bool{true, false, true, false}},
		{"strings bytewise without a collation", nil,
			[]Value{vString("a"), vString("A"), vString("a"), vSymbol("a")},
			[]bool{true, true, false, false}},
		{"strings under a collation with sort keys", foldComparer{},
			[]Value{vString("a"), vString("A"), vDoc(docOf("k", vString("X"))), vDoc(docOf("k", vString("x")))},
			[]bool{true, false, true, false}},
		{"collation without sort keys", foldOnly{},
			[]Value{vString("a"), vString("A"), vArray(arrOf(vString("B"))), vArray(arrOf(vString("b"))), vInt32(1), vDouble(1)},
			[]bool{true, false, true, false, true, false}},
		{"field names stay binary", foldComparer{},
			[]Value{vDoc(docOf("K", vInt32(1))), vDoc(docOf("k", vInt32(1)))},
			[]bool{true, true}},
		{"arrays and documents by content", nil,
			[]Value{vArray(arrOf(vInt32(1), vInt32(2))), vArray(arrOf(vInt64(1), vDouble(2))), vArray(arrOf(vInt32(2), vInt32(1)))},
			[]bool{true, false, true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewValueSet(tc.c)
			n := 0
			for i, v := range tc.add {
				if got := s.Add(v); got != tc.want[i] {
					t.Errorf("Add(%s) = %v, want %v", v, got, tc.want[i])
				}
				if tc.want[i] {
					n++
				}
				if !s.Has(v) {
					t.Errorf("Has(%s) after Add is false", v)
				}
			}
			if s.Len() != n {
				t.Errorf("Len = %d, want %d", s.Len(), n)
			}
		})
	}
}

// TestValueSetMatchesCompare: membership agrees with CompareCollated == 0
// over random values.
func TestValueSetMatchesCompare(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range []StringComparer{nil, foldComparer{}} {
		s := NewValueSet(c)
		var members []Value
		for range 2000 {
			v := randValue(r, 2)
			dup := false
			for _, m := range members {
				if CompareCollated(m, v, c) == 0 {
					dup = true
					break
				}
			}
			if got := s.Add(v); got == dup {
				t.Fatalf("Add(%s) = %v, but an equal member exists: %v", v, got, dup)
			}
			if !dup {
				members = append(members, v)
			}
		}
	}
}
