package command

import (
	"os"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
)

// explainAggregate answers explain: true with the plan: the collection
// scan (with the leading $match as its filter) and the stages after it.
func explainAggregate(c *Ctx, ns, source string, p *agg.Pipeline, planning *exec.AggPlanning) error {
	var chosen *exec.Plan
	var coll *catalog.Collection
	if f := p.LeadingFilter(); (f != nil || exec.Hinted(planning.Hint) || planning.Text != nil) && source != "" {
		tx, err := c.readTx()
		if err != nil {
			return err
		}
		coll, err = catalog.Get(tx, c.DB, source)
		if err == nil && (len(f) > 5 || exec.Hinted(planning.Hint)) {
			chosen, _, err = c.Env.PlanExplain(c, tx, coll, f, p.Filter, p.QueryOptions(), planning.Hint)
		}
		tx.Rollback()
		if err != nil {
			return err
		}
	}
	r := c.Reply
	r.AppendString("explainVersion", "1")
	var b bson.Builder
	p.Explain(&b, "stages")
	stages, _ := b.Finish().Lookup("stages")
	r.StartArray("stages")
	i := 0
	leading := p.LeadingFilter() != nil
	if g := planning.GeoNear; g != nil {
		leading = false // the $match after $geoNear stays a stage
		appendCursorStage(r, i, "$geoNearCursor", ns, g.Query, func() { appendGeoNearStage(c, g, source) })
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
				exec.AppendTextStages(r, planning.Text, coll)
			} else if chosen != nil {
				appendIndexStages(r, chosen, filter)
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
	r.AppendDocument("command", c.Body)
	host, _ := os.Hostname()
	r.StartDocument("serverInfo")
	r.AppendString("host", host)
	r.AppendString("version", CompatibleVersion)
	r.End()
	return nil
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
