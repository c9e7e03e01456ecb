package index

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

func (c *countSource) head() ([]byte, []byte, uint64, bool) {
	if c.i == c.n {
		return nil, nil, 0, false
	}
	k := fmt.Appendf(nil, "k%07d", c.i)
	return k, []byte("v"), keyPrefix(k), true
}

func (c *countSource) advance() error {
	if c.i++; c.err != nil && c.i == c.failAt {
		return c.err
	}
	return nil
}

// TestPrefetched reads sources through the prefetcher: whole, stopped
// early (the goroutines end), and failing.
func TestPrefetched(t *testing.T) {
	for _, n := range []int{0, 1, prefetchBatch, 3*prefetchBatch + 5} {
		pf := newPrefetcher()
		s, err := pf.start(&countSource{n: n})
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for k, v, _, ok := s.head(); ok; k, v, _, ok = s.head() {
			if want := fmt.Sprintf("k%07d", got); string(k) != want || string(v) != "v" {
				t.Fatalf("n=%d: entry %d is %q %q, want %q", n, got, k, v, want)
			}
			got++
			if err := s.advance(); err != nil {
				t.Fatal(err)
			}
		}
		pf.stop()
		if got != n {
			t.Errorf("read %d entries of %d", got, n)
		}
	}
	pf := newPrefetcher()
	if _, err := pf.start(&countSource{n: 100 * prefetchBatch}); err != nil {
		t.Fatal(err)
	}
	pf.stop() // returns although nobody reads

	boom := errors.New("boom")
	pf = newPrefetcher()
	defer pf.stop()
	s, err := pf.start(&countSource{n: 10 * prefetchBatch, failAt: prefetchBatch + 3, err: boom})
	if err != nil {
		t.Fatal(err)
	}
	var readErr error
	for i := 0; readErr == nil; i++ {
		if _, _, _, ok := s.head(); !ok {
			t.Fatalf("source ended after %d entries without its error", i)
		}
		readErr = s.advance()
	}
	if !errors.Is(readErr, boom) {
		t.Errorf("error %v, want boom", readErr)
	}
}
