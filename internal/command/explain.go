package command

import (
	"os"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// explainState carries explain's verbosity into the explained command.
type explainState struct {
	verbosity string // queryPlanner, executionStats or allPlansExecution
}

// explain runs {explain: {<command>}, verbosity}: find, count and
// aggregate describe their plan and, above queryPlanner verbosity, run it
// and report executionStats; update, delete, findAndModify and distinct
// describe the plan that selects their documents.
func explain(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("verbosity"); err != nil {
		return err
	}
	inner, ok, err := a.doc("explain")
	if err != nil {
		return err
	}
	if !ok || inner.Len() == 0 {
		return mongoerr.New(mongoerr.FailedToParse, "explain command requires a nested object")
	}
	verbosity := "allPlansExecution"
	if v, ok, err := a.str("verbosity"); err != nil {
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
	c.explain = &explainState{verbosity: verbosity}
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

// planFor chooses the plan find would use for spec.
// rejected lists the candidates the trial (or the plan cache's choice)
// set aside.
func planFor(c *Ctx, spec *findSpec) (coll *catalog.Collection, p *plan, byID bool, rejected []*plan, err error) {
	tx, err := c.readTx()
	if err != nil {
		return nil, nil, false, nil, err
	}
	defer tx.Rollback()
	coll, err = catalog.Get(tx, spec.db, spec.coll)
	if err != nil {
		return nil, nil, false, nil, err
	}
	if spec.text != nil {
		_, err := planText(coll, spec)
		return coll, nil, false, nil, err
	}
	if spec.near != nil {
		if coll != nil {
			_, _, err = nearIndex(coll, spec.near)
		}
		return coll, nil, false, nil, err
	}
	if _, byID := spec.filter.IDEquality(); byID {
		return coll, nil, true, nil, nil
	}
	if spec.sort != nil && spec.sort.Natural() < 0 {
		return coll, nil, false, nil, nil
	}
	base, rejected, err := c.Env.planExplain(c, tx, coll, spec.filterDoc, spec.filter, spec.opts, spec.hint)
	if err != nil {
		return nil, nil, false, nil, err
	}
	p = coverPlan(coll, spec, choosePlanFind(coll, spec, base))
	if p != base && base != nil && (p == nil || p.index != base.index || p.or != nil) {
		rejected = append([]*plan{base}, rejected...) // a sort rule overrode the trial
	}
	for i, r := range rejected {
		rejected[i] = coverPlan(coll, spec, r)
	}
	return coll, p, false, rejected, nil
}

// appendRejected writes explain's rejectedPlans.
func appendRejected(r *bson.Builder, spec *findSpec, coll *catalog.Collection, rejected []*plan) {
	r.StartArray("rejectedPlans")
	for i, p := range rejected {
		r.StartDocument(bson.Index(i))
		appendPlanStages(r, spec, coll, p, false)
		r.End()
	}
	r.End()
}

// appendPlanStages writes the winning plan as MongoDB's stage tree.
func appendPlanStages(r *bson.Builder, spec *findSpec, coll *catalog.Collection, p *plan, byID bool) {
	type stage func(inner func())
	var wrappers []stage
	if spec.proj != nil {
		wrappers = append(wrappers, func(inner func()) {
			if p != nil && p.covered != nil {
				r.AppendString("stage", "PROJECTION_COVERED")
			} else {
				r.AppendString("stage", "PROJECTION_DEFAULT")
			}
			r.AppendDocument("transformBy", orEmptyDoc(spec.projDoc))
			r.StartDocument("inputStage")
			inner()
			r.End()
		})
	}
	if spec.sort != nil && spec.sort.Natural() == 0 && (p == nil || !p.sorted) {
		wrappers = append(wrappers, func(inner func()) {
			r.AppendString("stage", "SORT")
			r.AppendInt64("memLimit", sortMemoryBudget)
			if spec.limit > 0 {
				r.AppendInt64("limitAmount", spec.skip+spec.limit)
			}
			r.AppendString("type", "simple")
			r.StartDocument("inputStage")
			inner()
			r.End()
		})
	}
	leaf := func() {
		switch {
		case coll == nil:
			r.AppendString("stage", "EOF")
		case spec.text != nil:
			appendTextStages(r, spec, coll)
		case spec.near != nil:
			appendNearStages(r, spec, coll)
		case byID:
			r.AppendString("stage", "IDHACK")
		case p != nil:
			appendIndexStages(r, p, spec.filterDoc)
		default:
			r.AppendString("stage", "COLLSCAN")
			if spec.filterDoc.Len() > 0 {
				r.AppendDocument("filter", spec.filterDoc)
			}
			dir := "forward"
			if spec.sort != nil && spec.sort.Natural() < 0 {
				dir = "backward"
			}
			r.AppendString("direction", dir)
		}
	}
	var run func(i int)
	run = func(i int) {
		if i == len(wrappers) {
			leaf()
			return
		}
		wrappers[i](func() { run(i + 1) })
	}
	run(0)
}

// appendIndexStages writes an index plan's stages: FETCH (with the
// filter) over its IXSCAN, or over an OR of one IXSCAN per branch; a
// covered plan has no FETCH and its IXSCAN carries the filter.
func appendIndexStages(r *bson.Builder, p *plan, filter bson.Doc) {
	if p.covered == nil {
		r.AppendString("stage", "FETCH")
		r.AppendDocument("filter", filter)
		r.StartDocument("inputStage")
		defer r.End()
	}
	if p.or != nil {
		r.AppendString("stage", "OR")
		r.StartArray("inputStages")
		for i, b := range p.or {
			r.StartDocument(bson.Index(i))
			appendIXSCAN(r, b)
			r.End()
		}
		r.End()
		return
	}
	appendIXSCAN(r, p)
	if p.covered != nil && filter.Len() > 0 {
		r.AppendDocument("filter", filter)
	}
}

// appendIXSCAN writes one index scan.
func appendIXSCAN(r *bson.Builder, p *plan) {
	r.AppendString("stage", "IXSCAN")
	r.AppendDocument("keyPattern", p.spec.Key)
	r.AppendString("indexName", p.index)
	r.AppendBool("isMultiKey", p.dedupe)
	r.AppendBool("isUnique", p.spec.Unique)
	if p.reverse {
		r.AppendString("direction", "backward")
	} else {
		r.AppendString("direction", "forward")
	}
	r.AppendInt32("keyRanges", int32(len(p.ranges)))
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
func explainFind(c *Ctx, spec *findSpec) error {
	coll, p, byID, rejected, err := planFor(c, spec)
	if err != nil {
		return err
	}
	r := c.Reply
	r.AppendString("explainVersion", "1")
	r.StartDocument("queryPlanner")
	r.AppendString("namespace", spec.db+"."+spec.coll)
	appendParsedQuery(r, spec)
	r.StartDocument("winningPlan")
	appendPlanStages(r, spec, coll, p, byID)
	r.End()
	appendRejected(r, spec, coll, rejected)
	r.End()
	if c.explain.verbosity != "queryPlanner" {
		start := time.Now()
		scan := &scanSource{env: c.Env, spec: spec, skip: spec.skip, raw: true}
		var src Source = scan
		var text *textSource
		var near *nearSource
		switch {
		case spec.text != nil:
			text = newTextSource(c.Env, spec, true)
			src = text
		case spec.near != nil:
			near = newNearSource(c.Env, spec)
			src = near
		default:
			if p != nil {
				scan.plan, scan.planned = p, true // the plan explained, not the cached one
			}
			if (p == nil || !p.sorted) && spec.sort != nil && spec.sort.Natural() == 0 {
				if src, err = newSortedSource(c, scan, spec); err != nil {
					return err
				}
			}
		}
		var n int64
		_, err := src.Fill(c, func(bson.Doc) bool {
			n++
			return spec.limit <= 0 || n < spec.limit
		})
		src.Close()
		if err != nil {
			return err
		}
		if spec.limit > 0 && n > spec.limit {
			n = spec.limit
		}
		r.StartDocument("executionStats")
		r.AppendBool("executionSuccess", true)
		r.AppendInt64("nReturned", n)
		r.AppendInt64("executionTimeMillis", time.Since(start).Milliseconds())
		keys := scan.walk.keys
		docs := scan.docsExamined + scan.walk.docs
		switch {
		case text != nil:
			keys, docs = text.walk.keys, text.walk.docs
		case near != nil:
			keys, docs = near.walk.keys, near.walk.docs
		}
		if byID && docs > 0 {
			keys = 1
		}
		r.AppendInt64("totalKeysExamined", keys)
		r.AppendInt64("totalDocsExamined", docs)
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
		stmts, _, err := c.docs(field)
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
	coll, err := c.collectionArg()
	if err != nil {
		return err
	}
	spec := &findSpec{db: c.DB, coll: coll}
	if err := parseFilterText(spec, orEmptyDoc(filter), &query.Options{}); err != nil {
		return err
	}
	cl, p, byID, rejected, err := planFor(c, spec)
	if err != nil {
		return err
	}
	r := c.Reply
	r.AppendString("explainVersion", "1")
	r.StartDocument("queryPlanner")
	r.AppendString("namespace", c.DB+"."+coll)
	appendParsedQuery(r, spec)
	r.StartDocument("winningPlan")
	stageName := map[string]string{"update": "UPDATE", "delete": "DELETE", "findAndModify": "UPDATE", "findandmodify": "UPDATE", "distinct": "PROJECTION_COVERED"}[name]
	r.AppendString("stage", stageName)
	r.StartDocument("inputStage")
	appendPlanStages(r, spec, cl, p, byID)
	r.End()
	r.End()
	appendRejected(r, spec, cl, rejected)
	r.End()
	r.AppendDocument("command", c.Body)
	appendServerInfo(r)
	return nil
}

// appendParsedQuery writes explain's parsedQuery: the filter as given,
// $text clause included.
func appendParsedQuery(r *bson.Builder, spec *findSpec) {
	if spec.text != nil {
		r.AppendDocument("parsedQuery", spec.textFilterDoc)
	} else {
		r.AppendDocument("parsedQuery", spec.filterDoc)
	}
}
