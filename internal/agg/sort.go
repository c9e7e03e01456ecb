package agg

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/extsort"
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

// emit hands on a sorted record's document, restoring its $text score.
func (s *sortStage) emit(key, doc []byte) bson.Doc {
	if s.score != nil {
		*s.score = math.Float64frombits(binary.LittleEndian.Uint64(key[len(key)-8:]))
	}
	return bson.Doc(doc)
}

// sorter returns the external sort of the stage: the memory limit,
// spilling with allowDiskUse, the documents it returns valid for good
// (later stages may hold them).
func (s *sortStage) sorter(keep int64) *extsort.Sorter {
	return extsort.New(extsort.Options{Budget: s.ctx.memLimit(), AllowDisk: s.ctx.AllowDiskUse, TempDir: s.ctx.TempDir,
		Stats: s.ctx.Spill, Keep: keep, Retain: true, Ctx: checker{s.ctx},
		OverBudget: func() error { return errMemory("$sort stage") }})
}

// checker reports a pipeline's interruption (Context.Check) to extsort.
type checker struct{ c *Context }

func (c checker) Err() error { return c.c.check() }

func (s *sortStage) sortAll(in Iterator) (func() (bson.Doc, error), error) {
	return s.run(in, 0)
}

// topK keeps only the best limit documents, in memory.
func (s *sortStage) topK(in Iterator) (func() (bson.Doc, error), error) {
	return s.run(in, s.limit)
}

// run sorts the input (keep > 0: only its first keep documents).
func (s *sortStage) run(in Iterator, keep int64) (func() (bson.Doc, error), error) {
	st := s.sorter(keep)
	var seq uint64
	var k []byte
	for {
		d, err := in.Next()
		if err != nil {
			st.Close()
			return nil, err
		}
		if d == nil {
			break
		}
		if seq&1023 == 0 {
			if err := s.ctx.check(); err != nil {
				st.Close()
				return nil, err
			}
		}
		k = s.key(k[:0], d, seq)
		seq++
		if err := st.Add(k, d); err != nil {
			st.Close()
			return nil, err
		}
	}
	it, err := st.Finish()
	if err != nil {
		st.Close()
		return nil, err
	}
	return func() (bson.Doc, error) {
		key, doc, ok, err := it.Next()
		if err != nil || !ok {
			st.Close()
			return nil, err
		}
		return s.emit(key, doc), nil
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
