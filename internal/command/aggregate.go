package command

import (
	"context"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/expr"
	"github.com/cairndb/cairn/internal/extsort"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// aggregate runs an aggregation pipeline. Results are served by a cursor
// that reads in a fresh snapshot for every batch (collection scans resume
// after the last key they returned; blocking stages hold their results in
// memory or spill files); $out and $merge run to completion in the command
// and write in one transaction.
func aggregate(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("pipeline", "cursor", "explain", "allowDiskUse", "collation", "hint", "let",
		"bypassDocumentValidation", "fromMongos", "needsMerge", "isMapReduceCommand", "rawData"); err != nil {
		return err
	}
	var name string
	switch first := a.first(); first.Type {
	case bson.TypeString:
		name = first.StringValue()
		if err := catalog.ValidateCollectionName(c.DB, name); err != nil {
			return err
		}
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble:
		if f, _ := first.AsFloat64(); f != 1 {
			return mongoerr.New(mongoerr.FailedToParse, "Invalid aggregate namespace: an integer argument to aggregate must be 1")
		}
	default:
		return mongoerr.New(mongoerr.FailedToParse, "Invalid aggregate namespace: collection name must be a string or 1")
	}
	explain, _, err := a.boolean("explain")
	if err != nil {
		return err
	}
	// MongoDB 7.0's allowDiskUseByDefault is true: blocking stages spill
	// unless the command says allowDiskUse: false.
	allowDisk, set, err := a.boolean("allowDiskUse")
	if err != nil {
		return err
	}
	if !set {
		allowDisk = true
	}
	if _, _, err := a.boolean("bypassDocumentValidation"); err != nil {
		return err
	}
	if _, ok := a.lookup("cursor"); !ok && !explain {
		return mongoerr.New(mongoerr.FailedToParse, "The 'cursor' option is required, except for aggregate with the explain argument")
	}
	batchSize, err := cursorBatchSize(a)
	if err != nil {
		return err
	}
	_, explicitBatch := lookupBatchSize(a)
	cancel, err := withMaxTime(c)
	if err != nil {
		return err
	}
	defer cancel()
	collation, _ := c.Body.Lookup("collation")
	qopts, err := c.queryOptionsFor(a, collation, name)
	if err != nil {
		return err
	}
	stages, err := pipelineArg(a)
	if err != nil {
		return err
	}
	if isChangeStream(stages) {
		return changeStream(c, a, name, stages, batchSize, explain)
	}
	if stages, err = c.Env.Ops.ExpandCurrentOp(c.DB, name, stages); err != nil {
		return err
	}
	source := name
	if name != "" {
		if source, stages, err = expandView(c, name, stages); err != nil {
			return err
		}
	}
	var planning exec.AggPlanning
	textColl := ""
	if source == name {
		textColl = name // $text does not apply to views
	}
	if stages, planning.GeoNear, err = exec.SplitGeoNear(c.DB, textColl, stages, qopts); err != nil {
		return err
	}
	if planning.GeoNear != nil {
		textColl = "" // $text cannot follow $geoNear
	}
	if stages, planning.Text, err = exec.SplitAggText(c.DB, textColl, stages, qopts); err != nil {
		return err
	}
	actx, err := newAggContext(c, source, qopts, allowDisk)
	if err != nil {
		return err
	}
	if planning.Text != nil {
		actx.Expr.TextScore = new(float64) // set by textIter, read by {$meta: "textScore"}
	}
	p, err := agg.Parse(actx, stages)
	if err != nil {
		return err
	}
	if v, ok := a.lookup("hint"); ok && name != "" {
		if err := checkHint(c, name, v); err != nil {
			return err
		}
		if source == name {
			planning.Hint = v
		}
	}
	ns := c.DB + "." + name
	if name == "" {
		ns = c.DB + ".$cmd.aggregate"
	}
	if explain {
		return explainAggregate(c, ns, source, p, &planning)
	}
	src := newAggSource(c, actx, p, source)
	src.planning = planning
	if p.Writes() {
		var wc writeConcern
		if wc, err = parseWriteConcern(c); err != nil {
			return err
		}
		src.cat.Durability = wc.durability()
		// Run to completion now: $out/$merge produce no documents.
		if _, err := src.Fill(c, func(bson.Doc) bool { return true }); err != nil {
			return err
		}
		return writeBatch(c, nil, &exec.SliceSource{}, ns, 0, batchOptions{firstBatch: true}, false)
	}
	var s exec.Source = src
	if explicitBatch && batchSize == 0 {
		s = &deferFirst{Source: src}
	}
	return writeBatch(c, nil, s, ns, 0, batchOptions{batchSize: batchSize, firstBatch: true}, false)
}

// expandView resolves name; for a view it returns the underlying
// collection and the views' pipelines followed by stages.
func expandView(c *Ctx, name string, stages []bson.Doc) (string, []bson.Doc, error) {
	tx, err := c.readTx()
	if err != nil {
		return "", nil, err
	}
	defer tx.Rollback()
	source, vstages, isView, err := exec.ResolveView(tx, c.DB, name)
	if err != nil || !isView {
		return name, stages, err
	}
	if len(stages) > 0 && stages[0].Len() == 1 {
		if _, ok := stages[0].Lookup("$collStats"); ok {
			// $collStats on a time-series collection reports its buckets
			// (exec.CollStatsDoc): the view's pipeline does not run.
			if ts, err := exec.TimeseriesOf(tx, c.DB, name); err != nil || ts != nil {
				return name, stages, err
			}
		}
	}
	return source, append(vstages, stages...), nil
}

func lookupBatchSize(a args) (bson.Value, bool) {
	cur, ok, _ := a.doc("cursor")
	if !ok {
		return bson.Value{}, false
	}
	return cur.Lookup("batchSize")
}

// deferFirst answers an empty first batch (cursor.batchSize: 0) and runs
// the pipeline on the first getMore.
type deferFirst struct {
	exec.Source
	started bool
}

func (d *deferFirst) Fill(ctx context.Context, emit func(bson.Doc) bool) (bool, error) {
	if !d.started {
		d.started = true
		return false, nil
	}
	return d.Source.Fill(ctx, emit)
}

func pipelineArg(a args) ([]bson.Doc, error) {
	stagesDoc, ok, err := a.array("pipeline")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'aggregate.pipeline' is missing but a required field")
	}
	var stages []bson.Doc
	it := stagesDoc.Iter()
	for it.Next() {
		v := it.Element().Value
		if v.Type != bson.TypeDocument {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "Each element of the 'pipeline' array must be an object")
		}
		stages = append(stages, v.Document())
	}
	return stages, nil
}

// newAggContext prepares the pipeline's options: collation, let variables
// (evaluated once by the expression engine and handed to $match as
// literals), $$NOW and the spill directory.
func newAggContext(c *Ctx, name string, qopts *query.Options, allowDisk bool) (*agg.Context, error) {
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
	return &agg.Context{DB: c.DB, Coll: name, Query: qopts, Expr: eopts, AllowDiskUse: allowDisk, TempDir: c.Env.tempDir(), Spill: &extsort.Stats{}}, nil
}

// aggSource runs a pipeline as a cursor's source. Every Fill opens a read
// snapshot that the pipeline's collection scans use; a scan remembers the
// last key it returned and resumes after it in the next snapshot. It keeps
// nothing of the command's request (its buffers are reused after the reply).
type aggSource struct {
	env     *Env
	db      string
	coll    string
	p       *agg.Pipeline
	cat     *exec.AggCatalog
	it      agg.Iterator
	pending bson.Doc
	done    bool
	err     error
	// planning holds the hint and $text query of the leading $match.
	planning exec.AggPlanning
}

func newAggSource(c *Ctx, actx *agg.Context, p *agg.Pipeline, name string) *aggSource {
	s := &aggSource{env: c.Env, db: c.DB, coll: name, p: p}
	s.cat = &exec.AggCatalog{AggSnapshot: exec.AggSnapshot{Eng: &c.Env.Engine}, Cmd: c, Latency: c.Env.Top.Latency, Started: c.Env.Started, Sessions: sessionLister{c}}
	actx.Catalog = s.cat
	s.cat.Actx = actx
	actx.Check = func() error {
		if s.cat.Ctx != nil {
			if err := s.cat.Ctx.Err(); err != nil {
				return ctxErr(err)
			}
		}
		return nil
	}
	return s
}

func (s *aggSource) Close() {
	s.pending = nil
	s.it = nil
}

func (s *aggSource) Fill(ctx context.Context, emit func(bson.Doc) bool) (bool, error) {
	if s.done {
		return true, s.err
	}
	tx, err := snapshotOf(ctx, s.env)
	if err != nil {
		return false, err
	}
	s.cat.Tx, s.cat.Ctx = tx, ctx
	s.cat.Gen++
	defer func() {
		s.cat.Tx = nil
		tx.Rollback()
		if st := statsOf(ctx); st != nil && s.cat.Actx.Spill.Spilled() {
			st.Spilled() // a stage spilled: the slow log's and profiler's usedDisk
		}
	}()
	if s.it == nil && s.planning.Text == nil && s.planning.GeoNear == nil && s.coll != "" && !s.p.StartsWithSource() {
		it, ok, err := s.cat.SortedRun(s.db, s.coll, s.p, s.planning.Hint)
		if err != nil {
			s.done = true
			return false, err
		}
		if ok {
			s.it = it
		}
	}
	if s.it == nil && s.planning.Text == nil && s.planning.GeoNear == nil {
		it, ok, err := s.parallelRun(tx, ctx)
		if err != nil {
			s.done = true
			return false, err
		}
		if ok {
			s.it = it
		}
	}
	if s.it == nil {
		var in agg.Iterator = agg.FuncIterator(func() (bson.Doc, error) { return nil, nil })
		run := s.p.Run
		switch {
		case s.planning.GeoNear != nil:
			in = exec.NewGeoNearIter(ctx, &s.env.Engine, s.planning.GeoNear)
		case s.planning.Text != nil:
			in = &exec.TextIter{Ctx: ctx, Src: exec.NewTextSource(&s.env.Engine, s.planning.Text, true), Score: s.cat.Actx.Expr.TextScore}
		case s.coll != "" && !s.p.StartsWithSource():
			sc := s.cat.ScanCollection(s.db, s.coll, s.p.Filter)
			sc.FilterDoc = s.p.LeadingFilter()
			sc.Hint = s.planning.Hint
			in = sc
			run = s.p.RunFiltered
		}
		if s.it, err = run(in); err != nil {
			s.done = true
			return false, err
		}
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

// parallelRun starts the pipeline over a parallel scan when it suits one
// (see parallelPipeline).
func (s *aggSource) parallelRun(tx *exec.Tx, ctx context.Context) (agg.Iterator, bool, error) {
	if s.coll == "" {
		return nil, false, nil
	}
	return s.env.ParallelPipeline(ctx, tx, s.db, s.coll, s.p, s.p.LeadingFilter(), s.p.Filter, s.planning.Hint)
}
