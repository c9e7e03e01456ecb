package command

import (
	"os"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/dispatch"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// explain runs {explain: {<command>}, verbosity}: find, count and
// aggregate describe their plan and, above queryPlanner verbosity, run it
// and report executionStats; update, delete, findAndModify and distinct
// describe the plan that selects their documents.
func explain(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("verbosity"); err != nil {
		return err
	}
	inner, ok, err := a.Doc("explain")
	if err != nil {
		return err
	}
	if !ok || inner.Len() == 0 {
		return mongoerr.New(mongoerr.FailedToParse, "explain command requires a nested object")
	}
	verbosity := "allPlansExecution"
	if v, ok, err := a.Str("verbosity"); err != nil {
		return err
	} else if ok {
		switch v {
		case "queryPlanner", "executionStats", "allPlansExecution":
			verbosity = v
		default:
			return mongoerr.New(mongoerr.FailedToParse, "verbosity string must be one of {'queryPlanner', 'executionStats', 'allPlansExecution'}")
		}
	}
	it := inner.Iter()
	it.Next()
	name := it.Element().Key
	var b bson.Builder
	it = inner.Iter()
	for it.Next() {
		if it.Element().Key != "$db" {
			b.AppendElement(it.Element())
		}
	}
	if name == "aggregate" {
		b.AppendBool("explain", true)
	}
	b.AppendString("$db", c.DB)
	c.Body = b.Finish()
	c.Name = name
	c.Explain = &dispatch.Explain{Verbosity: verbosity}
	switch name {
	case "find", "count":
		return byName[name].Run(c)
	case "aggregate":
		return aggregate(c)
	case "update", "delete", "findAndModify", "findandmodify", "distinct":
		return explainWrite(c, name)
	}
	return mongoerr.New(mongoerr.CommandNotFound, "Explain failed due to unknown command: %s", name)
}

// planFor chooses, in the command's snapshot, the plan find would use for
// spec (exec.Engine.Explain).
func planFor(c *Ctx, spec *exec.FindSpec) (*exec.Explained, error) {
	tx, err := c.ReadSnapshot()
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	return c.Env.Explain(c, tx, spec)
}

// appendServerInfo writes explain's serverInfo.
func appendServerInfo(r *bson.Builder) {
	host, _ := os.Hostname()
	r.StartDocument("serverInfo")
	r.AppendString("host", host)
	r.AppendString("version", CompatibleVersion)
	r.AppendString("cairnVersion", Version)
	r.End()
}

// explainFind answers explain for find and count.
func explainFind(c *Ctx, spec *exec.FindSpec) error {
	x, err := planFor(c, spec)
	if err != nil {
		return err
	}
	r := c.Reply
	r.AppendString("explainVersion", "1")
	x.AppendQueryPlanner(r, "")
	if c.Explain.Verbosity != "queryPlanner" {
		start := time.Now()
		st, err := x.Run(c, &c.Env.Engine, func(scan *exec.ScanSource) (exec.Source, error) {
			return c.Env.SortedFind(c, scan, spec, allowDiskUse(c))
		})
		if err != nil {
			return err
		}
		r.StartDocument("executionStats")
		r.AppendBool("executionSuccess", true)
		r.AppendInt64("nReturned", st.Returned)
		r.AppendInt64("executionTimeMillis", time.Since(start).Milliseconds())
		r.AppendInt64("totalKeysExamined", st.Keys)
		r.AppendInt64("totalDocsExamined", st.Docs)
		r.End()
	}
	r.AppendDocument("command", c.Body)
	appendServerInfo(r)
	return nil
}

// explainWrite describes how update, delete, findAndModify and distinct
// select their documents (they are not executed).
func explainWrite(c *Ctx, name string) error {
	var filter bson.Doc
	switch name {
	case "update", "delete":
		field := "updates"
		if name == "delete" {
			field = "deletes"
		}
		stmts, _, err := c.Docs(field)
		if err != nil {
			return err
		}
		if len(stmts) != 1 {
			return mongoerr.New(mongoerr.InvalidLength, "explained write batches must be of size 1")
		}
		if q, ok := stmts[0].Lookup("q"); ok && q.Type == bson.TypeDocument {
			filter = q.Document()
		}
	default:
		if q, ok := c.Body.Lookup("query"); ok && q.Type == bson.TypeDocument {
			filter = q.Document()
		}
	}
	coll, err := c.CollectionArg()
	if err != nil {
		return err
	}
	spec := &exec.FindSpec{DB: c.DB, Coll: coll}
	if err := exec.ParseFilterText(spec, orEmptyDoc(filter), &query.Options{}); err != nil {
		return err
	}
	x, err := planFor(c, spec)
	if err != nil {
		return err
	}
	r := c.Reply
	r.AppendString("explainVersion", "1")
	stageName := map[string]string{"update": "UPDATE", "delete": "DELETE", "findAndModify": "UPDATE", "findandmodify": "UPDATE", "distinct": "PROJECTION_COVERED"}[name]
	x.AppendQueryPlanner(r, stageName)
	r.AppendDocument("command", c.Body)
	appendServerInfo(r)
	return nil
}
