package command

import (
	"context"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// parseQueryOptions reads collation and let, shared by the CRUD commands.
func parseQueryOptions(a args, collation bson.Value) (*query.Options, error) {
	opts := &query.Options{}
	// collation: {} is none, as mongod treats it (given).
	if collation.Type != 0 && collation.Type != bson.TypeNull && !(collation.Type == bson.TypeDocument && len(collation.Document()) <= 5) {
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
	if !c.Env.state.noExpress {
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
	spec := &exec.FindSpec{DB: c.DB, Coll: name, Opts: opts}
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
		return mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field 'skip' value must be >= 0, actual value '%d'", spec.Skip)
	}
	singleBatch, _, err := a.boolean("singleBatch")
	if err != nil {
		return err
	}
	if spec.Limit, _, err = a.integer("limit"); err != nil {
		return err
	} else if spec.Limit < 0 {
		return mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field 'limit' value must be >= 0, actual value '%d'", spec.Limit)
	}
	batchSize, batchSet, err := a.integer("batchSize")
	if err != nil {
		return err
	}
	if batchSize < 0 {
		return mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field 'batchSize' value must be >= 0, actual value '%d'", batchSize)
	}
	if v, ok := a.lookup("hint"); ok {
		if err := checkHint(c, name, v); err != nil {
			return err
		}
		spec.Hint = v
	}
	tail, err := parseTailable(c, a, spec, singleBatch)
	if err != nil {
		return err
	}
	if err := parseFindKeyOptions(a, spec); err != nil {
		return err
	}
	if c.explain != nil {
		return explainFind(c, spec)
	}
	c.Env.Stats.Query.Add(1)
	if tail.tailable {
		return findTailable(c, spec, tail, batchSize, batchSet)
	}
	src, err := openFind(c, spec)
	if c.Env.state.findHook != nil {
		c.Env.state.findHook(c)
	}
	if err != nil {
		return err
	}
	return writeBatch(c, nil, src, c.DB+"."+name, spec.Limit, batchOptions{batchSize: batchSize, firstBatch: true, empty: batchSet && batchSize == 0}, singleBatch)
}

// parseFindKeyOptions reads min, max, returnKey and showRecordId (run by
// exec: findopts.go).
func parseFindKeyOptions(a args, spec *exec.FindSpec) error {
	var err error
	var hasMin, hasMax bool
	if spec.Min, hasMin, err = a.doc("min"); err != nil {
		return err
	}
	if spec.Max, hasMax, err = a.doc("max"); err != nil {
		return err
	}
	if hasMin && spec.Min.Len() == 0 {
		spec.Min = nil // {} is no bound, as mongod's
	}
	if hasMax && spec.Max.Len() == 0 {
		spec.Max = nil
	}
	if spec.HasMinMax() && spec.Hint.Type == 0 {
		return mongoerr.New(mongoerr.MinMaxRequireHint, "When using min()/max() a hint of which index to use must be provided")
	}
	if spec.ReturnKey, _, err = a.boolean("returnKey"); err != nil {
		return err
	}
	if spec.ShowRecordID, _, err = a.boolean("showRecordId"); err != nil {
		return err
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
func openFind(c *Ctx, spec *exec.FindSpec) (exec.Source, error) {
	if spec.Text != nil {
		return exec.NewTextSource(&c.Env.Engine, spec, false), nil
	}
	if spec.Near != nil {
		return exec.NewNearSource(&c.Env.Engine, spec), nil
	}
	scan := &exec.ScanSource{Env: &c.Env.Engine, Spec: spec, Skip: spec.Skip}
	if spec.HasMinMax() {
		// The hinted index's min/max range (exec's findopts.go), sorted
		// after reading when a sort is asked for.
		if spec.Sort != nil && spec.Sort.Natural() == 0 {
			return newSortedSource(c, scan, spec)
		}
		return scan, nil
	}
	// A sort on _id alone is the data tree's order: scan it (within the
	// filter's _id bounds) instead of sorting, unless another index would
	// select the documents.
	if dir := exec.IDSortDirection(spec.SortDoc); dir != 0 && spec.Hint.Type == 0 {
		_, bounded := exec.IDRange(spec)
		if (bounded || spec.FilterDoc.Len() == 0) && scansByID(c, spec.Coll) {
			scan.Reverse = dir < 0
			scan.CollScanOnly = true
			return scan, nil
		}
	}
	if spec.Sort != nil && spec.Sort.Natural() == 0 {
		p, err := sortedPlan(c, spec)
		if err != nil {
			return nil, err
		}
		if p != nil {
			scan.Plan, scan.Planned = p, true
			return scan, nil
		}
		return newSortedSource(c, scan, spec)
	}
	if exec.NaturalBackward(spec) {
		scan.Reverse = true
	}
	return scan, nil
}

// scansByID reports whether the collection's data tree is in _id order
// (not a capped collection's record order).
func scansByID(c *Ctx, name string) bool {
	coll, err := c.collectionMeta(name)
	return err != nil || exec.ScansByID(coll)
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

// newSortedSource runs the scan to the end, sorting the matching documents
// (an external sort beyond the memory budget, a top-k with a limit), and
// serves them with skip, limit and projection applied.
func newSortedSource(c *Ctx, scan *exec.ScanSource, spec *exec.FindSpec) (exec.Source, error) {
	scan.Skip = 0
	// returnKey and showRecordId shape each result in the scan (they need
	// its index key and record); the sort then reads the stored document.
	shaped := spec.ReturnKey || spec.ShowRecordID
	scan.Raw = !shaped
	st := &exec.Sorter{AllowDisk: true, Parent: c.Env.tempDir()}
	if v, ok := c.Body.Lookup("allowDiskUse"); ok && v.Type == bson.TypeBoolean {
		st.AllowDisk = v.Boolean() // MongoDB 7.0 allows disk use unless told not to
	}
	if spec.Limit > 0 {
		st.Keep = spec.Skip + spec.Limit
	}
	var addErr error
	_, err := scan.Fill(c, func(d bson.Doc) bool {
		orig := d
		if shaped {
			orig = scan.Orig
		}
		if addErr = spec.Sort.Check(orig); addErr != nil {
			return false
		}
		addErr = st.Add(spec.Sort.Key(nil, orig), d)
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
	return &exec.SortedSource{Stream: stream, Spec: spec, Skip: spec.Skip, Projected: shaped}, nil
}
