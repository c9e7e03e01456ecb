package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/js"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// mapReduce parses the command and runs internal/js's engine (js.MapReduce)
// over an aggregation of the source collection or view, answering the
// results inline or writing them through another aggregation. jsMode and
// verbose are accepted and ignored, as 4.4+ ignores them.
func mapReduceCmd(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("map", "reduce", "out", "query", "sort", "limit", "finalize", "scope", "jsMode", "verbose",
		"bypassDocumentValidation", "collation", "readConcern", "writeConcern"); err != nil {
		return err
	}
	name, err := c.CollectionArg()
	if err != nil {
		return err
	}
	var mr js.MapReduce
	for _, f := range []struct {
		name     string
		src      *string
		required bool
	}{{"map", &mr.Map, true}, {"reduce", &mr.Reduce, true}, {"finalize", &mr.Finalize, false}} {
		v, ok := a.Lookup(f.name)
		switch {
		case !ok && f.required:
			return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'mapReduce.%s' is missing but a required field", f.name)
		case !ok:
		case v.Type != bson.TypeString && v.Type != bson.TypeJavaScript:
			return a.WrongTypes(f.name, v, "javascript, string")
		default:
			*f.src = v.StringValue()
		}
	}
	outV, outOK := a.Lookup("out")
	out, err := js.ParseMapReduceOut(a.Cmd, c.DB, outV, outOK)
	if err != nil {
		return err
	}
	for _, f := range []string{"jsMode", "verbose", "bypassDocumentValidation"} {
		if _, _, err := a.Boolean(f); err != nil {
			return err
		}
	}
	scope, _, err := a.Doc("scope")
	if err != nil {
		return err
	}
	input, err := mapReduceInput(a, name)
	if err != nil {
		return err
	}
	cancel, err := withMaxTime(c)
	if err != nil {
		return err
	}
	defer cancel()
	scripts := scripts(c)
	if !scripts.Enabled() {
		return mongoerr.New(mongoerr.MapReduceScriptingDisabled, "Cannot run server-side javascript without the javascript engine enabled")
	}
	if mr.Session, err = scripts.Session(); err != nil {
		return err
	}
	defer mr.Session.Close()
	if scope != nil {
		if err := mr.Session.SetGlobals(scope); err != nil {
			return err
		}
	}
	docs, err := subAggregate(c, c.DB, input)
	if err != nil {
		return err
	}
	results, err := mr.Run(docs)
	if err != nil {
		return err
	}
	if out.Inline {
		c.Reply.StartArray("results")
		for i, d := range results {
			c.Reply.AppendDocument(bson.Index(i), d)
		}
		c.Reply.End()
		return nil
	}
	if out.Mode == "reduce" && len(results) > 0 {
		existing, err := subAggregate(c, out.DB, js.MapReduceExisting(out, results))
		if err != nil {
			return err
		}
		if results, err = mr.ReduceExisting(results, existing); err != nil {
			return err
		}
	}
	if _, err := subAggregate(c, c.DB, js.MapReduceOutput(out, results)); err != nil {
		return err
	}
	if out.DBExplicit {
		c.Reply.StartDocument("result")
		c.Reply.AppendString("db", out.DB)
		c.Reply.AppendString("collection", out.Coll)
		c.Reply.End()
	} else {
		c.Reply.AppendString("result", out.Coll)
	}
	return nil
}

// mapReduceInput checks query, sort and limit and builds the aggregation
// that reads the input.
func mapReduceInput(a args, name string) (bson.Doc, error) {
	query, ok := a.Lookup("query")
	if ok && query.Type != bson.TypeDocument {
		return nil, a.WrongType("query", query, "object")
	}
	sort, ok := a.Lookup("sort")
	if ok && sort.Type != bson.TypeDocument {
		return nil, a.WrongType("sort", sort, "object")
	}
	limit, _, err := a.Integer("limit")
	if err != nil {
		return nil, err
	}
	collation, _ := a.Lookup("collation")
	return js.MapReduceInput(name, query, sort, limit, collation), nil
}

// subAggregate runs the aggregate command body on db as part of c.
func subAggregate(c *Ctx, db string, body bson.Doc) ([]bson.Doc, error) {
	sub := *c
	sub.Name, sub.DB, sub.Body = "aggregate", db, body
	return runAggregate(&sub)
}
