package agg

import (
	"bytes"
	"container/heap"
	"math"

	"github.com/cairndb/cairn/bson"
)

// runParallel counts in each worker and adds the counts.
func (s *countStage) runParallel(c *Context, src BatchSource, prefix []stage, fields []string, workers int) (func() (bson.Doc, error), error) {
	counts := make([]int64, workers)
	fns := make([]func([]bson.Doc, int64) error, workers)
	for i := range fns {
		w, err := newChainWorker(prefix, fields)
		if err != nil {
			return nil, err
		}
		fns[i] = func(docs []bson.Doc, seq int64) error {
			return w.each(docs, seq, func(bson.Doc, int64) error { counts[i]++; return nil })
		}
	}
	if err := feedWorkers(c, src, fns, func() bool { return false }); err != nil {
		return nil, err
	}
	var n int64
	for _, k := range counts {
		n += k
	}
	return s.result(n), nil
}

// result serves the stage's document for a count of n.
func (s *countStage) result(n int64) func() (bson.Doc, error) {
	done := n == 0
	return func() (bson.Doc, error) {
		if done {
			return nil, nil
		}
		done = true
		var b bson.Builder
		if n <= math.MaxInt32 {
			b.AppendInt32(s.field, int32(n))
		} else {
			b.AppendInt64(s.field, n)
		}
		return b.Finish(), nil
	}
}

// runParallel keeps a top-k in each worker, keyed by the sort key and the
// document's input position (so ties resolve in input order, as a serial
// run resolves them), and returns the best k of all workers.
func (s *sortStage) runParallel(src BatchSource, prefix []stage, workers int) (func() (bson.Doc, error), error) {
	heaps := make([]maxHeap, workers)
	fns := make([]func([]bson.Doc, int64) error, workers)
	for i := range fns {
		w, err := newChainWorker(prefix, nil)
		if err != nil {
			return nil, err
		}
		var k []byte
		var mem int64
		fns[i] = func(docs []bson.Doc, seq int64) error {
			h := &heaps[i]
			return w.each(docs, seq, func(d bson.Doc, pos int64) error {
				k = s.key(k[:0], d, uint64(pos))
				if int64(h.Len()) < s.limit {
					it := item{key: append([]byte(nil), k...), doc: cloneDoc(d)}
					mem += itemBytes(it)
					if mem > s.ctx.memLimit() && !s.ctx.AllowDiskUse {
						return errMemory("$sort stage")
					}
					heap.Push(h, it)
					return nil
				}
				if bytes.Compare(k, (*h)[0].key) < 0 {
					top := &(*h)[0]
					top.key = append(top.key[:0], k...)
					top.doc = append(top.doc[:0], d...)
					heap.Fix(h, 0)
				}
				return nil
			})
		}
	}
	if err := feedWorkers(s.ctx, src, fns, func() bool { return false }); err != nil {
		return nil, err
	}
	var items []item
	for _, h := range heaps {
		items = append(items, h...)
	}
	sortItems(items)
	if int64(len(items)) > s.limit {
		items = items[:s.limit]
	}
	i := 0
	return func() (bson.Doc, error) {
		if i >= len(items) {
			return nil, nil
		}
		d := items[i].doc
		i++
		return d, nil
	}, nil
}
