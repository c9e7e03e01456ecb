package exec

import (
	"context"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/index"
)

// Explain's description of a query's execution: the plan the planner
// would choose (with the candidates it set aside), written as MongoDB's
// stage tree, and, above queryPlanner verbosity, that plan run with
// counters. The explain command (internal/command) frames it; the plan
// and its stages are the execution layer's.

// Explained is the plan explain describes for a query.
type Explained struct {
	Spec *FindSpec
	Coll *catalog.Collection // nil: no such collection
	Plan *Plan               // nil: a collection scan (or $text, $near)
	ByID bool                // the _id point read (IDHACK)
	// Rejected lists the candidates the trial (or the plan cache's
	// choice) set aside.
	Rejected []*Plan
}

// Explain chooses, in tx, the plan find would use for spec.
func (e *Engine) Explain(ctx context.Context, tx *Tx, spec *FindSpec) (*Explained, error) {
	coll, err := catalog.Get(tx, spec.DB, spec.Coll)
	if err != nil {
		return nil, err
	}
	x := &Explained{Spec: spec, Coll: coll}
	if spec.Text != nil {
		_, err := PlanText(coll, spec)
		return x, err
	}
	if spec.Near != nil {
		if coll != nil {
			_, _, err = NearIndex(coll, spec.Near)
		}
		return x, err
	}
	if spec.HasMinMax() {
		p, _, err := MinMaxPlan(coll, spec)
		if err != nil {
			return nil, err
		}
		x.Plan = p // nil: the _id range of the data tree
		return x, nil
	}
	if _, byID := spec.Filter.IDEquality(); byID && (ScansByID(coll) || coll.HasIDIndex()) {
		x.ByID = true
		return x, nil
	}
	if NaturalBackward(spec) {
		return x, nil
	}
	base, rejected, err := e.PlanExplain(ctx, tx, coll, spec.FilterDoc, spec.Filter, spec.Opts, spec.Hint)
	if err != nil {
		return nil, err
	}
	p := CoverPlan(coll, spec, ChoosePlanFind(coll, spec, base))
	if p != base && base != nil && (p == nil || p.Index != base.Index || p.Or != nil) {
		rejected = append([]*Plan{base}, rejected...) // a sort rule overrode the trial
	}
	for i, r := range rejected {
		rejected[i] = CoverPlan(coll, spec, r)
	}
	x.Plan, x.Rejected = p, rejected
	return x, nil
}

// AppendQueryPlanner writes explain's queryPlanner: namespace,
// parsedQuery (the filter as given, $text clause included), winningPlan
// (under a stage named wrap when not "": a write's UPDATE or DELETE) and
// rejectedPlans.
func (x *Explained) AppendQueryPlanner(r *bson.Builder, wrap string) {
	spec := x.Spec
	r.StartDocument("queryPlanner")
	r.AppendString("namespace", spec.DB+"."+spec.Coll)
	if spec.Text != nil {
		r.AppendDocument("parsedQuery", spec.TextFilterDoc)
	} else {
		r.AppendDocument("parsedQuery", spec.FilterDoc)
	}
	r.StartDocument("winningPlan")
	if wrap != "" {
		r.AppendString("stage", wrap)
		r.StartDocument("inputStage")
	}
	appendPlanStages(r, spec, x.Coll, x.Plan, x.ByID)
	if wrap != "" {
		r.End()
	}
	r.End()
	appendRejected(r, spec, x.Coll, x.Rejected)
	r.End()
}

// ExplainStats are the figures of an explained plan's run.
type ExplainStats struct {
	Returned, Keys, Docs int64
}

// Run runs the explained plan in ctx's snapshot and counts what it
// returned and examined. sorted wraps a scan in find's blocking sort when
// the plan does not give the order asked for.
func (x *Explained) Run(ctx context.Context, e *Engine, sorted func(*ScanSource) (Source, error)) (ExplainStats, error) {
	spec, p := x.Spec, x.Plan
	scan := &ScanSource{Env: e, Spec: spec, Skip: spec.Skip, Raw: true}
	var src Source = scan
	var text *TextSource
	var near *NearSource
	switch {
	case spec.Text != nil:
		text = NewTextSource(e, spec, true)
		src = text
	case spec.Near != nil:
		near = NewNearSource(e, spec)
		src = near
	default:
		if p != nil {
			scan.Plan, scan.Planned = p, true // the plan explained, not the cached one
		}
		if (p == nil || !p.Sorted) && spec.Sort != nil && spec.Sort.Natural() == 0 {
			var err error
			if src, err = sorted(scan); err != nil {
				return ExplainStats{}, err
			}
		}
	}
	var n int64
	_, err := src.Fill(ctx, func(bson.Doc) bool {
		n++
		return spec.Limit <= 0 || n < spec.Limit
	})
	src.Close()
	if err != nil {
		return ExplainStats{}, err
	}
	if spec.Limit > 0 && n > spec.Limit {
		n = spec.Limit
	}
	st := ExplainStats{Returned: n, Keys: scan.Walk.Keys, Docs: scan.DocsExamined + scan.Walk.Docs}
	switch {
	case text != nil:
		st.Keys, st.Docs = text.Walk.Keys, text.Walk.Docs
	case near != nil:
		st.Keys, st.Docs = near.Walk.Keys, near.Walk.Docs
	}
	if x.ByID && st.Docs > 0 {
		st.Keys = 1
	}
	return st, nil
}

// appendRejected writes explain's rejectedPlans.
func appendRejected(r *bson.Builder, spec *FindSpec, coll *catalog.Collection, rejected []*Plan) {
	r.StartArray("rejectedPlans")
	for i, p := range rejected {
		r.StartDocument(bson.Index(i))
		appendPlanStages(r, spec, coll, p, false)
		r.End()
	}
	r.End()
}

// appendPlanStages writes the winning plan as MongoDB's stage tree.
func appendPlanStages(r *bson.Builder, spec *FindSpec, coll *catalog.Collection, p *Plan, byID bool) {
	type stage func(inner func())
	var wrappers []stage
	if spec.ReturnKey {
		// The results are the index keys (the projection is not applied).
		wrappers = append(wrappers, func(inner func()) {
			r.AppendString("stage", "RETURN_KEY")
			r.StartDocument("inputStage")
			inner()
			r.End()
		})
	}
	if spec.Proj != nil && !spec.ReturnKey {
		wrappers = append(wrappers, func(inner func()) {
			if p != nil && p.Covered != nil {
				r.AppendString("stage", "PROJECTION_COVERED")
			} else {
				r.AppendString("stage", "PROJECTION_DEFAULT")
			}
			r.AppendDocument("transformBy", orEmpty(spec.ProjDoc))
			r.StartDocument("inputStage")
			inner()
			r.End()
		})
	}
	if spec.Sort != nil && spec.Sort.Natural() == 0 && (p == nil || !p.Sorted) {
		wrappers = append(wrappers, func(inner func()) {
			r.AppendString("stage", "SORT")
			r.AppendInt64("memLimit", SortMemoryBudget())
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
			AppendTextStages(r, spec, coll)
		case spec.Near != nil:
			AppendNearStages(r, spec, coll)
		case coll.Clustered() && p == nil && !NaturalBackward(spec) && appendClusteredScan(r, spec):
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
			if NaturalBackward(spec) {
				dir = "backward"
			}
			r.AppendString("direction", dir)
			if coll.IsOplog() && dir == "forward" {
				// A ts range on the oplog seeks its record ids.
				if rr, ok := OplogRange(spec.FilterDoc); ok {
					lo, hi := RecordRangeBounds(&rr)
					r.AppendValue("minRecord", lo)
					r.AppendValue("maxRecord", hi)
				}
			}
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
func appendIndexStages(r *bson.Builder, p *Plan, filter bson.Doc) {
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
func appendIXSCAN(r *bson.Builder, p *Plan) {
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

// orEmpty is d, or the empty document for nil.
func orEmpty(d bson.Doc) bson.Doc {
	if d == nil {
		return bson.EmptyDoc
	}
	return d
}

// NaturalBackward reports whether the find reads in reverse insertion
// order: sort or (without a sort) hint {$natural: -1}.
func NaturalBackward(spec *FindSpec) bool {
	return (spec.Sort != nil && spec.Sort.Natural() < 0) || (spec.Sort == nil && NaturalHint(spec.Hint) < 0)
}

// NaturalHint returns the direction of a {$natural: ±1} hint, 0 when hint
// is not one.
func NaturalHint(hint bson.Value) int {
	if hint.Type != bson.TypeDocument {
		return 0
	}
	v, ok := hint.Document().Lookup("$natural")
	if !ok {
		return 0
	}
	if f, _ := v.AsFloat64(); f < 0 {
		return -1
	}
	return 1
}

// appendClusteredScan writes mongod's CLUSTERED_IXSCAN for a clustered
// collection's scan bounded by its filter's _id range (an _id equality
// included: a clustered collection has no IDHACK), and reports whether it
// did (false: no single _id range, a COLLSCAN).
func appendClusteredScan(r *bson.Builder, spec *FindSpec) bool {
	if spec.FilterDoc.Len() == 0 || (spec.Opts != nil && spec.Opts.Collation != nil) {
		return false
	}
	ivs, ok := index.FieldBounds(spec.FilterDoc, "_id", false)
	if !ok || len(ivs) != 1 {
		return false
	}
	r.AppendString("stage", "CLUSTERED_IXSCAN")
	r.AppendDocument("filter", spec.FilterDoc)
	r.AppendString("direction", "forward")
	r.AppendValue("minRecord", ivs[0].Lo)
	r.AppendValue("maxRecord", ivs[0].Hi)
	return true
}
