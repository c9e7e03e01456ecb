package agg

import (
	"bytes"
	"slices"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/extsort"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// item is a document with its ordering key.
type item struct {
	key []byte
	doc bson.Doc
}

func itemBytes(it item) int64 { return int64(len(it.key)+len(it.doc)) + extsort.ItemOverhead }

func sortItems(items []item) {
	slices.SortStableFunc(items, func(a, b item) int { return bytes.Compare(a.key, b.key) })
}

// errMemory is MongoDB's error for a blocking stage over its memory limit
// without allowDiskUse.
func errMemory(stage string) error {
	return mongoerr.New(mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed, "Exceeded memory limit for %s, but didn't allow external spilling; pass allowDiskUse:true to opt in.", stage)
}

// spiller is a set of sorted runs of one $group's spill (extsort's), in
// the order they were written.
type spiller struct {
	dir   string
	stats *extsort.Stats
	sp    *extsort.Spill
	runs  []*extsort.Run
}

// writeSorted writes items, already in key order, as a run.
func (s *spiller) writeSorted(items []extsort.Item) error {
	if s.sp == nil {
		s.sp = extsort.NewSpill(s.dir, s.stats)
	}
	r, err := s.sp.WriteRun(items)
	if err != nil {
		return err
	}
	s.runs = append(s.runs, r)
	return nil
}

func (s *spiller) close() {
	for _, r := range s.runs {
		r.Close()
	}
	s.runs = nil
	if s.sp != nil {
		s.sp.Close()
	}
}

// mergeLazy merges the runs for a caller that is done with an item when
// it asks for the next one: items are served from the readers' buffers
// and are valid only until the next call.
//
// The readers' buffers share budget bytes (each between 16 KiB and 256
// KiB), so that a merge of many runs stays within its memory.
func (s *spiller) mergeLazy(budget int64, ctx extsort.Checker) (func() (item, bool, error), error) {
	size := int(min(max(budget/int64(max(len(s.runs), 1)), 16<<10), 256<<10))
	srcs := make([]extsort.Source, 0, len(s.runs))
	for _, r := range s.runs {
		rd, err := r.Open(size, false)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, rd)
	}
	m := extsort.NewMerger(srcs, nil, ctx)
	return func() (item, bool, error) {
		k, v, ok, err := m.Next()
		return item{key: k, doc: bson.Doc(v)}, ok, err
	}, nil
}
