package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// Views: a view is a catalog entry {viewOn, pipeline} with no storage.
// Reading a view runs an aggregation on the collection it is defined on
// (following views of views) with the view's pipeline first: find, count
// and distinct are rewritten into an aggregate on the view, which
// aggregate.go expands. Writes and index builds on a view answer
// CommandNotSupportedOnView (166).

// isView reports whether db.name is a view.
func isView(c *Ctx, name string) (bool, error) {
	coll, err := c.collectionMeta(name)
	if err != nil || coll == nil {
		return false, err
	}
	_, _, ok := coll.View()
	return ok, nil
}

// createView handles create with viewOn and pipeline.
func createView(c *Ctx, name string) error {
	a := newArgs(c)
	if err := a.check("viewOn", "pipeline", "collation", "writeConcern"); err != nil {
		return err
	}
	viewOn, ok, err := a.str("viewOn")
	if err != nil {
		return err
	}
	if !ok || viewOn == "" {
		return mongoerr.New(mongoerr.BadValue, "'viewOn' must be a non-empty string")
	}
	var collation bson.Doc // the view's default collation, in full (nil: simple)
	if v, ok := a.lookup("collation"); ok {
		if v.Type != bson.TypeDocument {
			return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'create.collation' is the wrong type '%s', expected type 'object'", v.Type)
		}
		coll, err := query.ParseCollation(v.Document())
		if err != nil {
			return err
		}
		if coll != nil {
			var b bson.Builder
			coll.AppendSpec(&b, "c")
			spec, _ := b.Finish().Lookup("c")
			collation = spec.Document()
		}
	}
	pipeline, ok, err := a.array("pipeline")
	if err != nil {
		return err
	}
	if !ok {
		pipeline = bson.EmptyDoc
	}
	it := pipeline.Iter()
	for it.Next() {
		v := it.Element().Value
		if v.Type != bson.TypeDocument {
			return mongoerr.New(mongoerr.TypeMismatch, "'pipeline' must be an array of objects")
		}
		if st := v.Document().Iter(); st.Next() {
			switch st.Element().Key {
			case "$out", "$merge":
				return mongoerr.New(mongoerr.OptionNotSupportedOnView, "%s cannot be used in a view definition", st.Element().Key)
			}
		}
	}
	if err := catalog.ValidateCollectionName(c.DB, viewOn); err != nil {
		return err
	}
	wc, err := parseWriteConcern(c)
	if err != nil {
		return err
	}
	if collation != nil {
		c.Env.collations.Note(&c.Env.Engine)
	}
	return c.writeTx(wc.durability(), func(tx *exec.Tx) error {
		// A view on a view shares its collation, as in mongod.
		if base, err := catalog.Get(tx, c.DB, viewOn); err != nil {
			return err
		} else if base != nil {
			if _, _, isView := base.View(); isView {
				have, _ := base.Options.Lookup("collation")
				if !bson.Equal(bson.Value{Type: bson.TypeDocument, Data: orEmptyDoc(have.Document())}, bson.Value{Type: bson.TypeDocument, Data: orEmptyDoc(collation)}) {
					return mongoerr.New(mongoerr.OptionNotSupportedOnView, "View %s.%s has a different collation than the view it is defined on, %s.%s", c.DB, name, c.DB, viewOn)
				}
			}
		}
		if err := exec.CheckViewGraph(tx, c.DB, name, viewOn, pipeline); err != nil {
			return err
		}
		view, err := catalog.CreateView(tx, c.DB, name, viewOn, pipeline, collation)
		if err != nil {
			return err
		}
		return c.Env.Oplog.Create(tx, view)
	})
}

// viewAggregate reports whether the command's collection is a view, and
// if so rewrites the request as an aggregate on the view with the stages
// the command implies (aggregate expands the view's pipeline in front).
func (c *Ctx) viewAggregate(name string, extra []bson.Doc, batch bson.Value) (bool, error) {
	view, err := isView(c, name)
	if err != nil || !view {
		return false, err
	}
	var b bson.Builder
	b.AppendString("aggregate", name)
	b.StartArray("pipeline")
	for i, s := range extra {
		b.AppendDocument(bson.Index(i), s)
	}
	b.End()
	b.StartDocument("cursor")
	if batch.Type != 0 {
		b.AppendValue("batchSize", batch)
	}
	b.End()
	for _, k := range []string{"collation", "let", "maxTimeMS", "comment", "lsid", "$db"} {
		if v, ok := c.Body.Lookup(k); ok {
			b.AppendValue(k, v)
		}
	}
	c.Body = b.Finish()
	c.Name = "aggregate"
	return true, nil
}

// stage builds {name: value}.
func stage(name string, v bson.Value) bson.Doc {
	var b bson.Builder
	b.AppendValue(name, v)
	return b.Finish()
}

// findOnView runs find on a view as an aggregation.
func findOnView(c *Ctx, name string) (bool, error) {
	// Most finds are on collections: look before building the stages.
	if view, err := isView(c, name); err != nil || !view {
		return false, err
	}
	var extra []bson.Doc
	if f, ok := c.Body.Lookup("filter"); ok && f.Type == bson.TypeDocument && f.Document().Len() > 0 {
		extra = append(extra, stage("$match", f))
	}
	if s, ok := c.Body.Lookup("sort"); ok && s.Type == bson.TypeDocument && s.Document().Len() > 0 {
		extra = append(extra, stage("$sort", s))
	}
	if s, ok := c.Body.Lookup("skip"); ok && s.IsNumber() {
		if n, _ := s.AsInt64(); n > 0 {
			extra = append(extra, stage("$skip", s))
		}
	}
	if l, ok := c.Body.Lookup("limit"); ok && l.IsNumber() {
		if n, _ := l.AsInt64(); n > 0 {
			extra = append(extra, stage("$limit", l))
		}
	}
	if p, ok := c.Body.Lookup("projection"); ok && p.Type == bson.TypeDocument && p.Document().Len() > 0 {
		extra = append(extra, stage("$project", p))
	}
	batch, _ := c.Body.Lookup("batchSize")
	return c.viewAggregate(name, extra, batch)
}

// countOnView answers count on a view from an aggregation's $count.
func countOnView(c *Ctx, name string) (bool, error) {
	var extra []bson.Doc
	if q, ok := c.Body.Lookup("query"); ok && q.Type == bson.TypeDocument && q.Document().Len() > 0 {
		extra = append(extra, stage("$match", q))
	}
	if s, ok := c.Body.Lookup("skip"); ok && s.IsNumber() {
		if n, _ := s.AsInt64(); n > 0 {
			extra = append(extra, stage("$skip", s))
		}
	}
	if l, ok := c.Body.Lookup("limit"); ok && l.IsNumber() {
		if n, _ := l.AsInt64(); n != 0 {
			if n < 0 {
				n = -n
			}
			var b bson.Builder
			b.AppendInt64("$limit", n)
			extra = append(extra, b.Finish())
		}
	}
	var b bson.Builder
	b.AppendString("$count", "n")
	extra = append(extra, b.Finish())
	isView, err := c.viewAggregate(name, extra, bson.Value{})
	if err != nil || !isView {
		return isView, err
	}
	docs, err := runAggregate(c)
	if err != nil {
		return true, err
	}
	var n int64
	if len(docs) > 0 {
		if v, ok := docs[0].Lookup("n"); ok {
			n, _ = v.AsInt64()
		}
	}
	c.Reply.AppendInt32("n", int32(n))
	return true, nil
}

// runAggregate runs the (rewritten) aggregate in c.Body and returns its
// documents, reading the whole cursor.
func runAggregate(c *Ctx) ([]bson.Doc, error) {
	sub := *c
	sub.Reply = &bson.Builder{}
	if err := aggregate(&sub); err != nil {
		return nil, err
	}
	reply := sub.Reply.Finish()
	cur, _ := reply.Lookup("cursor")
	var docs []bson.Doc
	if cur.Type != bson.TypeDocument {
		return nil, nil
	}
	if fb, ok := cur.Document().Lookup("firstBatch"); ok && fb.Type == bson.TypeArray {
		it := fb.Document().Iter()
		for it.Next() {
			docs = append(docs, bson.Doc(append([]byte(nil), it.Element().Value.Data...)))
		}
	}
	if id, ok := cur.Document().Lookup("id"); ok && id.Type == bson.TypeInt64 && id.Int64() != 0 {
		// More than one batch: count results are a single document, so
		// this only happens for large distinct inputs.
		if cursor := c.Env.Cursors.Remove(id.Int64()); cursor != nil {
			_, err := cursor.Src.Fill(c, func(d bson.Doc) bool {
				docs = append(docs, bson.Doc(append([]byte(nil), d...)))
				return true
			})
			cursor.Src.Close()
			if err != nil {
				return nil, err
			}
		}
	}
	return docs, nil
}
