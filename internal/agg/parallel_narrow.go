package agg

import (
	"slices"
	"strings"

	"github.com/cairndb/cairn/bson"
)

// NarrowSource is a BatchSource whose documents already hold only the
// fields ParallelFields names (the parallel workers then do not cut them
// down), and whose documents stay valid only until the slice that held
// them is passed back to NextBatch: the parallel runs copy what they keep
// ($group's values, a top-k $sort's documents).
type NarrowSource interface {
	BatchSource
	// NarrowFields returns the fields the documents are cut to.
	NarrowFields() []string
}

// ParallelFields returns the top-level fields (with _id) that a parallel
// run of the pipeline reads: those the stages up to its $group or $count
// read, or for a top-k $sort those up to the last inclusion $project
// before it (the documents the sort passes on hold only the projected
// fields). It returns nil when the run may read whole documents, passes
// them on whole (a top-k $sort with no such $project), or cannot run in
// parallel.
func (p *Pipeline) ParallelFields() []string {
	ti := p.parallelTerminal()
	if ti < 0 {
		return nil
	}
	if _, ok := p.stages[ti].(*sortStage); ok {
		for i := ti - 1; i >= 0; i-- {
			if ps, ok := p.stages[i].(*projectStage); ok && ps.p.stage == "$project" && ps.p.inclusion {
				return readFields(p.stages[:i+1], p.stageSpecs[:i+1])
			}
		}
		return nil
	}
	return readFields(p.stages[:ti+1], p.stageSpecs[:ti+1])
}

// narrowed checks a NarrowSource against the fields the run reads: the
// source's documents must hold every one of them.
func narrowed(src BatchSource, fields []string) (narrow, ok bool) {
	ns, isNarrow := src.(NarrowSource)
	if !isNarrow {
		return false, true
	}
	if fields == nil {
		return true, false
	}
	have := map[string]bool{}
	for _, f := range ns.NarrowFields() {
		have[f] = true
	}
	for _, f := range fields {
		if !have[f] {
			return true, false
		}
	}
	return true, true
}

// lateLimit is the largest top-k that LateFields serves: its documents are
// fetched whole, and held, once the top-k is known.
const lateLimit = 10000

// LateFields returns, for a pipeline whose parallel run ends in a top-k
// $sort reached through $match stages only (which pass documents on
// whole, so that ParallelFields is nil), the top-level fields the matches
// and the sort read, with _id: the top-k can run over documents cut to
// them and fetch the few winners whole afterwards (RunParallelFetch). It
// returns nil otherwise.
func (p *Pipeline) LateFields() []string {
	ti := p.parallelTerminal()
	if ti < 0 {
		return nil
	}
	st, ok := p.stages[ti].(*sortStage)
	if !ok || st.limit <= 0 || st.limit > lateLimit {
		return nil
	}
	for _, s := range p.stages[:ti] {
		if _, ok := s.(*matchStage); !ok {
			return nil
		}
	}
	fields := readFields(p.stages[:ti], p.stageSpecs[:ti])
	if fields == nil {
		return nil
	}
	v, _ := p.stageSpecs[ti].Lookup("$sort")
	if v.Type != bson.TypeDocument {
		return nil
	}
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		if !e.Value.IsNumber() {
			return nil // $meta
		}
		f, _, _ := strings.Cut(e.Key, ".")
		if !slices.Contains(fields, f) {
			fields = append(fields, f)
		}
	}
	return fields
}

// RunParallelFetch is RunParallel for a pipeline with LateFields, over a
// source of documents cut to them: the top-k runs over the cut documents,
// and fetch turns each of its results into the whole document (by _id)
// before the stages that follow see it. fetch is called during the first
// Next, for every result at once.
func (p *Pipeline) RunParallelFetch(src BatchSource, workers int, fetch func(cut bson.Doc) (bson.Doc, error)) (Iterator, bool, error) {
	fields := p.LateFields()
	if fields == nil {
		return nil, false, nil
	}
	if narrow, ok := narrowed(src, fields); !ok || !narrow {
		return nil, false, nil
	}
	ti := p.parallelTerminal()
	st := p.stages[ti].(*sortStage)
	var out func() (bson.Doc, error)
	in := FuncIterator(func() (bson.Doc, error) {
		if out == nil {
			top, err := st.runParallel(src, p.stages[:ti], max(workers, 1))
			if err != nil {
				return nil, err
			}
			var docs []bson.Doc
			for {
				d, err := top()
				if err != nil {
					return nil, err
				}
				if d == nil {
					break
				}
				if d, err = fetch(d); err != nil {
					return nil, err
				}
				if d != nil {
					docs = append(docs, d)
				}
			}
			out = (&SliceIterator{Docs: docs}).Next
		}
		return out()
	})
	it, err := openAfterParallel(in, p.stages[ti+1:], workers)
	return it, true, err
}
