package command

import (
	"context"
	"os"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/expr"
	"github.com/cairndb/cairn/internal/extsort"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/kv"
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
	if stages, err = expandCurrentOp(c, name, stages); err != nil {
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
	if lsid, ok := c.Body.Lookup("lsid"); ok && lsid.Type == bson.TypeDocument {
		src.cat.lsid = append(bson.Doc(nil), lsid.Document()...)
	}
	if p.Writes() {
		var wc writeConcern
		if wc, err = parseWriteConcern(c); err != nil {
			return err
		}
		src.cat.durability = wc.durability()
		// Run to completion now: $out/$merge produce no documents.
		if _, err := src.Fill(c, func(bson.Doc) bool { return true }); err != nil {
			return err
		}
		return writeBatch(c, nil, &exec.SliceSource{}, ns, 0, batchOptions{firstBatch: true}, false)
	}
	var s Source = src
	if explicitBatch && batchSize == 0 {
		s = &deferFirst{Source: src}
	}
	return writeBatch(c, nil, s, ns, 0, batchOptions{batchSize: batchSize, firstBatch: true}, false)
}

// maxViewDepth bounds chains of views, as MongoDB's ViewGraph::kMaxViewDepth
// (checked at creation by checkViewGraph, and again when a view resolves).
const maxViewDepth = 20

// resolveView follows db.name through views down to a collection and
// returns its name and the views' pipelines, innermost first.
func resolveView(tx *kv.Tx, db, name string) (source string, stages []bson.Doc, isView bool, err error) {
	source = name
	for depth := 0; ; depth++ {
		coll, err := catalog.Get(tx, db, source)
		if err != nil || coll == nil {
			return source, stages, isView, err
		}
		viewOn, pipeline, ok := coll.View()
		if !ok {
			return source, stages, isView, nil
		}
		if depth >= maxViewDepth {
			return "", nil, false, mongoerr.New(mongoerr.ViewDepthLimitExceeded, "View depth too deep or view cycle detected; maximum depth is %d", maxViewDepth)
		}
		isView = true
		var own []bson.Doc
		it := pipeline.Iter()
		for it.Next() {
			own = append(own, append(bson.Doc(nil), it.Element().Value.Data...))
		}
		stages = append(own, stages...)
		source = viewOn
	}
}

// expandView resolves name; for a view it returns the underlying
// collection and the views' pipelines followed by stages.
func expandView(c *Ctx, name string, stages []bson.Doc) (string, []bson.Doc, error) {
	tx, err := c.readTx()
	if err != nil {
		return "", nil, err
	}
	defer tx.Rollback()
	source, vstages, isView, err := resolveView(tx, c.DB, name)
	if err != nil || !isView {
		return name, stages, err
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
	Source
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
	eopts := &expr.Options{Let: qopts.Let, Now: time.Now()}
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

// explainAggregate answers explain: true with the plan: the collection
// scan (with the leading $match as its filter) and the stages after it.
func explainAggregate(c *Ctx, ns, source string, p *agg.Pipeline, planning *exec.AggPlanning) error {
	var chosen *exec.Plan
	var coll *catalog.Collection
	if f := p.LeadingFilter(); (f != nil || exec.Hinted(planning.Hint) || planning.Text != nil) && source != "" {
		tx, err := c.readTx()
		if err != nil {
			return err
		}
		coll, err = catalog.Get(tx, c.DB, source)
		if err == nil && (len(f) > 5 || exec.Hinted(planning.Hint)) {
			chosen, _, err = c.Env.PlanExplain(c, tx, coll, f, p.Filter, p.QueryOptions(), planning.Hint)
		}
		tx.Rollback()
		if err != nil {
			return err
		}
	}
	r := c.Reply
	r.AppendString("explainVersion", "1")
	var b bson.Builder
	p.Explain(&b, "stages")
	stages, _ := b.Finish().Lookup("stages")
	r.StartArray("stages")
	i := 0
	leading := p.LeadingFilter() != nil
	if g := planning.GeoNear; g != nil {
		leading = false // the $match after $geoNear stays a stage
		appendCursorStage(r, i, "$geoNearCursor", ns, g.Query, func() { appendGeoNearStage(c, g, source) })
		i++
	} else if !p.StartsWithSource() {
		filter := p.LeadingFilter()
		if filter == nil {
			filter = bson.EmptyDoc
		}
		if planning.Text != nil {
			filter = planning.Text.TextFilterDoc
		}
		appendCursorStage(r, i, "$cursor", ns, filter, func() {
			if planning.Text != nil {
				exec.AppendTextStages(r, planning.Text, coll)
			} else if chosen != nil {
				appendIndexStages(r, chosen, filter)
			} else {
				r.AppendString("stage", "COLLSCAN")
				if len(filter) > 5 {
					r.AppendDocument("filter", filter)
				}
				r.AppendString("direction", "forward")
			}
		})
		i++
	}
	it := stages.Document().Iter()
	for j := 0; it.Next(); j++ {
		if j == 0 && leading {
			continue
		}
		r.AppendValue(bson.Index(i), it.Element().Value)
		i++
	}
	r.End()
	r.AppendDocument("command", c.Body)
	host, _ := os.Hostname()
	r.StartDocument("serverInfo")
	r.AppendString("host", host)
	r.AppendString("version", CompatibleVersion)
	r.End()
	return nil
}

// appendCursorStage writes explain's first stage (at index i of the stage
// list): {name: {queryPlanner: {namespace, parsedQuery, winningPlan,
// rejectedPlans: []}}}, the winning plan written by plan.
func appendCursorStage(r *bson.Builder, i int, name, ns string, parsed bson.Doc, plan func()) {
	r.StartDocument(bson.Index(i))
	r.StartDocument(name)
	r.StartDocument("queryPlanner")
	r.AppendString("namespace", ns)
	r.AppendDocument("parsedQuery", parsed)
	r.StartDocument("winningPlan")
	plan()
	r.End()
	r.StartArray("rejectedPlans")
	r.End()
	r.End()
	r.End()
	r.End()
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
	cat     *aggCatalog
	it      agg.Iterator
	pending bson.Doc
	done    bool
	err     error
	// planning holds the hint and $text query of the leading $match.
	planning exec.AggPlanning
}

func newAggSource(c *Ctx, actx *agg.Context, p *agg.Pipeline, name string) *aggSource {
	s := &aggSource{env: c.Env, db: c.DB, coll: name, p: p}
	s.cat = &aggCatalog{AggSnapshot: exec.AggSnapshot{Eng: &c.Env.Engine}, env: c.Env, c: c, durability: kv.Durability(0)}
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
			st.usedDisk.Store(true) // a stage spilled: the slow log's and profiler's usedDisk
		}
	}()
	if s.it == nil && s.planning.Text == nil && s.planning.GeoNear == nil && s.coll != "" && !s.p.StartsWithSource() {
		it, ok, err := s.cat.sortedRun(s.db, s.coll, s.p, s.planning.Hint)
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

// aggCatalog serves the pipeline's reads from the current Fill's snapshot
// and its writes ($out, $merge) through collWriter.
type aggCatalog struct {
	// aggSnapshot is what the collection scans read (aggscan.go).
	exec.AggSnapshot
	env *Env
	// c is the aggregate command's context, used only while the command
	// runs ($out and $merge complete within it).
	c          *Ctx
	lsid       bson.Doc
	durability kv.Durability
}

// Scan implements agg.Catalog; a view is read through its pipeline.
func (k *aggCatalog) Scan(db, coll string) (agg.Iterator, error) {
	source, stages, isView, err := resolveView(k.Tx, db, coll)
	if err != nil {
		return nil, err
	}
	if !isView {
		return k.ScanCollection(db, coll, nil), nil
	}
	vctx := *k.Actx
	vctx.DB, vctx.Coll = db, source
	p, err := agg.Parse(&vctx, stages)
	if err != nil {
		return nil, err
	}
	return p.Run(k.ScanCollection(db, source, nil))
}

// ScanFiltered implements agg.FilteredScanner: a collection (not a view)
// is read through the index plan filter selects, if any; the documents
// are a superset of filter's matches.
func (k *aggCatalog) ScanFiltered(db, coll string, filter bson.Doc) (agg.Iterator, error) {
	_, _, isView, err := resolveView(k.Tx, db, coll)
	if err != nil {
		return nil, err
	}
	if isView {
		return k.Scan(db, coll)
	}
	s := k.ScanCollection(db, coll, nil)
	s.FilterDoc = filter
	return s, nil
}

// Out implements $out: the target's documents are replaced by the
// pipeline's in one transaction (the target keeps its indexes; a duplicate
// _id fails the whole $out and leaves the target unchanged).
func (k *aggCatalog) Out(spec *agg.OutSpec, in agg.Iterator) error {
	if err := catalog.ValidateCollectionName(spec.DB, spec.Coll); err != nil {
		return err
	}
	return k.c.writeTx(k.durability, func(tx *kv.Tx) error {
		coll, err := exec.CollectionForWrite(tx, spec.DB, spec.Coll, true)
		if err != nil {
			return err
		}
		if err := exec.CheckNotView(coll); err != nil {
			return err
		}
		w, err := k.c.writer(tx, coll)
		if err != nil {
			return err
		}
		if err := exec.ClearCollection(w); err != nil {
			return err
		}
		for {
			d, err := in.Next()
			if err != nil {
				return err
			}
			if d == nil {
				return nil
			}
			if _, _, err := w.Insert(d); err != nil {
				return err
			}
		}
	})
}

// Merge implements $merge: each document is inserted, replaces or is
// merged into the target document with the same 'on' fields (_id, or the
// fields of a unique index), as spec says.
func (k *aggCatalog) Merge(spec *agg.MergeSpec, in agg.Iterator) error {
	if err := catalog.ValidateCollectionName(spec.DB, spec.Coll); err != nil {
		return err
	}
	return k.c.writeTx(k.durability, func(tx *kv.Tx) error {
		coll, err := exec.CollectionForWrite(tx, spec.DB, spec.Coll, spec.OnID())
		if err != nil {
			return err
		}
		if coll == nil || (!spec.OnID() && !exec.HasUniqueIndexOn(coll, spec.On)) {
			return mongoerr.New(mongoerr.MergeOnNoUniqueIndex, "Cannot find index to verify that join fields will be unique")
		}
		if err := exec.CheckNotView(coll); err != nil {
			return err
		}
		w, err := k.c.writer(tx, coll)
		if err != nil {
			return err
		}
		m := &exec.Merger{Spec: spec, W: w, NS: coll.Namespace()}
		if !spec.OnID() {
			if err := m.IndexTarget(); err != nil {
				return err
			}
		}
		for {
			d, err := in.Next()
			if err != nil || d == nil {
				return err
			}
			if err := m.Merge(d); err != nil {
				return err
			}
		}
	})
}

// CollStats implements $collStats.
func (k *aggCatalog) CollStats(db, name string, spec bson.Doc) (bson.Doc, error) {
	coll, err := catalog.Get(k.Tx, db, name)
	if err != nil {
		return nil, err
	}
	if coll == nil {
		return nil, mongoerr.New(mongoerr.NamespaceNotFound, "Unable to retrieve storageStats in $collStats stage :: caused by :: Collection [%s.%s] not found.", db, name)
	}
	count, size, err := collSizes(&Ctx{Context: k.Ctx, Env: k.env}, k.Tx, coll)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	var b bson.Builder
	b.AppendString("ns", coll.Namespace())
	b.AppendString("host", host)
	b.AppendDateTime("localTime", time.Now().UnixMilli())
	it := spec.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "latencyStats":
			// The namespace's figures from top; Cairn has no transactions.
			lat := k.env.Top.latency(db, name)
			b.StartDocument("latencyStats")
			for i, op := range []string{"reads", "writes", "commands", "transactions"} {
				b.StartDocument(op)
				b.AppendInt64("latency", lat[i][0])
				b.AppendInt64("ops", lat[i][1])
				b.End()
			}
			b.End()
		case "storageStats":
			scale := int64(1)
			if v, ok := e.Value.Document().Lookup("scale"); ok {
				n, ok := v.AsInt64()
				if !ok || n < 1 {
					return nil, mongoerr.New(mongoerr.BadValue, "Invalid scale argument, scale has to be >= 1")
				}
				scale = n
			}
			b.StartDocument("storageStats")
			b.AppendInt64("size", size/scale)
			b.AppendInt64("count", count)
			if count > 0 {
				b.AppendInt64("avgObjSize", size/count)
			} else {
				b.AppendInt64("avgObjSize", 0)
			}
			b.AppendInt64("storageSize", size/scale)
			b.AppendInt64("freeStorageSize", 0)
			b.AppendBool("capped", false)
			ixSizes, ixTotal, err := indexSizes(k.Tx, coll)
			if err != nil {
				return nil, err
			}
			b.AppendInt32("nindexes", int32(len(coll.Indexes)))
			b.AppendInt64("totalIndexSize", ixTotal/scale)
			b.AppendInt64("totalSize", (size+ixTotal)/scale)
			b.StartDocument("indexSizes")
			for _, ix := range coll.Indexes {
				b.AppendInt64(ix.Name, ixSizes[ix.Name]/scale)
			}
			b.End()
			b.AppendInt64("scaleFactor", scale)
			b.End()
		case "count":
			b.AppendInt64("count", count)
		case "queryExecStats":
			b.StartDocument("queryExecStats")
			b.StartDocument("collectionScans")
			b.AppendInt64("total", 0)
			b.AppendInt64("nonTailable", 0)
			b.End()
			b.End()
		}
	}
	return b.Finish(), nil
}

// IndexStats implements $indexStats (Cairn keeps no per-index access
// counters yet: ops is 0 since the server started).
func (k *aggCatalog) IndexStats(db, name string) ([]bson.Doc, error) {
	coll, err := catalog.Get(k.Tx, db, name)
	if err != nil || coll == nil {
		return nil, err
	}
	host, _ := os.Hostname()
	var out []bson.Doc
	for _, ix := range coll.Indexes {
		var b bson.Builder
		b.AppendString("name", ix.Name)
		if key, ok := ix.Spec.Lookup("key"); ok {
			b.AppendValue("key", key)
		}
		b.AppendString("host", host)
		b.StartDocument("accesses")
		b.AppendInt64("ops", 0)
		b.AppendDateTime("since", k.env.Started.UnixMilli())
		b.End()
		b.AppendDocument("spec", ix.Spec)
		out = append(out, b.Finish())
	}
	return out, nil
}

// LocalSessions implements $listLocalSessions. Cairn keeps no session
// cache: the requesting session is the one it knows.
func (k *aggCatalog) LocalSessions(spec bson.Doc) ([]bson.Doc, error) {
	id, ok := k.lsid.Lookup("id")
	if !ok {
		return nil, nil
	}
	var b bson.Builder
	b.StartDocument("_id")
	b.AppendValue("id", id)
	b.AppendBinary("uid", 0, emptyUserDigest[:])
	b.End()
	b.AppendDateTime("lastUse", time.Now().UnixMilli())
	return []bson.Doc{b.Finish()}, nil
}

// emptyUserDigest is SHA-256 of the empty string: the uid of sessions of
// an unauthenticated client, as MongoDB reports it.
var emptyUserDigest = [32]byte{0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
	0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55}
