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

func TestSlowerRounds(t *testing.T) {
	m := &metric{Name: "t", Values: map[string][]float64{"off": {100, 100, 100, 100}, "pgo": {103, 101, 99, 110}}}
	if s, n := m.slowerRounds(); s != 2 || n != 4 {
		t.Errorf("slowerRounds = %d of %d, want 2 of 4", s, n)
	}
	m.HigherBetter = true // now rates: the PGO build is slower where it is lower
	if s, _ := m.slowerRounds(); s != 0 {
		t.Errorf("rates: slowerRounds = %d, want 0", s)
	}
}
