package extsort

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

var errOver = errors.New("over budget")

type rec struct {
	key []byte
	val string
}

func records(n, distinct int) []rec {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(distinct)))
	out := make([]rec, n)
	for i := range out {
		out[i] = rec{key: fmt.Appendf(nil, "key-%06d", rng.IntN(distinct)), val: fmt.Sprintf("value %d", i)}
	}
	return out
}

// TestSorter sorts in memory, spilling and as a top-k, and checks the
// order (stable: ties in input order) against slices.SortStableFunc, how
// many runs were written, and that nothing is left on disk or open.
func TestSorter(t *testing.T) {
	reverse := func(a, b []byte) int { return bytes.Compare(b, a) }
	for _, c := range []struct {
		name      string
		n         int
		distinct  int
		budget    int64
		keep      int64
		cmp       func(a, b []byte) int
		retain    bool
		wantSpill bool
	}{
		{name: "empty", n: 0, distinct: 1, budget: 1 << 20},
		{name: "memory", n: 5000, distinct: 100, budget: 1 << 20},
		{name: "spill", n: 5000, distinct: 100, budget: 16 << 10, wantSpill: true},
		{name: "spill retain", n: 5000, distinct: 5000, budget: 16 << 10, retain: true, wantSpill: true},
		{name: "spill one key", n: 3000, distinct: 1, budget: 8 << 10, wantSpill: true},
		{name: "spill reverse", n: 5000, distinct: 300, budget: 16 << 10, cmp: reverse, wantSpill: true},
		{name: "top-k", n: 5000, distinct: 50, budget: 1 << 20, keep: 37},
		{name: "top-k reverse", n: 5000, distinct: 50, budget: 1 << 20, keep: 37, cmp: reverse},
		{name: "top-k over budget with disk", n: 5000, distinct: 5000, budget: 1 << 10, keep: 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			in := records(c.n, c.distinct)
			s := New(Options{Budget: c.budget, AllowDisk: true, TempDir: dir, Cmp: c.cmp, Keep: c.keep, Retain: c.retain,
				OverBudget: func() error { return errOver }})
			defer s.Close()
			for _, r := range in {
				if err := s.Add(r.key, []byte(r.val)); err != nil {
					t.Fatal(err)
				}
				if ents, _ := os.ReadDir(dir); len(ents) != 0 {
					t.Fatalf("%d files in the spill directory while sorting", len(ents))
				}
			}
			it, err := s.Finish()
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(in)
			cmp := c.cmp
			if cmp == nil {
				cmp = bytes.Compare
			}
			slices.SortStableFunc(want, func(a, b rec) int { return cmp(a.key, b.key) })
			if c.keep > 0 && int64(len(want)) > c.keep {
				want = want[:c.keep]
			}
			var got []rec
			for {
				k, v, ok, err := it.Next()
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				got = append(got, rec{key: bytes.Clone(k), val: string(v)})
			}
			if len(got) != len(want) {
				t.Fatalf("%d records, want %d", len(got), len(want))
			}
			for i := range want {
				if !bytes.Equal(got[i].key, want[i].key) || got[i].val != want[i].val {
					t.Fatalf("record %d: %s %q, want %s %q", i, got[i].key, got[i].val, want[i].key, want[i].val)
				}
			}
			if s.Spilled() != c.wantSpill || s.Stats().Spilled() != c.wantSpill {
				t.Fatalf("spilled %v (%d runs, %d bytes), want %v", s.Spilled(), s.Stats().Runs(), s.Stats().Bytes(), c.wantSpill)
			}
			if c.wantSpill && (s.Stats().Runs() < 2 || s.Stats().Bytes() == 0) {
				t.Fatalf("%d runs of %d bytes", s.Stats().Runs(), s.Stats().Bytes())
			}
			if s.spill != nil && s.spill.OpenRuns() != 0 {
				t.Fatalf("%d runs still open at the end", s.spill.OpenRuns())
			}
		})
	}
}

// TestSorterRetain: with Retain, records stay valid after later calls.
func TestSorterRetain(t *testing.T) {
	s := New(Options{Budget: 8 << 10, AllowDisk: true, TempDir: t.TempDir(), Retain: true})
	defer s.Close()
	in := records(2000, 2000)
	for _, r := range in {
		if err := s.Add(r.key, []byte(r.val)); err != nil {
			t.Fatal(err)
		}
	}
	it, err := s.Finish()
	if err != nil {
		t.Fatal(err)
	}
	var keys, copies [][]byte
	for {
		k, _, ok, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		keys, copies = append(keys, k), append(copies, bytes.Clone(k))
	}
	for i := range keys {
		if !bytes.Equal(keys[i], copies[i]) {
			t.Fatalf("record %d changed after later calls: %q, was %q", i, keys[i], copies[i])
		}
	}
}

type stopAfter struct{ n, calls int }

func (s *stopAfter) Err() error {
	if s.calls++; s.calls > s.n {
		return errors.New("interrupted")
	}
	return nil
}

// TestSorterErrors: without disk use the budget is a hard limit (the
// caller's error, nothing written); a cancelled sort stops, and Close
// leaves no run open.
func TestSorterErrors(t *testing.T) {
	dir := t.TempDir()
	for _, keep := range []int64{0, 100} {
		s := New(Options{Budget: 4 << 10, TempDir: dir, Keep: keep, OverBudget: func() error { return errOver }})
		var err error
		for i := 0; err == nil && i < 100000; i++ {
			err = s.Add(fmt.Appendf(nil, "%08d", i), bytes.Repeat([]byte("x"), 100))
		}
		if err != errOver || s.Spilled() {
			t.Fatalf("keep %d: over budget without disk: %v, spilled %v", keep, err, s.Spilled())
		}
		s.Close()
	}
	// Cancelled while spilling.
	s := New(Options{Budget: 4 << 10, AllowDisk: true, TempDir: dir, Ctx: &stopAfter{n: 3}})
	var err error
	for i := 0; err == nil && i < 100000; i++ {
		err = s.Add(fmt.Appendf(nil, "%08d", i), bytes.Repeat([]byte("x"), 100))
	}
	if err == nil || err.Error() != "interrupted" || s.Stats().Runs() != 3 {
		t.Fatalf("cancelled sort: %v after %d runs", err, s.Stats().Runs())
	}
	s.Close()
	if n := s.spill.OpenRuns(); n != 0 {
		t.Fatalf("%d runs open after Close", n)
	}
	// Cancelled while merging.
	ctx := &stopAfter{n: 1 << 30}
	s = New(Options{Budget: 4 << 10, AllowDisk: true, TempDir: dir, Ctx: ctx})
	for i := 0; i < 5000; i++ {
		if err := s.Add(fmt.Appendf(nil, "%08d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	it, err := s.Finish()
	if err != nil {
		t.Fatal(err)
	}
	ctx.n = ctx.calls
	n := 0
	for {
		_, _, ok, err2 := it.Next()
		if err2 != nil {
			err = err2
			break
		}
		if !ok {
			break
		}
		n++
	}
	if err == nil || n >= 5000 {
		t.Fatalf("merge not stopped: %v after %d records", err, n)
	}
	s.Close()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("%d files left behind", len(ents))
	}
}

// TestMergerPrefetch merges runs (some read ahead by a Prefetcher) and
// records in memory: keys in order, equal keys in source order.
func TestMergerPrefetch(t *testing.T) {
	sp := NewSpill(t.TempDir(), nil)
	defer sp.Close()
	pf := NewPrefetcher()
	defer pf.Stop()
	var srcs []Source
	total := 0
	for r := 0; r < 6; r++ {
		w, err := sp.Create()
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3000; i += r + 1 {
			if err := w.Add(fmt.Appendf(nil, "%06d", i), []byte{byte(r)}); err != nil {
				t.Fatal(err)
			}
			total++
		}
		run, err := w.Finish()
		if err != nil {
			t.Fatal(err)
		}
		var src Source
		if src, err = run.Open(4096, false); err != nil {
			t.Fatal(err)
		}
		if r%2 == 0 {
			if src, err = pf.Start(src); err != nil {
				t.Fatal(err)
			}
		}
		srcs = append(srcs, src)
	}
	var mem []Item
	for i := 0; i < 3000; i += 7 {
		mem = append(mem, Item{Key: fmt.Appendf(nil, "%06d", i), Val: []byte{6}})
		total++
	}
	srcs = append(srcs, &SliceSource{Items: mem})
	m := NewMerger(srcs, nil, nil)
	var prevK []byte
	prevSrc, n := -1, 0
	for {
		k, v, ok, err := m.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if c := bytes.Compare(prevK, k); c > 0 || c == 0 && int(v[0]) <= prevSrc {
			t.Fatalf("record %d: %s from %d after %s from %d", n, k, v[0], prevK, prevSrc)
		}
		prevK, prevSrc = append(prevK[:0], k...), int(v[0])
		n++
	}
	if n != total {
		t.Fatalf("merged %d records, want %d", n, total)
	}
	if sp.Stats().Runs() != 6 {
		t.Fatalf("%d runs counted", sp.Stats().Runs())
	}
}

// TestSortItems: items sort as bytes.Compare orders their keys, ties in
// input order, whatever prefix they share and however short they are.
func TestSortItems(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, prefix := range []string{"", "\x1e\x10WatchID\x00\x01", "same-long-prefix-of-every-key"} {
		var items []Item
		for i := 0; i < 3000; i++ {
			k := []byte(prefix)
			for j := r.IntN(12); j > 0; j-- {
				k = append(k, byte(r.IntN(4)))
			}
			items = append(items, Item{Key: k, Val: fmt.Append(nil, i)})
		}
		want := slices.Clone(items)
		slices.SortStableFunc(want, func(a, b Item) int { return bytes.Compare(a.Key, b.Key) })
		SortItems(items)
		for i := range items {
			if !bytes.Equal(items[i].Key, want[i].Key) || !bytes.Equal(items[i].Val, want[i].Val) {
				t.Fatalf("prefix %q: item %d is %x %s, want %x %s", prefix, i, items[i].Key, items[i].Val, want[i].Key, want[i].Val)
			}
		}
	}
}
