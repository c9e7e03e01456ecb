package main

import (
	"math"
	"testing"
)

func TestSpeedups(t *testing.T) {
	for _, tc := range []struct {
		name          string
		higher        bool
		off, pgo      []float64
		medians, pair float64
	}{
		// Times: the PGO build is faster in two rounds of three, and the
		// machine slows from round to round; the ratio of medians mixes
		// rounds, the paired ratio does not.
		{"times", false, []float64{100, 200, 300}, []float64{105, 180, 285}, 200.0 / 180, 300.0 / 285},
		{"rates", true, []float64{1000, 500}, []float64{1100, 450}, 775.0 / 750, (1.1 + 0.9) / 2},
		{"one round", false, []float64{10}, []float64{8}, 1.25, 1.25},
	} {
		m := &metric{Name: tc.name, HigherBetter: tc.higher, Values: map[string][]float64{"off": tc.off, "pgo": tc.pgo}}
		if got := m.speedup(); math.Abs(got-tc.medians) > 1e-9 {
			t.Errorf("%s: speedup %v, want %v", tc.name, got, tc.medians)
		}
		if got := m.pairedSpeedup(); math.Abs(got-tc.pair) > 1e-9 {
			t.Errorf("%s: paired speedup %v, want %v", tc.name, got, tc.pair)
		}
	}
}
