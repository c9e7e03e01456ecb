package command

import (
	"context"
	"runtime"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/catalog"
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
		t, err := dataTree(s.tx, s.coll)
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

// parallelRun starts the pipeline over a parallel scan when it suits one:
// more than one core and a pipeline agg can split (streaming stages and a
// mergeable $group). The scan reads the column cache when it holds (or may
// build) the fields the pipeline reads; else it walks the index serving
// the leading $match when there is one, else the collection.
func (s *aggSource) parallelRun(tx *kv.Tx, ctx context.Context) (agg.Iterator, bool, error) {
	workers := runtime.GOMAXPROCS(0)
	if workers < 2 || s.coll == "" || s.p.StartsWithSource() || !s.p.CanRunParallel() {
		return nil, false, nil
	}
	coll, err := catalog.Get(tx, s.db, s.coll)
	if err != nil || coll == nil {
		return nil, false, err
	}
	if _, _, isView := coll.View(); isView {
		return nil, false, nil
	}
	hint := hinted(s.planning.hint)
	var pl *plan
	if f := s.p.LeadingFilter(); len(f) > 5 || hint {
		if pl, _, err = s.env.planQuery(ctx, tx, coll, f, s.p.Filter, s.p.QueryOptions(), s.planning.hint); err != nil {
			return nil, false, err
		}
	}
	fields := s.p.ParallelFields()
	if !hint && fields != nil {
		src, err := s.env.columnScan(ctx, tx, coll, fields, pl != nil)
		if err != nil {
			return nil, false, err
		}
		if src != nil {
			return s.p.RunParallel(src, workers)
		}
	}
	if pl != nil {
		is := &indexScan{ctx: ctx, tx: tx, coll: coll, plan: pl}
		if fields != nil {
			is.done = func(keys, docs int64) { s.env.wantColumns(tx, coll, fields, keys, docs) }
		}
		return s.p.RunParallel(is, workers)
	}
	return s.p.RunParallel(&rawScan{ctx: ctx, tx: tx, coll: coll}, workers)
}

// indexScan serves the documents an index plan reaches, in batches that
// alias the read transaction's memory; the leading $match, which the
// bounds only approximate, runs in the workers.
type indexScan struct {
	ctx   context.Context
	tx    *kv.Tx
	coll  *catalog.Collection
	plan  *plan
	walk  walkState
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
	data, err := dataTree(s.tx, s.coll)
	if err != nil {
		return dst, err
	}
	ctx := s.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	done, err := walkIndex(ctx, s.tx, s.coll, data, s.plan, &s.walk, func(_ []byte, d bson.Doc) (bool, error) {
		if len(dst) >= max {
			return false, nil
		}
		dst = append(dst, d)
		return true, nil
	})
	s.ended = done
	if done && err == nil && s.done != nil {
		s.done(s.walk.keys, s.walk.docs)
	}
	return dst, err
}
