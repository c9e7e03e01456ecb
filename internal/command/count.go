package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func count(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("query", "limit", "skip", "hint", "collation", "fields", "readConcern"); err != nil {
		return err
	}
	name, err := c.CollectionArg()
	if err != nil {
		return err
	}
	if isView, err := countOnView(c, name); err != nil || isView {
		return err
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
	q, _, err := a.Doc("query")
	if err != nil {
		return err
	}
	spec := &exec.FindSpec{DB: c.DB, Coll: name, Opts: opts, CountOnly: true}
	if err := exec.ParseFilterText(spec, orEmptyDoc(q), opts); err != nil {
		return err
	}
	skip, _, err := a.Integer("skip")
	if err != nil {
		return err
	}
	if skip < 0 {
		return mongoerr.New(mongoerr.BadValue, "skip value is negative in count query")
	}
	limit, _, err := a.Integer("limit")
	if err != nil {
		return err
	}
	if limit < 0 {
		limit = -limit
	}
	if v, ok := a.Lookup("hint"); ok {
		if err := checkHint(c, name, v); err != nil {
			return err
		}
		spec.Hint = v
	}
	spec.Skip = skip
	spec.Limit = limit
	if c.Explain != nil {
		return explainFind(c, spec)
	}
	n, err := c.Env.Count(c, spec, limit)
	if err != nil {
		return err
	}
	c.Reply.AppendInt32("n", int32(n))
	return nil
}

func distinct(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("key", "query", "collation", "hint", "readConcern"); err != nil {
		return err
	}
	name, err := c.CollectionArg()
	if err != nil {
		return err
	}
	cancel, err := withMaxTime(c)
	if err != nil {
		return err
	}
	defer cancel()
	key, ok, err := a.Str("key")
	if err != nil {
		return err
	}
	if !ok {
		return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'distinct.key' is missing but a required field")
	}
	if key == "" {
		return mongoerr.New(mongoerr.BadValue, "FieldPath cannot be constructed with empty string")
	}
	collation, _ := c.Body.Lookup("collation")
	opts, err := queryOptionsFor(c, a, collation, name)
	if err != nil {
		return err
	}
	q, _, err := a.Doc("query")
	if err != nil {
		return err
	}
	spec := &exec.FindSpec{DB: c.DB, Coll: name, Opts: opts}
	if err := exec.ParseFilterText(spec, orEmptyDoc(q), opts); err != nil {
		return err
	}
	if v, ok := a.Lookup("hint"); ok {
		if err := checkHint(c, name, v); err != nil {
			return err
		}
	}
	var cmp bson.StringComparer
	if opts.Collation != nil {
		cmp = opts.Collation
	}
	values := exec.NewDistinct(key, cmp)
	var viewStages []bson.Doc
	if q := orEmptyDoc(q); len(q) > 5 {
		// On a view the query, $text included, is a $match after the
		// view's pipeline (where MongoDB refuses $text, 17313).
		viewStages = append(viewStages, stage("$match", bson.Value{Type: bson.TypeDocument, Data: q}))
	}
	if isView, err := viewAggregate(c, name, viewStages, bson.Value{}); err != nil {
		return err
	} else if isView {
		docs, err := runAggregate(c)
		if err != nil {
			return err
		}
		for _, d := range docs {
			values.Feed(d)
		}
	} else if err := values.Scan(c, &c.Env.Engine, spec); err != nil {
		return err
	}
	r := c.Reply
	r.StartArray("values")
	for i, v := range values.Values() {
		r.AppendValue(bson.Index(i), v)
	}
	r.End()
	if c.SnapAt != 0 {
		r.AppendTimestamp("atClusterTime", c.SnapAt.T(), c.SnapAt.I())
	}
	return nil
}
