package exec

// An aggregation as a cursor's source. Every Fill reads the command's
// snapshot (SnapshotOf: the command's own while it runs, the cursor's
// clone in each getMore) that the pipeline's collection scans use; a scan
// remembers the last key it returned and resumes after it in the next
// snapshot. Blocking stages hold their results in memory or spill files.
// The source keeps nothing of the command's request (its buffers are
// reused after the reply). A pipeline starts, in this order of
// preference, as the leading $geoNear or $text reads its index, as an
// index plan that returns the documents in the pipeline's sort order
// (AggCatalog.SortedRun), as a parallel scan (ParallelPipeline), or as a
// scan of the collection filtered by the leading $match.

import (
	"context"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/expr"
	"github.com/cairndb/cairn/internal/extsort"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// NewAggContext prepares a pipeline's options on db.coll: collation, let
// variables (evaluated once by the expression engine and handed to
// $match as literals), $$NOW and the spill directory.
func (e *Engine) NewAggContext(db, coll string, qopts *query.Options, allowDisk bool) (*agg.Context, error) {
	eopts := &expr.Options{Let: qopts.Let, Now: time.Now(), Scripts: qopts.Scripts}
	if qopts.Collation != nil {
		eopts.Collation = qopts.Collation
	}
	if len(qopts.Let) > 0 {
		vals, err := eopts.LetValues()
		if err != nil {
			return nil, err
		}
		var b bson.Builder
		it := qopts.Let.Iter()
		for it.Next() {
			k := it.Element().Key
			b.StartDocument(k)
			b.AppendValue("$literal", vals[k])
			b.End()
		}
		q := *qopts
		q.Let = b.Finish()
		qopts = &q
	}
	return &agg.Context{DB: db, Coll: coll, Query: qopts, Expr: eopts, AllowDiskUse: allowDisk, TempDir: e.SpillDir(), Spill: &extsort.Stats{}}, nil
}

// ParseAggregate prepares an aggregate on db.name whose pipeline (stages,
// a view's expanded in front) reads source: the leading $geoNear and the
// leading $match's $text are split off to read through their indexes
// (not on a view), and the rest is parsed.
func (e *Engine) ParseAggregate(db, name, source string, stages []bson.Doc, qopts *query.Options, allowDisk bool) (*agg.Context, *agg.Pipeline, AggPlanning, error) {
	var planning AggPlanning
	textColl := ""
	if source == name {
		textColl = name // $text does not apply to views
	}
	var err error
	if stages, planning.GeoNear, err = SplitGeoNear(db, textColl, stages, qopts); err != nil {
		return nil, nil, planning, err
	}
	if planning.GeoNear != nil {
		textColl = "" // $text cannot follow $geoNear
	}
	if stages, planning.Text, err = SplitAggText(db, textColl, stages, qopts); err != nil {
		return nil, nil, planning, err
	}
	actx, err := e.NewAggContext(db, source, qopts, allowDisk)
	if err != nil {
		return nil, nil, planning, err
	}
	if planning.Text != nil {
		actx.Expr.TextScore = new(float64) // set by textIter, read by {$meta: "textScore"}
	}
	p, err := agg.Parse(actx, stages)
	return actx, p, planning, err
}

// AggSource runs a pipeline as a cursor's source (above).
type AggSource struct {
	eng     *Engine
	db      string
	coll    string
	p       *agg.Pipeline
	cat     *AggCatalog
	it      agg.Iterator
	pending bson.Doc
	done    bool
	err     error
	// planning holds the hint and $text query of the leading $match.
	planning AggPlanning
}

// NewAggSource runs p, parsed with actx, over db.coll ("": a pipeline
// that starts with its own source) through cat, the catalog the command
// prepared (cat.Cmd, Sessions, Latency, Started).
func (e *Engine) NewAggSource(actx *agg.Context, p *agg.Pipeline, db, coll string, cat *AggCatalog, planning AggPlanning) *AggSource {
	s := &AggSource{eng: e, db: db, coll: coll, p: p, cat: cat, planning: planning}
	cat.Eng = e
	actx.Catalog = cat
	cat.Actx = actx
	actx.Check = func() error {
		if cat.Ctx != nil {
			if err := cat.Ctx.Err(); err != nil {
				return mongoerr.FromContext(err)
			}
		}
		return nil
	}
	return s
}

// Close implements Source.
func (s *AggSource) Close() {
	s.pending = nil
	s.it = nil
}

// Fill implements Source.
func (s *AggSource) Fill(ctx context.Context, emit func(bson.Doc) bool) (bool, error) {
	if s.done {
		return true, s.err
	}
	tx, err := SnapshotOf(ctx, s.eng)
	if err != nil {
		return false, err
	}
	s.cat.Tx, s.cat.Ctx = tx, ctx
	s.cat.Gen++
	defer func() {
		s.cat.Tx = nil
		tx.Rollback()
		if s.cat.Actx.Spill.Spilled() {
			NoteSpilled(ctx) // a stage spilled: the slow log's and profiler's usedDisk
		}
	}()
	if err := s.start(ctx, tx); err != nil {
		s.done = true
		return false, err
	}
	if s.pending != nil {
		if !emit(s.pending) {
			return false, nil
		}
		s.pending = nil
	}
	for {
		d, err := s.it.Next()
		if err != nil {
			s.done, s.err = true, err
			return false, err
		}
		if d == nil {
			s.done = true
			return true, nil
		}
		if len(d) > MaxBSONObjectSize {
			err := mongoerr.New(mongoerr.BSONObjectTooLarge, "BSONObj size: %d (0x%X) is invalid. Size must be between 0 and 16793600(16MB)", len(d), len(d))
			s.done, s.err = true, err
			return false, err
		}
		if !emit(d) {
			s.pending = append(bson.Doc(nil), d...)
			return false, nil
		}
	}
}

// start opens the pipeline's iterator on the first Fill (above).
func (s *AggSource) start(ctx context.Context, tx *Tx) error {
	if s.it != nil {
		return nil
	}
	indexed := s.planning.Text != nil || s.planning.GeoNear != nil
	if !indexed && s.coll != "" && !s.p.StartsWithSource() {
		it, ok, err := s.cat.SortedRun(s.db, s.coll, s.p, s.planning.Hint)
		if err != nil {
			return err
		}
		if ok {
			s.it = it
			return nil
		}
	}
	if !indexed && s.coll != "" {
		it, ok, err := s.eng.ParallelPipeline(ctx, tx, s.db, s.coll, s.p, s.p.LeadingFilter(), s.p.Filter, s.planning.Hint)
		if err != nil {
			return err
		}
		if ok {
			s.it = it
			return nil
		}
	}
	var in agg.Iterator = agg.FuncIterator(func() (bson.Doc, error) { return nil, nil })
	run := s.p.Run
	switch {
	case s.planning.GeoNear != nil:
		in = NewGeoNearIter(ctx, s.eng, s.planning.GeoNear)
	case s.planning.Text != nil:
		in = &TextIter{Ctx: ctx, Src: NewTextSource(s.eng, s.planning.Text, true), Score: s.cat.Actx.Expr.TextScore}
	case s.coll != "" && !s.p.StartsWithSource():
		sc := s.cat.ScanCollection(s.db, s.coll, s.p.Filter)
		sc.FilterDoc = s.p.LeadingFilter()
		sc.Hint = s.planning.Hint
		in = sc
		run = s.p.RunFiltered
	}
	var err error
	s.it, err = run(in)
	return err
}

// DeferFirst answers an empty first batch (aggregate's cursor.batchSize:
// 0) and runs its source from the first getMore on.
type DeferFirst struct {
	Source
	started bool
}

// Fill implements Source.
func (d *DeferFirst) Fill(ctx context.Context, emit func(bson.Doc) bool) (bool, error) {
	if !d.started {
		d.started = true
		return false, nil
	}
	return d.Source.Fill(ctx, emit)
}
