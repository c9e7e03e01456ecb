package command

import (
	"sort"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func count(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("query", "limit", "skip", "hint", "collation", "fields", "readConcern"); err != nil {
		return err
	}
	name, err := c.collectionArg()
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
	opts, err := c.queryOptionsFor(a, collation, name)
	if err != nil {
		return err
	}
	q, _, err := a.doc("query")
	if err != nil {
		return err
	}
	spec := &exec.FindSpec{DB: c.DB, Coll: name, Opts: opts, CountOnly: true}
	if err := exec.ParseFilterText(spec, orEmptyDoc(q), opts); err != nil {
		return err
	}
	skip, _, err := a.integer("skip")
	if err != nil {
		return err
	}
	if skip < 0 {
		return mongoerr.New(mongoerr.BadValue, "skip value is negative in count query")
	}
	limit, _, err := a.integer("limit")
	if err != nil {
		return err
	}
	if limit < 0 {
		limit = -limit
	}
	if v, ok := a.lookup("hint"); ok {
		if err := checkHint(c, name, v); err != nil {
			return err
		}
		spec.Hint = v
	}
	spec.Skip = skip
	spec.Limit = limit
	if c.explain != nil {
		return explainFind(c, spec)
	}
	n, err := countMatches(c, spec, limit)
	if err != nil {
		return err
	}
	c.Reply.AppendInt32("n", int32(n))
	return nil
}

// countMatches counts the matching documents after skip, up to limit (0 =
// all). An empty filter is answered from the tree's O(1) length.
func countMatches(c *Ctx, spec *exec.FindSpec, limit int64) (int64, error) {
	var src exec.Source = &exec.ScanSource{Env: &c.Env.Engine, Spec: spec, Skip: spec.Skip, Raw: true}
	if spec.Text != nil {
		src = exec.NewTextSource(&c.Env.Engine, spec, true)
	}
	var n int64
	_, err := src.Fill(c, func(bson.Doc) bool {
		n++
		return limit == 0 || n < limit
	})
	if err != nil {
		return 0, err
	}
	if limit > 0 && n > limit {
		n = limit
	}
	return n, nil
}

func distinct(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("key", "query", "collation", "hint", "readConcern"); err != nil {
		return err
	}
	name, err := c.collectionArg()
	if err != nil {
		return err
	}
	cancel, err := withMaxTime(c)
	if err != nil {
		return err
	}
	defer cancel()
	key, ok, err := a.str("key")
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
	opts, err := c.queryOptionsFor(a, collation, name)
	if err != nil {
		return err
	}
	q, _, err := a.doc("query")
	if err != nil {
		return err
	}
	spec := &exec.FindSpec{DB: c.DB, Coll: name, Opts: opts}
	if err := exec.ParseFilterText(spec, orEmptyDoc(q), opts); err != nil {
		return err
	}
	if v, ok := a.lookup("hint"); ok {
		if err := checkHint(c, name, v); err != nil {
			return err
		}
	}
	var cmp bson.StringComparer
	if opts.Collation != nil {
		cmp = opts.Collation
	}
	var values []bson.Value
	add := func(v bson.Value) {
		for _, have := range values {
			if bson.CompareCollated(have, v, cmp) == 0 {
				return
			}
		}
		values = append(values, bson.Value{Type: v.Type, Data: append([]byte(nil), v.Data...)})
	}
	feed := func(d bson.Doc) bool {
		exec.PathValues(d, strings.Split(key, "."), func(v bson.Value) {
			if v.Type == bson.TypeArray {
				it := v.Document().Iter()
				for it.Next() {
					add(it.Element().Value)
				}
				return
			}
			add(v)
		})
		return true
	}
	var viewStages []bson.Doc
	if q := orEmptyDoc(q); len(q) > 5 {
		// On a view the query, $text included, is a $match after the
		// view's pipeline (where MongoDB refuses $text, 17313).
		viewStages = append(viewStages, stage("$match", bson.Value{Type: bson.TypeDocument, Data: q}))
	}
	if isView, err := c.viewAggregate(name, viewStages, bson.Value{}); err != nil {
		return err
	} else if isView {
		docs, err := runAggregate(c)
		if err != nil {
			return err
		}
		for _, d := range docs {
			feed(d)
		}
	} else {
		var src exec.Source = &exec.ScanSource{Env: &c.Env.Engine, Spec: spec, Raw: true}
		if spec.Text != nil {
			src = exec.NewTextSource(&c.Env.Engine, spec, true)
		}
		_, err := src.Fill(c, feed)
		src.Close()
		if err != nil {
			return err
		}
	}
	sort.SliceStable(values, func(i, j int) bool { return bson.CompareCollated(values[i], values[j], cmp) < 0 })
	r := c.Reply
	r.StartArray("values")
	for i, v := range values {
		r.AppendValue(bson.Index(i), v)
	}
	r.End()
	if c.snapAt != 0 {
		r.AppendTimestamp("atClusterTime", c.snapAt.T(), c.snapAt.I())
	}
	return nil
}
