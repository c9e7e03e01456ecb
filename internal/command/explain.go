package command

import (
	"os"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
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
func planFor(c *Ctx, spec *exec.FindSpec) (coll *catalog.Collection, p *exec.Plan, byID bool, rejected []*exec.Plan, err error) {
	tx, err := c.readTx()
	if err != nil {
		return nil, nil, false, nil, err
	}
	defer tx.Rollback()
	coll, err = catalog.Get(tx, spec.DB, spec.Coll)
	if err != nil {
		return nil, nil, false, nil, err
	}
	if spec.Text != nil {
		_, err := exec.PlanText(coll, spec)
		return coll, nil, false, nil, err
	}
	if spec.Near != nil {
		if coll != nil {
			_, _, err = exec.NearIndex(coll, spec.Near)
		}
		return coll, nil, false, nil, err
	}
	if _, byID := spec.Filter.IDEquality(); byID {
		return coll, nil, true, nil, nil
	}
	if spec.Sort != nil && spec.Sort.Natural() < 0 {
		return coll, nil, false, nil, nil
	}
	base, rejected, err := c.Env.PlanExplain(c, tx, coll, spec.FilterDoc, spec.Filter, spec.Opts, spec.Hint)
	if err != nil {
		return nil, nil, false, nil, err
	}
	p = exec.CoverPlan(coll, spec, exec.ChoosePlanFind(coll, spec, base))
	if p != base && base != nil && (p == nil || p.Index != base.Index || p.Or != nil) {
		rejected = append([]*exec.Plan{base}, rejected...) // a sort rule overrode the trial
	}
	for i, r := range rejected {
		rejected[i] = exec.CoverPlan(coll, spec, r)
	}
	return coll, p, false, rejected, nil
}

// appendRejected writes explain's rejectedPlans.
func appendRejected(r *bson.Builder, spec *exec.FindSpec, coll *catalog.Collection, rejected []*exec.Plan) {
	r.StartArray("rejectedPlans")
	for i, p := range rejected {
		r.StartDocument(bson.Index(i))
		appendPlanStages(r, spec, coll, p, false)
		r.End()
	}
	r.End()
}

// appendPlanStages writes the winning plan as MongoDB's stage tree.
func appendPlanStages(r *bson.Builder, spec *exec.FindSpec, coll *catalog.Collection, p *exec.Plan, byID bool) {
	type stage func(inner func())
	var wrappers []stage
	if spec.Proj != nil {
		wrappers = append(wrappers, func(inner func()) {
			if p != nil && p.Covered != nil {
				r.AppendString("stage", "PROJECTION_COVERED")
			} else {
				r.AppendString("stage", "PROJECTION_DEFAULT")
			}
			r.AppendDocument("transformBy", orEmptyDoc(spec.ProjDoc))
			r.StartDocument("inputStage")
			inner()
			r.End()
		})
	}
	if spec.Sort != nil && spec.Sort.Natural() == 0 && (p == nil || !p.Sorted) {
		wrappers = append(wrappers, func(inner func()) {
			r.AppendString("stage", "SORT")
			r.AppendInt64("memLimit", exec.SortMemoryBudget)
			if spec.Limit > 0 {
				r.AppendInt64("limitAmount", spec.Skip+spec.Limit)
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
		case spec.Text != nil:
			exec.AppendTextStages(r, spec, coll)
		case spec.Near != nil:
			exec.AppendNearStages(r, spec, coll)
		case byID:
			r.AppendString("stage", "IDHACK")
		case p != nil:
			appendIndexStages(r, p, spec.FilterDoc)
		default:
			r.AppendString("stage", "COLLSCAN")
			if spec.FilterDoc.Len() > 0 {
				r.AppendDocument("filter", spec.FilterDoc)
			}
			dir := "forward"
			if spec.Sort != nil && spec.Sort.Natural() < 0 {
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
func appendIndexStages(r *bson.Builder, p *exec.Plan, filter bson.Doc) {
	if p.Covered == nil {
		r.AppendString("stage", "FETCH")
		r.AppendDocument("filter", filter)
		r.StartDocument("inputStage")
		defer r.End()
	}
	if p.Or != nil {
		r.AppendString("stage", "OR")
		r.StartArray("inputStages")
		for i, b := range p.Or {
			r.StartDocument(bson.Index(i))
			appendIXSCAN(r, b)
			r.End()
		}
		r.End()
		return
	}
	appendIXSCAN(r, p)
	if p.Covered != nil && filter.Len() > 0 {
		r.AppendDocument("filter", filter)
	}
}

// appendIXSCAN writes one index scan.
func appendIXSCAN(r *bson.Builder, p *exec.Plan) {
	r.AppendString("stage", "IXSCAN")
	r.AppendDocument("keyPattern", p.Spec.Key)
	r.AppendString("indexName", p.Index)
	r.AppendBool("isMultiKey", p.Dedupe)
	r.AppendBool("isUnique", p.Spec.Unique)
	if p.Reverse {
		r.AppendString("direction", "backward")
	} else {
		r.AppendString("direction", "forward")
	}
	r.AppendInt32("keyRanges", int32(len(p.Ranges)))
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
	coll, p, byID, rejected, err := planFor(c, spec)
	if err != nil {
		return err
	}
	r := c.Reply
	r.AppendString("explainVersion", "1")
	r.StartDocument("queryPlanner")
	r.AppendString("namespace", spec.DB+"."+spec.Coll)
	appendParsedQuery(r, spec)
	r.StartDocument("winningPlan")
	appendPlanStages(r, spec, coll, p, byID)
	r.End()
	appendRejected(r, spec, coll, rejected)
	r.End()
	if c.explain.verbosity != "queryPlanner" {
		start := time.Now()
		scan := &exec.ScanSource{Env: &c.Env.Engine, Spec: spec, Skip: spec.Skip, Raw: true}
		var src exec.Source = scan
		var text *exec.TextSource
		var near *exec.NearSource
		switch {
		case spec.Text != nil:
			text = exec.NewTextSource(&c.Env.Engine, spec, true)
			src = text
		case spec.Near != nil:
			near = exec.NewNearSource(&c.Env.Engine, spec)
			src = near
		default:
			if p != nil {
				scan.Plan, scan.Planned = p, true // the plan explained, not the cached one
			}
			if (p == nil || !p.Sorted) && spec.Sort != nil && spec.Sort.Natural() == 0 {
				if src, err = newSortedSource(c, scan, spec); err != nil {
					return err
				}
			}
		}
		var n int64
		_, err := src.Fill(c, func(bson.Doc) bool {
			n++
			return spec.Limit <= 0 || n < spec.Limit
		})
		src.Close()
		if err != nil {
			return err
		}
		if spec.Limit > 0 && n > spec.Limit {
			n = spec.Limit
		}
		r.StartDocument("executionStats")
		r.AppendBool("executionSuccess", true)
		r.AppendInt64("nReturned", n)
		r.AppendInt64("executionTimeMillis", time.Since(start).Milliseconds())
		keys := scan.Walk.Keys
		docs := scan.DocsExamined + scan.Walk.Docs
		switch {
		case text != nil:
			keys, docs = text.Walk.Keys, text.Walk.Docs
		case near != nil:
			keys, docs = near.Walk.Keys, near.Walk.Docs
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
	spec := &exec.FindSpec{DB: c.DB, Coll: coll}
	if err := exec.ParseFilterText(spec, orEmptyDoc(filter), &query.Options{}); err != nil {
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
func appendParsedQuery(r *bson.Builder, spec *exec.FindSpec) {
	if spec.Text != nil {
		r.AppendDocument("parsedQuery", spec.TextFilterDoc)
	} else {
		r.AppendDocument("parsedQuery", spec.FilterDoc)
	}
}

// appendGeoNearStage writes explain's plan for a $geoNear.
func appendGeoNearStage(c *Ctx, g *exec.GeoNearSpec, source string) {
	r := c.Reply
	tx, err := c.readTx()
	if err != nil {
		r.AppendString("stage", "EOF")
		return
	}
	defer tx.Rollback()
	coll, err := catalog.Get(tx, c.DB, source)
	if err != nil || coll == nil {
		r.AppendString("stage", "EOF")
		return
	}
	exec.AppendNearStages(r, &exec.FindSpec{Near: g.Near, FilterDoc: g.Query}, coll)
}
