package agg

import (
	"bytes"
	"container/heap"
	"encoding/binary"
	"math"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

func init() {
	register("$sort", stageInfo{parse: parseSort})
}

// sortStage sorts its input; with a limit (a following $limit coalesced
// into it) it keeps only the best limit documents (top-k). Sorting more
// than the memory limit spills sorted runs to disk when allowed.
type sortStage struct {
	s     *query.Sort
	limit int64
	ctx   *Context
	// score is the $text score cell when the input carries scores (nil:
	// it does not). Each document's score rides at the end of its sort
	// key, after the sequence number (so it never changes the order), and
	// is put back in the cell as the document is handed on.
	score *float64
}

func parseSort(c *Context, v bson.Value) (stage, error) {
	return newSort(c, v, c.Expr.TextScore)
}

// newSort compiles a sort specification; score is the $text score cell
// of the input documents, or nil (internal sorts of $sortByCount and
// $fill, whose input carries no score).
func newSort(c *Context, v bson.Value, score *float64) (*sortStage, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.SortStageNotObject, "the $sort key specification must be an object")
	}
	if v.Document().Len() == 0 {
		return nil, mongoerr.New(mongoerr.SortStageNoKeys, "$sort stage must have at least one sort key")
	}
	s, err := query.ParseSort(v.Document(), c.Query)
	if err != nil {
		return nil, err
	}
	if s.Natural() != 0 {
		return nil, mongoerr.New(mongoerr.NotImplemented, "$natural sort is not supported in an aggregation $sort by Cairn")
	}
	if s.HasMeta() && score == nil {
		return nil, mongoerr.New(mongoerr.TextScoreUnavailable, "query requires text score metadata, but it is not available")
	}
	return &sortStage{s: s, ctx: c, score: score}, nil
}

func (s *sortStage) open(in Iterator) (Iterator, error) {
	var out func() (bson.Doc, error)
	return FuncIterator(func() (bson.Doc, error) {
		if out == nil {
			var err error
			if s.limit > 0 {
				out, err = s.topK(in)
			} else {
				out, err = s.sortAll(in)
			}
			if err != nil {
				return nil, err
			}
		}
		return out()
	}), nil
}

// key appends to dst the sort key of d followed by its sequence number, so
// that equal keys keep input order (MongoDB's $sort is stable in practice).
func (s *sortStage) key(dst []byte, d bson.Doc, seq uint64) []byte {
	if s.score == nil {
		return binary.BigEndian.AppendUint64(s.s.Key(dst, d), seq)
	}
	dst = binary.BigEndian.AppendUint64(s.s.KeyScore(dst, d, *s.score), seq)
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(*s.score))
}

// emit hands on a sorted item's document, restoring its $text score.
func (s *sortStage) emit(it *item) bson.Doc {
	if s.score != nil {
		*s.score = math.Float64frombits(binary.LittleEndian.Uint64(it.key[len(it.key)-8:]))
	}
	return it.doc
}

func (s *sortStage) sortAll(in Iterator) (func() (bson.Doc, error), error) {
	var items []item
	var mem int64
	sp := &spiller{dir: s.ctx.TempDir}
	var seq uint64
	for {
		d, err := in.Next()
		if err != nil {
			sp.close()
			return nil, err
		}
		if d == nil {
			break
		}
		if seq&1023 == 0 {
			if err := s.ctx.check(); err != nil {
				sp.close()
				return nil, err
			}
		}
		it := item{key: s.key(nil, d, seq), doc: cloneDoc(d)}
		seq++
		items = append(items, it)
		mem += itemBytes(it)
		if mem > s.ctx.memLimit() {
			if !s.ctx.AllowDiskUse {
				sp.close()
				return nil, errMemory("$sort stage")
			}
			if err := sp.writeRun(items); err != nil {
				sp.close()
				return nil, err
			}
			items, mem = nil, 0
		}
	}
	if len(sp.runs) == 0 {
		sortItems(items)
		i := 0
		return func() (bson.Doc, error) {
			if i >= len(items) {
				return nil, nil
			}
			d := s.emit(&items[i])
			items[i] = item{}
			i++
			return d, nil
		}, nil
	}
	if len(items) > 0 {
		if err := sp.writeRun(items); err != nil {
			sp.close()
			return nil, err
		}
	}
	next, err := sp.merge()
	if err != nil {
		sp.close()
		return nil, err
	}
	return func() (bson.Doc, error) {
		it, ok, err := next()
		if err != nil || !ok {
			sp.close()
			return nil, err
		}
		return s.emit(&it), nil
	}, nil
}

// maxHeap keeps the limit smallest items, largest on top.
type maxHeap []item

func (h maxHeap) Len() int           { return len(h) }
func (h maxHeap) Less(i, j int) bool { return bytes.Compare(h[i].key, h[j].key) > 0 }
func (h maxHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *maxHeap) Push(x any)        { *h = append(*h, x.(item)) }
func (h *maxHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (s *sortStage) topK(in Iterator) (func() (bson.Doc, error), error) {
	h := &maxHeap{}
	var seq uint64
	var mem int64
	var k []byte
	for {
		d, err := in.Next()
		if err != nil {
			return nil, err
		}
		if d == nil {
			break
		}
		if seq&1023 == 0 {
			if err := s.ctx.check(); err != nil {
				return nil, err
			}
		}
		k = s.key(k[:0], d, seq)
		seq++
		if int64(h.Len()) < s.limit {
			it := item{key: append([]byte(nil), k...), doc: cloneDoc(d)}
			mem += itemBytes(it)
			if mem > s.ctx.memLimit() && !s.ctx.AllowDiskUse {
				return nil, errMemory("$sort stage")
			}
			heap.Push(h, it)
			continue
		}
		if bytes.Compare(k, (*h)[0].key) < 0 {
			top := &(*h)[0]
			mem += int64(len(d)) - int64(len(top.doc))
			top.key = append(top.key[:0], k...)
			top.doc = append(top.doc[:0], d...)
			heap.Fix(h, 0)
		}
	}
	items := []item(*h)
	sortItems(items)
	i := 0
	return func() (bson.Doc, error) {
		if i >= len(items) {
			return nil, nil
		}
		d := s.emit(&items[i])
		i++
		return d, nil
	}, nil
}
