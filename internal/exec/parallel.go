package exec

import (
	"context"
	"fmt"
	"runtime"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/kv"
)

// ParallelPipeline starts p over a parallel scan of db.coll when it suits
// one: more than one core and a pipeline agg can split (streaming stages
// and a mergeable $group). The scan reads the column cache when it holds
// (or may build) the fields the pipeline reads; else it walks the index
// serving planFilter (the leading $match, filter compiled) when there is
// one, else the collection.
func (e *Engine) ParallelPipeline(ctx context.Context, tx *kv.Tx, db, name string, p *agg.Pipeline, planFilter bson.Doc, filter *query.Filter, hint bson.Value) (agg.Iterator, bool, error) {
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
	hinted := Hinted(hint) && !hintsColumnStore(coll, hint)
	var pl *Plan
	if len(planFilter) > 5 || hinted {
		if pl, _, err = e.PlanQuery(ctx, tx, coll, planFilter, filter, p.QueryOptions(), hint); err != nil {
			return nil, false, err
		}
	}
	fields, lf := p.ParallelFields(), p.LateFields()
	if pl != nil && !hinted && e.ColumnCache.Enabled() {
		// A selective index plan beats any column scan: the columns are
		// read whole, the index only over the plan's ranges.
		selective, err := selectivePlan(tx, coll, pl)
		if err != nil {
			return nil, false, err
		}
		if selective {
			return p.RunParallel(&indexScan{ctx: ctx, tx: tx, coll: coll, plan: pl}, workers)
		}
	}
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
			if it, ok, err := p.RunVector(src.set, workers); err != nil || ok {
				return it, ok, err
			}
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
			return dst, mongoerr.FromContext(err)
		}
	}
	var val []byte
	if !s.started {
		s.started = true
		t, err := DataTree(s.tx, s.coll)
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

// indexScan serves the documents an index plan reaches, in batches that
// alias the read transaction's memory; the leading $match, which the
// bounds only approximate, runs in the workers.
type indexScan struct {
	ctx   context.Context
	tx    *kv.Tx
	coll  *catalog.Collection
	plan  *Plan
	walk  WalkState
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
	data, err := DataTree(s.tx, s.coll)
	if err != nil {
		return dst, err
	}
	ctx := s.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	done, err := WalkIndex(ctx, s.tx, s.coll, data, s.plan, &s.walk, func(_ []byte, d bson.Doc) (bool, error) {
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
		data, err := DataTree(tx, coll)
		if err != nil {
			return nil, err
		}
		_, v, err := LookupID(tx, coll, data, nil, id)
		if err != nil || v == nil {
			return nil, err
		}
		return append(bson.Doc(nil), v...), nil
	}
}

// selectivePlan reports whether the index plan pl reaches at most a
// 1/wantColumnsShare of coll's documents — the share below which an index
// scan costs less than a column scan of the whole collection (wantColumns'
// measure). It counts pl's index entries, stopping at that bound, so it
// reads at most a sixteenth of the index; a union plan counts all its
// branches.
func selectivePlan(tx *kv.Tx, coll *catalog.Collection, pl *Plan) (bool, error) {
	data, err := DataTree(tx, coll)
	if err != nil {
		return false, err
	}
	limit := data.Len() / wantColumnsShare
	branches := pl.Or
	if branches == nil {
		branches = []*Plan{pl}
	}
	var n int64
	for _, b := range branches {
		it, err := tx.Tree(coll.IndexTree(b.Index))
		if err != nil {
			return false, nil // dropped: the scan itself reports it
		}
		cur := it.Cursor()
		for _, r := range b.Ranges {
			var st WalkState
			for k, _ := seekRangeForward(cur, r, &st); k != nil && r.BeforeEnd(k) && r.PastStart(k); k, _ = cur.Next() {
				if n++; n > limit {
					return false, nil
				}
			}
			if err := cur.Err(); err != nil {
				return false, fmt.Errorf("counting index %s of %s: %w", b.Index, coll.Namespace(), err)
			}
		}
	}
	return true, nil
}
