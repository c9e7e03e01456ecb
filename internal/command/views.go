package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
)

// Views (exec/view_ddl.go): the handlers of create with viewOn and the
// rewrites of find, count and distinct on a view into an aggregate.

// isView reports whether db.name is a view.
func isView(c *Ctx, name string) (bool, error) {
	coll, err := c.CollectionMeta(name)
	if err != nil || coll == nil {
		return false, err
	}
	_, _, ok := coll.View()
	return ok, nil
}

// createView handles create with viewOn and pipeline.
func createView(c *Ctx, name string) error {
	a := newArgs(c)
	if err := a.Check("viewOn", "pipeline", "collation", "writeConcern"); err != nil {
		return err
	}
	viewOn, _, err := a.Str("viewOn")
	if err != nil {
		return err
	}
	pipeline, ok, err := a.Array("pipeline")
	if err != nil {
		return err
	}
	collation, _ := a.Lookup("collation")
	view, err := exec.ParseViewDef(c.DB, name, viewOn, pipeline, ok, collation)
	if err != nil {
		return err
	}
	wc, err := parseWriteConcern(c)
	if err != nil {
		return err
	}
	if view.Collation != nil {
		c.Env.Collations.Note(&c.Env.Engine)
	}
	return c.WriteTx(wc.durability(), func(tx *exec.Tx) error { return c.Env.CreateView(tx, view) })
}

// viewAggregate reports whether the command's collection is a view, and
// if so rewrites the request as an aggregate on the view with the stages
// the command implies (aggregate expands the view's pipeline in front).
func viewAggregate(c *Ctx, name string, extra []bson.Doc, batch bson.Value) (bool, error) {
	view, err := isView(c, name)
	if err != nil || !view {
		return false, err
	}
	c.Body = exec.ViewAggregate(name, extra, batch, c.Body)
	c.Name = "aggregate"
	return true, nil
}

// stage builds {name: value}.
func stage(name string, v bson.Value) bson.Doc { return exec.Stage(name, v) }

// findOnView runs find on a view as an aggregation.
func findOnView(c *Ctx, name string) (bool, error) {
	// Most finds are on collections: look before building the stages.
	if view, err := isView(c, name); err != nil || !view {
		return false, err
	}
	batch, _ := c.Body.Lookup("batchSize")
	return viewAggregate(c, name, exec.FindOnViewStages(c.Body), batch)
}

// countOnView answers count on a view from an aggregation's $count.
func countOnView(c *Ctx, name string) (bool, error) {
	isView, err := viewAggregate(c, name, exec.CountOnViewStages(c.Body), bson.Value{})
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
