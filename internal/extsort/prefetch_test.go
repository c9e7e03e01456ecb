package extsort

import (
	"errors"
	"fmt"
	"testing"
)

// countSource yields keys k0000000, k0000001, … up to n, failing with err
// (if set) after failAt entries.
type countSource struct {
	i, n, failAt int
	err          error
}

func (c *countSource) Head() ([]byte, []byte, bool) {
	if c.i == c.n {
		return nil, nil, false
	}
	k := fmt.Appendf(nil, "k%07d", c.i)
	return k, []byte("v"), true
}

func (c *countSource) Advance() error {
	if c.i++; c.err != nil && c.i == c.failAt {
		return c.err
	}
	return nil
}

// TestPrefetched reads sources through the prefetcher: whole, stopped
// early (the goroutines end), and failing.
func TestPrefetched(t *testing.T) {
	for _, n := range []int{0, 1, prefetchBatch, 3*prefetchBatch + 5} {
		pf := NewPrefetcher()
		s, err := pf.Start(&countSource{n: n})
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for k, v, ok := s.Head(); ok; k, v, ok = s.Head() {
			if want := fmt.Sprintf("k%07d", got); string(k) != want || string(v) != "v" {
				t.Fatalf("n=%d: entry %d is %q %q, want %q", n, got, k, v, want)
			}
			got++
			if err := s.Advance(); err != nil {
				t.Fatal(err)
			}
		}
		pf.Stop()
		if got != n {
			t.Errorf("read %d entries of %d", got, n)
		}
	}
	pf := NewPrefetcher()
	if _, err := pf.Start(&countSource{n: 100 * prefetchBatch}); err != nil {
		t.Fatal(err)
	}
	pf.Stop() // returns although nobody reads

	boom := errors.New("boom")
	pf = NewPrefetcher()
	defer pf.Stop()
	s, err := pf.Start(&countSource{n: 10 * prefetchBatch, failAt: prefetchBatch + 3, err: boom})
	if err != nil {
		t.Fatal(err)
	}
	var readErr error
	for i := 0; readErr == nil; i++ {
		if _, _, ok := s.Head(); !ok {
			t.Fatalf("source ended after %d entries without its error", i)
		}
		readErr = s.Advance()
	}
	if !errors.Is(readErr, boom) {
		t.Errorf("error %v, want boom", readErr)
	}
}
