package command

import (
	"context"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/dispatch"
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
			return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.collation' is the wrong type '%s', expected type 'object'", a.Cmd, collation.Type)
		}
		coll, err := query.ParseCollation(collation.Document())
		if err != nil {
			return nil, err
		}
		opts.Collation = coll
	}
	if let, ok, err := a.Doc("let"); err != nil {
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
	ms, err := dispatch.NumberArg(v)
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
	if !c.Env.State.NoExpress {
		if done, err := expressFind(c); done || err != nil {
			return err
		}
	}
	a := newArgs(c)
	if err := a.Check("filter", "projection", "sort", "skip", "limit", "batchSize", "singleBatch", "hint",
		"collation", "let", "min", "max", "returnKey", "showRecordId", "tailable", "oplogReplay",
		"noCursorTimeout", "awaitData", "allowPartialResults", "allowDiskUse", "readOnce", "term", "ntoreturn"); err != nil {
		return err
	}
	name, err := c.CollectionArg()
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
	opts, err := queryOptionsFor(c, a, collation, name)
	if err != nil {
		return err
	}
	spec := &exec.FindSpec{DB: c.DB, Coll: name, Opts: opts}
	filter, _, err := a.Doc("filter")
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
	if p, ok, err := a.Doc("projection"); err != nil {
		return err
	} else if ok && p.Len() > 0 {
		if spec.Proj, err = query.ParseProjection(p, opts); err != nil {
			return err
		}
		spec.ProjDoc = p
	}
	if s, ok, err := a.Doc("sort"); err != nil {
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
	if spec.Skip, _, err = a.Integer("skip"); err != nil {
		return err
	} else if spec.Skip < 0 {
		return mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field 'skip' value must be >= 0, actual value '%d'", spec.Skip)
	}
	singleBatch, _, err := a.Boolean("singleBatch")
	if err != nil {
		return err
	}
	if spec.Limit, _, err = a.Integer("limit"); err != nil {
		return err
	} else if spec.Limit < 0 {
		return mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field 'limit' value must be >= 0, actual value '%d'", spec.Limit)
	}
	batchSize, batchSet, err := a.Integer("batchSize")
	if err != nil {
		return err
	}
	if batchSize < 0 {
		return mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field 'batchSize' value must be >= 0, actual value '%d'", batchSize)
	}
	if v, ok := a.Lookup("hint"); ok {
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
	if c.Explain != nil {
		return explainFind(c, spec)
	}
	c.Env.Stats.Query.Add(1)
	if tail.tailable {
		return findTailable(c, spec, tail, batchSize, batchSet)
	}
	src, err := openFind(c, spec)
	if c.Env.State.FindHook != nil {
		c.Env.State.FindHook(c)
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
	if spec.Min, hasMin, err = a.Doc("min"); err != nil {
		return err
	}
	if spec.Max, hasMax, err = a.Doc("max"); err != nil {
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
	if spec.ReturnKey, _, err = a.Boolean("returnKey"); err != nil {
		return err
	}
	if spec.ShowRecordID, _, err = a.Boolean("showRecordId"); err != nil {
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

// checkHint checks a hint against collection name in the command's
// snapshot (exec.CheckHint).
func checkHint(c *Ctx, name string, hint bson.Value) error {
	tx, coll, err := c.SnapshotCollection(name)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return exec.CheckHint(coll, hint)
}

// openFind chooses the find's source in the command's snapshot
// (exec.Engine.OpenFind).
func openFind(c *Ctx, spec *exec.FindSpec) (exec.Source, error) {
	tx, coll, err := c.SnapshotCollection(spec.Coll)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	return c.Env.OpenFind(c, tx, coll, spec, allowDiskUse(c))
}

// allowDiskUse is find's allowDiskUse: MongoDB 7.0 allows disk use unless
// told not to.
func allowDiskUse(c *Ctx) bool {
	if v, ok := c.Body.Lookup("allowDiskUse"); ok && v.Type == bson.TypeBoolean {
		return v.Boolean()
	}
	return true
}
