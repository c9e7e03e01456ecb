package command

import (
	"context"
	"runtime"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/kv"
)

// rawScan serves a collection in _id order, in batches of documents that
// alias the read transaction's memory (valid until it ends): the input of
// a parallel aggregation (agg.BatchSource). It applies no filter.
type rawScan struct {
	ctx     context.Context
	tx      *kv.Tx
	coll    *catalog.Collection
	cur     *kv.Cursor
	started bool
	done    bool
}

// NextBatch implements agg.BatchSource.
func (s *rawScan) NextBatch(dst []bson.Doc, max int) ([]bson.Doc, error) {
	dst = dst[:0]
	if s.done {
		return dst, nil
	}
	if s.ctx != nil {
		if err := s.ctx.Err(); err != nil {
			return dst, ctxErr(err)
		}
	}
	var val []byte
	if !s.started {
		s.started = true
		t, err := exec.DataTree(s.tx, s.coll)
		if err != nil {
			return dst, err
		}
		s.cur = t.Cursor()
		_, val = s.cur.First()
	} else {
		_, val = s.cur.Next()
	}
	for ; val != nil; _, val = s.cur.Next() {
		dst = append(dst, bson.Doc(val))
		if len(dst) >= max {
			return dst, nil
		}
	}
	s.done = true
	return dst, s.cur.Err()
}

// parallelRun starts the pipeline over a parallel scan when it suits one
// (see parallelPipeline).
func (s *aggSource) parallelRun(tx *kv.Tx, ctx context.Context) (agg.Iterator, bool, error) {
	if s.coll == "" {
		return nil, false, nil
	}
	return s.env.parallelPipeline(ctx, tx, s.db, s.coll, s.p, s.p.LeadingFilter(), s.p.Filter, s.planning.hint)
}

// RunPipeline implements agg.PipelineRunner for the sub-pipelines of
// $lookup and $unionWith: in the order of an index that provides its
// leading $sort, else in parallel, with the equality the leading $match
// makes of a correlated $expr planning the index scan.
func (k *aggCatalog) RunPipeline(db, coll string, p *agg.Pipeline) (agg.Iterator, bool, error) {
	if it, ok, err := k.sortedRun(db, coll, p, bson.Value{}); err != nil || ok {
		return it, ok, err
	}
	return k.env.parallelPipeline(k.ctx, k.tx, db, coll, p, p.IndexFilter(), nil, bson.Value{})
}

// sortedRun runs p over an index walk in the order of its leading $sort
// when an index provides it (as find's planner chooses one, bounded by
// the leading $match where it can be), reporting false otherwise.
func (k *aggCatalog) sortedRun(db, name string, p *agg.Pipeline, hint bson.Value) (agg.Iterator, bool, error) {
	sortDoc, ok := p.LeadingSort()
	if !ok || exec.Hinted(hint) || k.tx == nil {
		return nil, false, nil
	}
	coll, err := catalog.Get(k.tx, db, name)
	if err != nil || coll == nil {
		return nil, false, err
	}
	if _, _, isView := coll.View(); isView {
		return nil, false, nil
	}
	opts := p.QueryOptions()
	sort, err := query.ParseSort(sortDoc, opts)
	if err != nil {
		return nil, false, nil // the $sort stage reports it
	}
	spec := &exec.FindSpec{FilterDoc: p.LeadingFilter(), Filter: p.Filter, SortDoc: sortDoc, Sort: sort, Opts: opts}
	var base *exec.Plan
	if len(spec.FilterDoc) > 5 {
		if base, _, err = k.env.PlanQuery(k.ctx, k.tx, coll, spec.FilterDoc, p.Filter, opts, bson.Value{}); err != nil {
			return nil, false, err
		}
	}
	pl := exec.ChoosePlanFind(coll, spec, base)
	if pl == nil || !pl.Sorted {
		return nil, false, nil
	}
	sc := k.scan(db, name, p.Filter)
	sc.plan, sc.planned = pl, true
	it, err := p.RunSorted(sc)
	return it, err == nil, err
}

// parallelPipeline starts p over a parallel scan of db.coll when it suits
// one: more than one core and a pipeline agg can split (streaming stages
// and a mergeable $group). The scan reads the column cache when it holds
// (or may build) the fields the pipeline reads; else it walks the index
// serving planFilter (the leading $match, filter compiled) when there is
// one, else the collection.
func (e *Env) parallelPipeline(ctx context.Context, tx *kv.Tx, db, name string, p *agg.Pipeline, planFilter bson.Doc, filter *query.Filter, hint bson.Value) (agg.Iterator, bool, error) {
	workers := runtime.GOMAXPROCS(0)
	if workers < 2 || p.StartsWithSource() || !p.CanRunParallel() {
		return nil, false, nil
	}
	coll, err := catalog.Get(tx, db, name)
	if err != nil || coll == nil {
		return nil, false, err
	}
	if _, _, isView := coll.View(); isView {
		return nil, false, nil
	}
	hinted := exec.Hinted(hint)
	var pl *exec.Plan
	if len(planFilter) > 5 || hinted {
		if pl, _, err = e.PlanQuery(ctx, tx, coll, planFilter, filter, p.QueryOptions(), hint); err != nil {
			return nil, false, err
		}
	}
	fields, lf := p.ParallelFields(), p.LateFields()
	if !hinted && fields == nil && lf != nil {
		src, err := e.columnScan(ctx, tx, coll, lf, pl != nil)
		if err != nil {
			return nil, false, err
		}
		if src != nil {
			narrowByEqualities(src, planFilter, p.QueryOptions())
			if it, ok, err := p.RunParallelFetch(src, workers, fetchByID(tx, coll)); err != nil || ok {
				return it, ok, err
			}
		}
	}
	if !hinted && fields != nil {
		src, err := e.columnScan(ctx, tx, coll, fields, pl != nil)
		if err != nil {
			return nil, false, err
		}
		if src != nil {
			narrowByEqualities(src, planFilter, p.QueryOptions())
			return p.RunParallel(src, workers)
		}
	}
	if pl != nil {
		is := &indexScan{ctx: ctx, tx: tx, coll: coll, plan: pl}
		want := fields
		if want == nil {
			want = lf
		}
		if want != nil {
			is.done = func(keys, docs int64) { e.wantColumns(tx, coll, want, keys, docs) }
		}
		return p.RunParallel(is, workers)
	}
	return p.RunParallel(&rawScan{ctx: ctx, tx: tx, coll: coll}, workers)
}

// indexScan serves the documents an index plan reaches, in batches that
// alias the read transaction's memory; the leading $match, which the
// bounds only approximate, runs in the workers.
type indexScan struct {
	ctx   context.Context
	tx    *kv.Tx
	coll  *catalog.Collection
	plan  *exec.Plan
	walk  exec.WalkState
	ended bool
	// done, if set, is called with the index entries and documents the
	// scan examined when it ends.
	done func(keys, docs int64)
}

// NextBatch implements agg.BatchSource.
func (s *indexScan) NextBatch(dst []bson.Doc, max int) ([]bson.Doc, error) {
	dst = dst[:0]
	if s.ended {
		return dst, nil
	}
	data, err := exec.DataTree(s.tx, s.coll)
	if err != nil {
		return dst, err
	}
	ctx := s.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	done, err := exec.WalkIndex(ctx, s.tx, s.coll, data, s.plan, &s.walk, func(_ []byte, d bson.Doc) (bool, error) {
		if len(dst) >= max {
			return false, nil
		}
		dst = append(dst, d)
		return true, nil
	})
	s.ended = done
	if done && err == nil && s.done != nil {
		s.done(s.walk.Keys, s.walk.Docs)
	}
	return dst, err
}

// fetchByID returns the function that turns a cut document into the
// whole document of the same _id in tx's snapshot (a copy: the results of
// a top-k outlive the snapshot), or nil when it no longer exists.
func fetchByID(tx *kv.Tx, coll *catalog.Collection) func(cut bson.Doc) (bson.Doc, error) {
	return func(cut bson.Doc) (bson.Doc, error) {
		id, ok := cut.Lookup("_id")
		if !ok {
			return nil, nil
		}
		data, err := exec.DataTree(tx, coll)
		if err != nil {
			return nil, err
		}
		v, err := data.Get(exec.DocKey(nil, id))
		if err != nil || v == nil {
			return nil, err
		}
		return append(bson.Doc(nil), v...), nil
	}
}
