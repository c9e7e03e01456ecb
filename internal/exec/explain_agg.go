package exec

import (
	"context"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/catalog"
)

// AppendAggregateStages writes explain's "stages" of an aggregation on
// ns (source: the collection it reads, "" for none) in tx: the
// collection scan or index plan (with the leading $match as its filter),
// the $text or $geoNear cursor, and the stages after it.
func (e *Engine) AppendAggregateStages(ctx context.Context, tx *Tx, r *bson.Builder, db, ns, source string, p *agg.Pipeline, planning *AggPlanning) error {
	var chosen *Plan
	var coll *catalog.Collection
	if f := p.LeadingFilter(); (f != nil || Hinted(planning.Hint) || planning.Text != nil) && source != "" {
		var err error
		coll, err = catalog.Get(tx, db, source)
		if err == nil && (len(f) > 5 || Hinted(planning.Hint)) {
			chosen, _, err = e.PlanExplain(ctx, tx, coll, f, p.Filter, p.QueryOptions(), planning.Hint)
		}
		if err != nil {
			return err
		}
	}
	var b bson.Builder
	p.Explain(&b, "stages")
	stages, _ := b.Finish().Lookup("stages")
	r.StartArray("stages")
	i := 0
	leading := p.LeadingFilter() != nil
	if g := planning.GeoNear; g != nil {
		leading = false // the $match after $geoNear stays a stage
		appendCursorStage(r, i, "$geoNearCursor", ns, g.Query, func() { appendGeoNearStage(tx, r, db, g, source) })
		i++
	} else if !p.StartsWithSource() {
		filter := p.LeadingFilter()
		if filter == nil {
			filter = bson.EmptyDoc
		}
		if planning.Text != nil {
			filter = planning.Text.TextFilterDoc
		}
		appendCursorStage(r, i, "$cursor", ns, filter, func() {
			if planning.Text != nil {
				AppendTextStages(r, planning.Text, coll)
			} else if chosen != nil {
				appendIndexStages(r, chosen, filter)
			} else if cs := e.explainColumnScan(tx, db, source, p, planning.Hint); cs != nil {
				cs(r, filter)
			} else {
				r.AppendString("stage", "COLLSCAN")
				if len(filter) > 5 {
					r.AppendDocument("filter", filter)
				}
				r.AppendString("direction", "forward")
			}
		})
		i++
	}
	it := stages.Document().Iter()
	for j := 0; it.Next(); j++ {
		if j == 0 && leading {
			continue
		}
		r.AppendValue(bson.Index(i), it.Element().Value)
		i++
	}
	r.End()
	return nil
}

// appendGeoNearStage writes explain's plan for a $geoNear.
func appendGeoNearStage(tx *Tx, r *bson.Builder, db string, g *GeoNearSpec, source string) {
	coll, err := catalog.Get(tx, db, source)
	if err != nil || coll == nil {
		r.AppendString("stage", "EOF")
		return
	}
	AppendNearStages(r, &FindSpec{Near: g.Near, FilterDoc: g.Query}, coll)
}

// appendCursorStage writes explain's first stage (at index i of the stage
// list): {name: {queryPlanner: {namespace, parsedQuery, winningPlan,
// rejectedPlans: []}}}, the winning plan written by plan.
func appendCursorStage(r *bson.Builder, i int, name, ns string, parsed bson.Doc, plan func()) {
	r.StartDocument(bson.Index(i))
	r.StartDocument(name)
	r.StartDocument("queryPlanner")
	r.AppendString("namespace", ns)
	r.AppendDocument("parsedQuery", parsed)
	r.StartDocument("winningPlan")
	plan()
	r.End()
	r.StartArray("rejectedPlans")
	r.End()
	r.End()
	r.End()
	r.End()
}
