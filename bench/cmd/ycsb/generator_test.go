package main

import (
	"math/rand/v2"
	"testing"
)

// YCSB's first keys with insertorder=hashed, as its logs show them.
func TestKeyName(t *testing.T) {
	for n, want := range map[int64]string{0: "user6284781860667377211"} {
		if got := keyName(n); got != want {
			t.Errorf("keyName(%d) = %s, want %s", n, got, want)
		}
	}
}

// The scrambled zipfian stays in range and is skewed: the most popular
// key gets far more than a uniform share.
func TestScrambledZipfian(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	z := newScrambledZipfian(0, 999, rng)
	counts := map[int64]int{}
	for i := 0; i < 100000; i++ {
		v := z.next()
		if v < 0 || v > 999 {
			t.Fatalf("value %d out of [0, 999]", v)
		}
		counts[v]++
	}
	top := 0
	for _, c := range counts {
		top = max(top, c)
	}
	if top < 2000 { // uniform would give 100
		t.Errorf("most popular key drawn %d times of 100000; not skewed", top)
	}
}

func TestLatestAndHotspot(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ins := newAckCounter(1000)
	l := newSkewedLatest(ins, rng)
	recent := 0
	for i := 0; i < 10000; i++ {
		v := l.next()
		if v < 0 || v > 999 {
			t.Fatalf("latest value %d out of range", v)
		}
		if v >= 990 {
			recent++
		}
	}
	if recent < 3000 {
		t.Errorf("only %d of 10000 draws among the 10 latest keys", recent)
	}
	n := ins.nextInsert()
	ins.acknowledge(n)
	if ins.last() != 1000 {
		t.Errorf("last after one acknowledged insert = %d, want 1000", ins.last())
	}
	h := newHotspot(0, 999, 0.2, 0.8, rng)
	hot := 0
	for i := 0; i < 10000; i++ {
		if h.next() < 200 {
			hot++
		}
	}
	if hot < 7700 || hot > 8300 {
		t.Errorf("hot set drew %d of 10000, want about 8000", hot)
	}
}
