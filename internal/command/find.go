package command

import (
	"context"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/kv"
)

// parseQueryOptions reads collation and let, shared by the CRUD commands.
func parseQueryOptions(a args, collation bson.Value) (*query.Options, error) {
	opts := &query.Options{}
	if collation.Type != 0 && collation.Type != bson.TypeNull {
		if collation.Type != bson.TypeDocument {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.collation' is the wrong type '%s', expected type 'object'", a.cmd, collation.Type)
		}
		coll, err := query.ParseCollation(collation.Document())
		if err != nil {
			return nil, err
		}
		opts.Collation = coll
	}
	if let, ok, err := a.doc("let"); err != nil {
		return nil, err
	} else if ok {
		opts.Let = let
	}
	return opts, nil
}

// withMaxTime applies maxTimeMS to the command's context.
func withMaxTime(c *Ctx) (context.CancelFunc, error) {
	v, ok := c.Body.Lookup("maxTimeMS")
	if !ok || v.Type == bson.TypeNull {
		return func() {}, nil
	}
	ms, err := numberArg(v)
	if err != nil {
		return nil, mongoerr.New(mongoerr.BadValue, "maxTimeMS must be a number")
	}
	if ms < 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "%d value for maxTimeMS is out of range [0, 2147483647]", ms)
	}
	if ms > 2147483647 {
		return nil, mongoerr.New(mongoerr.BadValue, "%d value for maxTimeMS is out of range [0, 2147483647]", ms)
	}
	if ms == 0 {
		return func() {}, nil
	}
	ctx, cancel := context.WithTimeout(c.Context, time.Duration(ms)*time.Millisecond)
	c.Context = ctx
	return cancel, nil
}

func find(c *Ctx) error {
	if !disableExpress {
		if done, err := expressFind(c); done || err != nil {
			return err
		}
	}
	a := newArgs(c)
	if err := a.check("filter", "projection", "sort", "skip", "limit", "batchSize", "singleBatch", "hint",
		"collation", "let", "min", "max", "returnKey", "showRecordId", "tailable", "oplogReplay",
		"noCursorTimeout", "awaitData", "allowPartialResults", "allowDiskUse", "readOnce", "term", "ntoreturn"); err != nil {
		return err
	}
	name, err := c.collectionArg()
	if err != nil {
		return err
	}
	if isView, err := findOnView(c, name); err != nil || isView {
		if err != nil {
			return err
		}
		return aggregate(c)
	}
	cancel, err := withMaxTime(c)
	if err != nil {
		return err
	}
	defer cancel()
	collation, _ := c.Body.Lookup("collation")
	opts, err := c.queryOptionsFor(a, collation, name)
	if err != nil {
		return err
	}
	spec := &exec.FindSpec{Db: c.DB, Coll: name, Opts: opts}
	filter, _, err := a.doc("filter")
	if err != nil {
		return err
	}
	rest, near, err := exec.SplitNear(orEmptyDoc(filter))
	if err != nil {
		return err
	}
	if err := exec.ParseFilterText(spec, rest, opts); err != nil {
		return err
	}
	if near != nil && spec.Text != nil {
		return mongoerr.New(mongoerr.BadValue, "text and geoNear not allowed in same query")
	}
	spec.Near = near
	if p, ok, err := a.doc("projection"); err != nil {
		return err
	} else if ok && p.Len() > 0 {
		if spec.Proj, err = query.ParseProjection(p, opts); err != nil {
			return err
		}
		spec.ProjDoc = p
	}
	if s, ok, err := a.doc("sort"); err != nil {
		return err
	} else if ok && s.Len() > 0 {
		if spec.Sort, err = query.ParseSort(s, opts); err != nil {
			return err
		}
		spec.SortDoc = s
		if spec.Sort.HasMeta() && spec.Text == nil {
			return mongoerr.New(mongoerr.TextScoreUnavailable, "query requires text score metadata, but it is not available")
		}
	}
	if spec.Skip, _, err = a.integer("skip"); err != nil {
		return err
	} else if spec.Skip < 0 {
		return mongoerr.New(mongoerr.BatchOptionNegative, "BSON field 'skip' value must be >= 0, actual value '%d'", spec.Skip)
	}
	singleBatch, _, err := a.boolean("singleBatch")
	if err != nil {
		return err
	}
	if spec.Limit, _, err = a.integer("limit"); err != nil {
		return err
	} else if spec.Limit < 0 {
		return mongoerr.New(mongoerr.BatchOptionNegative, "BSON field 'limit' value must be >= 0, actual value '%d'", spec.Limit)
	}
	batchSize, batchSet, err := a.integer("batchSize")
	if err != nil {
		return err
	}
	if batchSize < 0 {
		return mongoerr.New(mongoerr.BatchOptionNegative, "BSON field 'batchSize' value must be >= 0, actual value '%d'", batchSize)
	}
	if v, ok := a.lookup("hint"); ok {
		if err := checkHint(c, name, v); err != nil {
			return err
		}
		spec.Hint = v
	}
	if v, ok, _ := a.boolean("tailable"); ok && v {
		return mongoerr.New(mongoerr.BadValue, "error processing query: tailable cursor requested on non capped collection")
	}
	if err := refuseUnsupportedFindOptions(a, spec); err != nil {
		return err
	}
	if c.explain != nil {
		return explainFind(c, spec)
	}
	c.Env.Stats.Query.Add(1)
	src, err := openFind(c, spec)
	if findHook != nil {
		findHook(c)
	}
	if err != nil {
		return err
	}
	return writeBatch(c, nil, src, c.DB+"."+name, spec.Limit, batchOptions{batchSize: batchSize, firstBatch: true, empty: batchSet && batchSize == 0}, singleBatch)
}

// refuseUnsupportedFindOptions answers the find options Cairn does not
// run with an error rather than a different answer: min and max (index
// bounds; mongod needs a hint with them, 51173), returnKey and
// showRecordId (Cairn has no record ids).
func refuseUnsupportedFindOptions(a args, spec *exec.FindSpec) error {
	_, hasMin := a.lookup("min")
	_, hasMax := a.lookup("max")
	if hasMin || hasMax {
		if spec.Hint.Type == 0 {
			return mongoerr.New(mongoerr.MinMaxRequireHint, "When using min()/max() a hint of which index to use must be provided")
		}
		return mongoerr.New(mongoerr.NotImplemented, "find's min and max are not supported by Cairn: use a filter on the index's fields")
	}
	for _, opt := range []string{"returnKey", "showRecordId"} {
		if v, ok := a.lookup(opt); ok && v.Truthy() {
			return mongoerr.New(mongoerr.NotImplemented, "find's %s is not supported by Cairn", opt)
		}
	}
	return nil
}

func orEmptyDoc(d bson.Doc) bson.Doc {
	if d == nil {
		return bson.EmptyDoc
	}
	return d
}

// checkHint accepts a hint that names an existing index (by name or key
// pattern); Cairn's planner then picks its own plan, which returns the same
// documents. A hint naming no index is an error, as in MongoDB.
func checkHint(c *Ctx, name string, hint bson.Value) error {
	tx, coll, err := c.snapshotCollection(name)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	switch hint.Type {
	case bson.TypeString:
		if coll == nil {
			return nil
		}
		for _, ix := range coll.Indexes {
			if ix.Ready && ix.Name == hint.StringValue() {
				return nil
			}
		}
	case bson.TypeDocument:
		if hint.Document().Len() == 0 {
			return nil
		}
		if v, ok := hint.Document().Lookup("$natural"); ok && v.IsNumber() {
			return nil
		}
		if coll == nil {
			return nil
		}
		for _, ix := range coll.Indexes {
			if key, ok := ix.Spec.Lookup("key"); ok && ix.Ready && bson.Equal(key, hint) {
				return nil
			}
		}
	default:
		return mongoerr.New(mongoerr.FailedToParse, "hint must be a string or an object")
	}
	return mongoerr.New(mongoerr.BadValue, "error processing query: planner returned error :: caused by :: hint provided does not correspond to an existing index")
}

// openFind plans a find: a point lookup when the filter pins _id, otherwise
// a scan of the collection in _id order; a sort collects the matches and
// sorts them (a top-k when there is a limit).
func openFind(c *Ctx, spec *exec.FindSpec) (Source, error) {
	if spec.Text != nil {
		return exec.NewTextSource(&c.Env.Engine, spec, false), nil
	}
	if spec.Near != nil {
		return exec.NewNearSource(&c.Env.Engine, spec), nil
	}
	scan := &scanSource{env: &c.Env.Engine, spec: spec, skip: spec.Skip}
	// A sort on _id alone is the data tree's order: scan it (within the
	// filter's _id bounds) instead of sorting, unless another index would
	// select the documents.
	if dir := idSortDirection(spec.SortDoc); dir != 0 && spec.Hint.Type == 0 {
		_, bounded := idRange(spec)
		if bounded || spec.FilterDoc.Len() == 0 {
			scan.reverse = dir < 0
			scan.collScanOnly = true
			return scan, nil
		}
	}
	if spec.Sort != nil && spec.Sort.Natural() == 0 {
		p, err := sortedPlan(c, spec)
		if err != nil {
			return nil, err
		}
		if p != nil {
			scan.plan, scan.planned = p, true
			return scan, nil
		}
		return newSortedSource(c, scan, spec)
	}
	if spec.Sort != nil && spec.Sort.Natural() < 0 {
		scan.reverse = true
	}
	return scan, nil
}

// sortedPlan is the index plan that returns spec's documents in its sort
// order, if the planner picks one (nil: sort after reading).
func sortedPlan(c *Ctx, spec *exec.FindSpec) (*exec.Plan, error) {
	if _, byID := spec.Filter.IDEquality(); byID || spec.Hint.Type != 0 {
		return nil, nil
	}
	tx, coll, err := c.snapshotCollection(spec.Coll)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	base, _, err := c.Env.PlanQuery(c, tx, coll, spec.FilterDoc, spec.Filter, spec.Opts, spec.Hint)
	if err != nil {
		return nil, err
	}
	if p := exec.ChoosePlanFind(coll, spec, base); p != nil && p.Sorted {
		return exec.CoverPlan(coll, spec, p), nil
	}
	return nil, nil
}

// scanSource streams the documents of a collection that match a filter, in
// _id order (or reverse), skipping the first skip matches. Between batches it
// keeps only the key of the last document it returned and resumes after it in
// a fresh snapshot, as MongoDB's cursors resume after yielding.
type scanSource struct {
	env     *exec.Engine
	spec    *exec.FindSpec
	skip    int64
	reverse bool
	lastKey []byte
	started bool
	done    bool
	buf     []byte
	// plan is the index plan chosen at the first batch (nil: collection
	// scan); walk is where it stopped.
	plan    *exec.Plan
	planned bool
	walk    exec.WalkState
	// collScanOnly keeps the scan in _id order (it serves a sort on _id).
	collScanOnly bool
	// idr bounds a forward scan by the filter's _id range.
	idr *index.KeyRange
	// docsExamined counts documents read (for explain's executionStats);
	// keys examined by an index plan are counted in walk.
	docsExamined int64
	// raw disables projection (internal users that need whole documents).
	raw bool
	// reportedKeys and reportedDocs are what was already added to the
	// operation's slow-log figures.
	reportedKeys, reportedDocs int64
}

// reportExamined adds what this Fill examined to the operation's figures
// for the slow-operation log.
func (s *scanSource) reportExamined(ctx context.Context) {
	_, byID := s.spec.Filter.IDEquality()
	keys, docs := s.walk.Keys, s.docsExamined+s.walk.Docs
	if byID && docs > 0 {
		keys = 1
	}
	exec.NoteExamined(ctx, exec.PlanSummary(s.plan, byID && s.plan == nil), keys-s.reportedKeys, docs-s.reportedDocs)
	s.env.Counters.KeysExamined.Add(keys - s.reportedKeys)
	s.env.Counters.DocsExamined.Add(docs - s.reportedDocs)
	s.reportedKeys, s.reportedDocs = keys, docs
}

func (s *scanSource) Close() {}

func (s *scanSource) Fill(ctx context.Context, emit func(bson.Doc) bool) (bool, error) {
	if s.done {
		return true, nil
	}
	defer s.reportExamined(ctx)
	tx, err := exec.SnapshotOf(ctx, s.env)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	coll, err := catalog.Get(tx, s.spec.Db, s.spec.Coll)
	if err != nil {
		return false, err
	}
	if coll == nil {
		s.done = true
		return true, nil
	}
	t, err := exec.DataTree(tx, coll)
	if err != nil {
		return false, err
	}
	if !s.planned {
		s.planned = true
		if _, byID := s.spec.Filter.IDEquality(); !byID && !s.reverse {
			if !s.collScanOnly {
				p, _, err := s.env.PlanQuery(ctx, tx, coll, s.spec.FilterDoc, s.spec.Filter, s.spec.Opts, s.spec.Hint)
				if err != nil {
					return false, err
				}
				s.plan = exec.CoverPlan(coll, s.spec, p)
			}
			if r, ok := idRange(s.spec); ok && s.plan == nil {
				s.idr = &r
			}
		}
	}
	if s.plan != nil {
		return s.fillFromIndex(ctx, tx, coll, t, emit)
	}
	cur := t.Cursor()
	var k, v []byte
	// Point lookup on _id.
	if id, ok := s.spec.Filter.IDEquality(); ok && !s.started {
		s.started = true
		s.done = true
		key := exec.DocKey(nil, id)
		val, err := t.Get(key)
		if err != nil {
			return false, err
		}
		ok := false
		if val != nil {
			s.docsExamined++
			var md query.MatchDetails
			if ok, err = exec.Matches(s.spec.Filter, bson.Doc(val), &md); err != nil {
				return false, err
			}
		}
		if ok && s.skip == 0 {
			out, err := s.project(bson.Doc(val))
			if err != nil {
				return false, err
			}
			if !emit(out) {
				s.done = false
				s.started = false
				return false, nil
			}
		}
		return true, nil
	}
	switch {
	case !s.started && !s.reverse && s.idr != nil:
		k, v = cur.Seek(s.idr.Start)
		for k != nil && !s.idr.PastStart(k) {
			k, v = cur.Next()
		}
	case !s.started && !s.reverse:
		k, v = cur.First()
	case !s.started:
		k, v = cur.Last()
	case !s.reverse:
		k, v = cur.Seek(s.lastKey)
		if k != nil && string(k) == string(s.lastKey) {
			k, v = cur.Next()
		}
	default:
		k, v = cur.SeekLE(s.lastKey)
		if k != nil && string(k) == string(s.lastKey) {
			k, v = cur.Prev()
		}
	}
	s.started = true
	var md query.MatchDetails
	n := 0
	for ; k != nil && (s.idr == nil || s.idr.BeforeEnd(k)); k, v = s.step(cur) {
		if n++; n&255 == 0 {
			if err := ctx.Err(); err != nil {
				return false, ctxErr(err)
			}
		}
		md = query.MatchDetails{}
		s.docsExamined++
		if ok, err := exec.Matches(s.spec.Filter, bson.Doc(v), &md); err != nil {
			return false, err
		} else if !ok {
			s.lastKey = append(s.lastKey[:0], k...)
			continue
		}
		if s.skip > 0 {
			s.skip--
			s.lastKey = append(s.lastKey[:0], k...)
			continue
		}
		out, err := s.projectDetails(bson.Doc(v), &md)
		if err != nil {
			return false, err
		}
		if !emit(out) {
			return false, nil
		}
		s.lastKey = append(s.lastKey[:0], k...)
	}
	if err := cur.Err(); err != nil {
		return false, err
	}
	s.done = true
	return true, nil
}

// fillFromIndex serves the next documents of an index plan.
func (s *scanSource) fillFromIndex(ctx context.Context, tx *kv.Tx, coll *catalog.Collection, data *kv.Tree, emit func(bson.Doc) bool) (bool, error) {
	var md query.MatchDetails
	done, err := exec.WalkIndex(ctx, tx, coll, data, s.plan, &s.walk, func(_ []byte, d bson.Doc) (bool, error) {
		md = query.MatchDetails{}
		if ok, err := exec.Matches(s.spec.Filter, d, &md); !ok || err != nil {
			return err == nil, err
		}
		if s.skip > 0 {
			s.skip--
			return true, nil
		}
		out, err := s.projectDetails(d, &md)
		if err != nil {
			return false, err
		}
		return emit(out), nil
	})
	if err != nil {
		return false, err
	}
	s.done = done
	return done, nil
}

func (s *scanSource) step(cur interface {
	Next() ([]byte, []byte)
	Prev() ([]byte, []byte)
}) ([]byte, []byte) {
	if s.reverse {
		return cur.Prev()
	}
	return cur.Next()
}

func (s *scanSource) project(d bson.Doc) (bson.Doc, error) {
	var md query.MatchDetails
	s.spec.Filter.MatchDetails(d, &md)
	return s.projectDetails(d, &md)
}

func (s *scanSource) projectDetails(d bson.Doc, md *query.MatchDetails) (bson.Doc, error) {
	if s.spec.Proj == nil || s.raw {
		return d, nil
	}
	out, err := s.spec.Proj.Apply(s.buf[:0], d, md)
	if err != nil {
		return nil, err
	}
	s.buf = out
	return out, nil
}

// sliceSource serves documents held in memory.
type sliceSource struct {
	docs []bson.Doc
	pos  int
}

func (s *sliceSource) Close() { s.docs = nil }

func (s *sliceSource) Fill(ctx context.Context, emit func(bson.Doc) bool) (bool, error) {
	for s.pos < len(s.docs) {
		if !emit(s.docs[s.pos]) {
			return false, nil
		}
		s.docs[s.pos] = nil
		s.pos++
	}
	return true, nil
}

// newSortedSource runs the scan to the end, sorting the matching documents
// (an external sort beyond the memory budget, a top-k with a limit), and
// serves them with skip, limit and projection applied.
func newSortedSource(c *Ctx, scan *scanSource, spec *exec.FindSpec) (Source, error) {
	scan.skip = 0
	scan.raw = true
	st := &exec.Sorter{AllowDisk: true, Parent: c.Env.tempDir()}
	if v, ok := c.Body.Lookup("allowDiskUse"); ok && v.Type == bson.TypeBoolean {
		st.AllowDisk = v.Boolean() // MongoDB 7.0 allows disk use unless told not to
	}
	if spec.Limit > 0 {
		st.Keep = spec.Skip + spec.Limit
	}
	var addErr error
	_, err := scan.Fill(c, func(d bson.Doc) bool {
		if addErr = spec.Sort.Check(d); addErr != nil {
			return false
		}
		addErr = st.Add(spec.Sort.Key(nil, d), d)
		return addErr == nil
	})
	if err == nil {
		err = addErr
	}
	var stream exec.SortedStream
	if err == nil {
		stream, err = st.Finish()
	}
	if err != nil {
		st.Close()
		return nil, err
	}
	noteSorted(c, st.Spilled())
	return &exec.SortedSource{Stream: stream, Spec: spec, Skip: spec.Skip}, nil
}

// idSortDirection is 1 or -1 for a sort on _id alone, else 0.
func idSortDirection(sortDoc bson.Doc) int {
	if len(sortDoc) == 0 || sortDoc.Len() != 1 {
		return 0
	}
	v, ok := sortDoc.Lookup("_id")
	if !ok {
		return 0
	}
	switch f, _ := v.AsFloat64(); {
	case f == 1:
		return 1
	case f == -1:
		return -1
	}
	return 0
}

// idRange is the filter's _id bounds as one range of data tree keys, when
// the filter restricts _id to a single interval (and no collation changes
// string order).
func idRange(spec *exec.FindSpec) (index.KeyRange, bool) {
	if spec.FilterDoc.Len() == 0 || (spec.Opts != nil && spec.Opts.Collation != nil) {
		return index.KeyRange{}, false
	}
	ivs, ok := index.FieldBounds(spec.FilterDoc, "_id", false)
	if !ok || len(ivs) != 1 {
		return index.KeyRange{}, false
	}
	iv := ivs[0]
	return index.KeyRange{
		Start: exec.DocKey(nil, iv.Lo), StartExclusivePrefix: !iv.LoInc,
		End: exec.DocKey(nil, iv.Hi), EndInclusivePrefix: iv.HiInc,
	}, true
}

// findHook, when set (by tests), runs between a find's planning and its
// first batch.
var findHook func(c *Ctx)
