// Package extsort is Cairn's one external sort: find's sort, the
// aggregation $sort, $group's spill and index builds all sort through it.
//
// # Design
//
// A sort orders records, each a key and a value (byte slices), by a
// comparison of keys the caller supplies (nil: byte order, which is what
// every Cairn user needs, since bson's sort keys and index keys compare
// as bytes). A Sorter takes records one at a time and copies them into
// arena blocks, counting their bytes plus ItemOverhead each against its
// memory budget. Past the budget it either fails with the caller's error
// (MongoDB's 292 QueryExceededMemoryLimitNoDiskUseAllowed, whose wording
// differs per command) or, when disk use is allowed, sorts what it holds
// and writes it as a run — a file of records (uvarint key length, uvarint
// value length, key, value) — and starts afresh. Finish sorts what is
// left in memory and returns an iterator: over memory alone when nothing
// spilled, else a k-way merge (Merger: a binary heap keyed by each head's
// first 8 bytes, then the comparison) of every run and the records still
// in memory, whose read buffers share a quarter of the budget.
//
// Sorting is stable: equal keys come out in the order they were added.
// In memory the sort breaks ties by position; runs are merged in the
// order they were written, the records still in memory last, and the
// merge breaks ties by source. With Keep (a limit), a Sorter is a top-k:
// it keeps the Keep best records in a heap and never spills.
//
// Runs live in a Spill, which owns the temporary directory: a run's file
// is unlinked as soon as it is created, so an error, a cancellation or a
// crash leaves nothing behind, and closing the Spill (Sorter.Close)
// returns the space. Stats count the runs and bytes written, for explain
// and the slow query log's usedDisk. Cancellation is a Checker (a
// context.Context or anything with Err), consulted before each run is
// written and every 1024 records of a merge.
//
// Users with their own in-memory layout (an index build's arenas and
// radix sort, $group's partitions) use the parts directly: a Spill and
// its Writers for runs, Run.Open for Readers, Merger over Sources, and
// Prefetcher to read sources ahead on goroutines of their own.
package extsort

import (
	"bytes"
	"fmt"
	"slices"
)

// ItemOverhead is the memory a record costs besides its bytes: its slice
// headers in the sorter's table.
const ItemOverhead = 48

// arenaBlock is the size of the blocks records are copied into.
const arenaBlock = 1 << 20

// Item is one record.
type Item struct {
	Key, Val []byte
}

// Options configure a Sorter.
type Options struct {
	// Budget is the memory the records may take (bytes plus ItemOverhead
	// each) before they spill.
	Budget int64
	// AllowDisk lets the sort spill past Budget; without it, OverBudget's
	// error is returned.
	AllowDisk bool
	// OverBudget returns the error for a sort over Budget without
	// AllowDisk (nil: a plain error naming the budget).
	OverBudget func() error
	// TempDir receives the runs ("" is os.TempDir()).
	TempDir string
	// Stats, if set, counts the runs (else the Sorter has its own).
	Stats *Stats
	// Cmp orders keys (nil: bytes.Compare).
	Cmp func(a, b []byte) int
	// Keep, when positive, makes the sort a top-k: only the Keep first
	// records are returned, and the sort never spills.
	Keep int64
	// Retain makes the records the iterator returns stay valid for good
	// (else until the next call).
	Retain bool
	// Ctx, if set, stops the sort when its Err is not nil.
	Ctx Checker
}

// Sorter sorts records; see the package comment.
type Sorter struct {
	o     Options
	items []Item
	arena []byte
	mem   int64
	spill *Spill
	runs  []*Run
	// top-k (Keep > 0): a max-heap of the best records, with their
	// positions as tie-breaks.
	top  []topItem
	seq  uint64
	done bool
}

type topItem struct {
	Item
	seq uint64
}

// New returns a Sorter.
func New(o Options) *Sorter {
	if o.Stats == nil {
		o.Stats = &Stats{}
	}
	if o.OverBudget == nil {
		budget := o.Budget
		o.OverBudget = func() error {
			return fmt.Errorf("extsort: the sort passed its memory budget of %d bytes and may not use the disk", budget)
		}
	}
	return &Sorter{o: o}
}

// Stats is what the sort spilled.
func (s *Sorter) Stats() *Stats { return s.o.Stats }

// Spilled reports whether this sort wrote a run.
func (s *Sorter) Spilled() bool { return len(s.runs) > 0 }

// Add copies a record into the sort.
func (s *Sorter) Add(key, val []byte) error {
	if s.o.Keep > 0 {
		return s.addTop(key, val)
	}
	need := len(key) + len(val)
	if cap(s.arena)-len(s.arena) < need {
		s.arena = make([]byte, 0, max(arenaBlock, need))
	}
	start := len(s.arena)
	s.arena = append(append(s.arena, key...), val...)
	mid, end := start+len(key), len(s.arena)
	s.items = append(s.items, Item{Key: s.arena[start:mid:mid], Val: s.arena[mid:end:end]})
	if s.mem += int64(need) + ItemOverhead; s.mem <= s.o.Budget {
		return nil
	}
	if !s.o.AllowDisk {
		return s.o.OverBudget()
	}
	return s.spillItems()
}

// spillItems sorts the records in memory and writes them as a run.
func (s *Sorter) spillItems() error {
	if s.o.Ctx != nil {
		if err := s.o.Ctx.Err(); err != nil {
			return err
		}
	}
	s.sort()
	if s.spill == nil {
		s.spill = NewSpill(s.o.TempDir, s.o.Stats)
	}
	r, err := s.spill.WriteRun(s.items)
	if err != nil {
		return err
	}
	s.runs = append(s.runs, r)
	clear(s.items)
	s.items, s.arena, s.mem = s.items[:0], s.arena[:0], 0
	return nil
}

// sort orders the records in memory, ties by position.
func (s *Sorter) sort() {
	if s.o.Cmp == nil {
		SortItems(s.items)
		return
	}
	slices.SortStableFunc(s.items, func(a, b Item) int { return s.o.Cmp(a.Key, b.Key) })
}

// Finish returns the records in order. Close must still be called (the
// iterator closes the runs at its end).
func (s *Sorter) Finish() (*Iter, error) {
	s.done = true
	if s.o.Keep > 0 {
		return &Iter{mem: s.finishTop()}, nil
	}
	s.sort()
	if len(s.runs) == 0 {
		items := s.items
		s.items = nil
		return &Iter{mem: items}, nil
	}
	bufSize := int(min(max(s.o.Budget/4/int64(len(s.runs)), 16<<10), 256<<10))
	srcs := make([]Source, 0, len(s.runs)+1)
	for _, r := range s.runs {
		rd, err := r.Open(bufSize, s.o.Retain)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, rd)
	}
	srcs = append(srcs, &SliceSource{Items: s.items})
	s.items = nil
	return &Iter{m: NewMerger(srcs, s.o.Cmp, s.o.Ctx), s: s}, nil
}

// Close releases the records and removes the runs.
func (s *Sorter) Close() {
	s.items, s.arena, s.top = nil, nil, nil
	if s.spill != nil {
		s.spill.Close()
	}
}

// Iter returns a finished sort's records.
type Iter struct {
	mem []Item
	i   int
	m   *Merger
	s   *Sorter
}

// Next returns the next record (ok false at the end).
func (it *Iter) Next() (key, val []byte, ok bool, err error) {
	if it.m == nil {
		if it.i >= len(it.mem) {
			return nil, nil, false, nil
		}
		r := it.mem[it.i]
		it.mem[it.i] = Item{}
		it.i++
		return r.Key, r.Val, true, nil
	}
	key, val, ok, err = it.m.Next()
	if !ok || err != nil {
		it.s.Close()
	}
	return key, val, ok, err
}

// SortItems sorts items by key in byte order, ties by position. It first
// compares the 8 bytes that follow the prefix every key shares (a sort
// key starts with type tags, a group key with field names), held beside
// each item, so that most comparisons touch neither the keys' memory nor
// bytes.Compare.
func SortItems(items []Item) {
	if len(items) < 2 {
		return
	}
	first := items[0].Key
	cp := len(first)
	for _, it := range items[1:] {
		n := min(cp, len(it.Key))
		i := 0
		for i < n && it.Key[i] == first[i] {
			i++
		}
		cp = i
	}
	type ref struct {
		pfx uint64
		pos int
		it  Item
	}
	refs := make([]ref, len(items))
	for i, it := range items {
		refs[i] = ref{pfx: prefix(it.Key[cp:]), pos: i, it: it}
	}
	slices.SortFunc(refs, func(a, b ref) int {
		if a.pfx != b.pfx {
			if a.pfx < b.pfx {
				return -1
			}
			return 1
		}
		if c := bytes.Compare(a.it.Key[cp:], b.it.Key[cp:]); c != 0 {
			return c
		}
		return a.pos - b.pos
	})
	for i := range refs {
		items[i] = refs[i].it
	}
}

// addTop offers a record to the top-k.
func (s *Sorter) addTop(key, val []byte) error {
	seq := s.seq
	s.seq++
	if int64(len(s.top)) < s.o.Keep {
		t := topItem{Item: Item{Key: bytes.Clone(key), Val: bytes.Clone(val)}, seq: seq}
		s.mem += int64(len(key)+len(val)) + ItemOverhead
		if s.mem > s.o.Budget && !s.o.AllowDisk {
			return s.o.OverBudget()
		}
		s.top = append(s.top, t)
		s.up(len(s.top) - 1)
		return nil
	}
	if s.cmpKeys(key, s.top[0].Key) >= 0 {
		return nil // ties keep the earlier record
	}
	t := &s.top[0]
	s.mem += int64(len(val)+len(key)) - int64(len(t.Val)+len(t.Key))
	if s.mem > s.o.Budget && !s.o.AllowDisk {
		return s.o.OverBudget()
	}
	t.Key = append(t.Key[:0], key...)
	t.Val = append(t.Val[:0], val...)
	t.seq = seq
	s.downTop(0)
	return nil
}

func (s *Sorter) cmpKeys(a, b []byte) int {
	if s.o.Cmp == nil {
		return bytes.Compare(a, b)
	}
	return s.o.Cmp(a, b)
}

// after reports whether a sorts after b (the max-heap's order).
func (s *Sorter) after(a, b *topItem) bool {
	if c := s.cmpKeys(a.Key, b.Key); c != 0 {
		return c > 0
	}
	return a.seq > b.seq
}

func (s *Sorter) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !s.after(&s.top[i], &s.top[p]) {
			return
		}
		s.top[i], s.top[p] = s.top[p], s.top[i]
		i = p
	}
}

func (s *Sorter) downTop(i int) {
	h := s.top
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		j := l
		if r := l + 1; r < len(h) && s.after(&h[r], &h[l]) {
			j = r
		}
		if !s.after(&h[j], &h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

// finishTop returns the top-k's records in order.
func (s *Sorter) finishTop() []Item {
	slices.SortFunc(s.top, func(a, b topItem) int {
		if c := s.cmpKeys(a.Key, b.Key); c != 0 {
			return c
		}
		if a.seq < b.seq {
			return -1
		}
		return 1
	})
	out := make([]Item, len(s.top))
	for i := range s.top {
		out[i] = s.top[i].Item
	}
	s.top = nil
	return out
}
