package exec

import (
	"context"
	"strconv"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/kv"
)

// Plan choice as MongoDB's multi-planner makes it: when a filter gives
// several candidate plans (one per index its top-level fields restrict, and
// the union of a $or's branches), each runs a short trial and the most
// productive wins; the winner is cached per query shape (plancache.go), so
// later queries of the same shape skip the trial.

// Planner chooses plans: it runs the candidates' trials and keeps the
// winners in the plan cache.
type Planner struct {
	// plans is the plan cache (plancache.go).
	Plans planCache
}

const (
	// trialResults ends a trial once a plan has returned this many
	// documents (MongoDB's internalQueryPlanEvaluationMaxResults).
	trialResults = 101
	// trialWorks bounds a trial's works (keys examined plus documents
	// fetched): at least this many (internalQueryPlanEvaluationWorks) ...
	trialWorks = 10000
	// ... or this fraction of the collection's documents
	// (internalQueryPlanEvaluationCollFraction).
	trialCollFraction = 0.3
)

// trial is one candidate's run: the works after which it returned each
// document, and the works at which it reached its end (0: not reached).
type trial struct {
	p          *Plan
	advancedAt []int64
	works      int64
	eofAt      int64
}

// productivity is the trial's score at a budget of works, as MongoDB
// ranks plans: documents returned per work, plus one when the plan
// reached its end within the budget.
func (t *trial) productivity(budget int64) float64 {
	w := min(t.works, budget)
	if w == 0 {
		w = 1
	}
	n := 0
	for _, at := range t.advancedAt {
		if at <= budget {
			n++
		}
	}
	score := float64(n) / float64(w)
	if t.eofAt > 0 && t.eofAt <= budget {
		score++
	}
	return score
}

// PlanQuery is the planner: a hinted plan; else, among the candidate plans
// for filter, the cached winner for the query's shape or the winner of a
// trial (which is then cached); nil for a collection scan. rejected lists
// the losers (when a trial ran).
func (e *Planner) PlanQuery(ctx context.Context, tx *kv.Tx, coll *catalog.Collection, filterDoc bson.Doc, filter *query.Filter, opts *query.Options, hint bson.Value) (winner *Plan, rejected []*Plan, err error) {
	return e.plan(ctx, tx, coll, filterDoc, filter, opts, hint, false)
}

// PlanExplain is planQuery for explain: the trial always runs (as
// MongoDB's explain plans afresh) and its winner is not cached.
func (e *Planner) PlanExplain(ctx context.Context, tx *kv.Tx, coll *catalog.Collection, filterDoc bson.Doc, filter *query.Filter, opts *query.Options, hint bson.Value) (winner *Plan, rejected []*Plan, err error) {
	return e.plan(ctx, tx, coll, filterDoc, filter, opts, hint, true)
}

func (e *Planner) plan(ctx context.Context, tx *kv.Tx, coll *catalog.Collection, filterDoc bson.Doc, filter *query.Filter, opts *query.Options, hint bson.Value, explain bool) (winner *Plan, rejected []*Plan, err error) {
	if coll == nil {
		return nil, nil, nil
	}
	if Hinted(hint) || len(filterDoc) == 0 {
		return ChoosePlanHint(coll, filterDoc, opts, hint), nil, nil
	}
	cands := IndexCandidates(coll, filterDoc, opts)
	if len(cands) == 0 {
		if p := OrPlan(coll, filterDoc, opts); p != nil {
			cands = append(cands, p)
		}
	}
	switch {
	case len(cands) == 0:
		return nil, nil, nil
	case len(cands) == 1:
		return cands[0], nil, nil
	}
	for _, c := range cands {
		if c.Score == 4 {
			return c, nil, nil // a unique point: at most one document
		}
	}
	data, err := DataTree(tx, coll)
	if err != nil {
		return nil, nil, err
	}
	key := PlanCacheKey(filterDoc, opts)
	if w := e.Plans.lookup(coll, key, data.Len()); w != "" && !explain {
		for i, c := range cands {
			if planID(c) == w {
				rest := append(append([]*Plan(nil), cands[:i]...), cands[i+1:]...)
				return c, rest, nil
			}
		}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	trials, best, err := runTrials(ctx, tx, coll, data, filter, cands)
	if err != nil {
		return nil, nil, err
	}
	winner = trials[best].p
	for i, t := range trials {
		if i != best {
			rejected = append(rejected, t.p)
		}
	}
	if explain {
		return winner, rejected, nil
	}
	e.Plans.store(coll, key, data.Len(), planCacheEntry{plan: planID(winner), works: trials[best].works, query: filterDoc, summary: PlanSummary(winner, false)})
	return winner, rejected, nil
}

// runTrials runs each candidate until it returns trialResults documents,
// reaches its end, or exceeds the works the quickest finisher so far
// needed (a sequential equivalent of MongoDB's round-robin trial), then
// ranks them by productivity at that budget; ties keep the rule order
// (higher rule score, then index order).
func runTrials(ctx context.Context, tx *kv.Tx, coll *catalog.Collection, data *kv.Tree, filter *query.Filter, cands []*Plan) ([]trial, int, error) {
	budget := max(int64(trialWorks), int64(trialCollFraction*float64(data.Len())))
	trials := make([]trial, len(cands))
	for i, p := range cands {
		t := &trials[i]
		t.p = p
		var st WalkState
		done, err := WalkIndex(ctx, tx, coll, data, p, &st, func(_ []byte, d bson.Doc) (bool, error) {
			if st.Keys+st.Docs > budget || len(t.advancedAt) >= trialResults {
				return false, nil
			}
			if filter == nil || filter.Match(d) {
				t.advancedAt = append(t.advancedAt, st.Keys+st.Docs)
			}
			return true, nil
		})
		if err != nil {
			return nil, 0, err
		}
		t.works = st.Keys + st.Docs
		if done {
			t.eofAt = max(t.works, 1)
		}
		if done || len(t.advancedAt) >= trialResults {
			budget = min(budget, max(t.works, 1))
		}
	}
	best := 0
	for i := range trials {
		a, b := trials[i].productivity(budget), trials[best].productivity(budget)
		if a > b || (a == b && trials[i].p.Score > trials[best].p.Score) {
			best = i
		}
	}
	return trials, best, nil
}

// planID names a plan's choice of indexes (what the plan cache keeps).
func planID(p *Plan) string {
	if p == nil {
		return "COLLSCAN"
	}
	if p.Or != nil {
		parts := make([]string, len(p.Or))
		for i, b := range p.Or {
			parts[i] = planID(b)
		}
		return "OR(" + strings.Join(parts, ",") + ")"
	}
	return p.Index
}

// Hinted reports whether a hint names an index or $natural.
func Hinted(hint bson.Value) bool {
	return hint.Type == bson.TypeString || (hint.Type == bson.TypeDocument && hint.Document().Len() > 0)
}

// PlanSummary names a plan as mongod's planSummary does: COLLSCAN, IDHACK,
// or IXSCAN with the index's key pattern.
func PlanSummary(p *Plan, byID bool) string {
	switch {
	case byID:
		return "IDHACK"
	case p == nil || (p.Spec == nil && p.Or == nil):
		return "COLLSCAN"
	case p.Or != nil:
		parts := make([]string, len(p.Or))
		for i, b := range p.Or {
			parts[i] = PlanSummary(b, false)
		}
		return strings.Join(parts, ", ")
	}
	return "IXSCAN " + KeyPatternText(p.Spec.Key)
}

// KeyPatternText writes a key pattern as mongod does in plan summaries:
// { a: 1, b: -1 }.
func KeyPatternText(key bson.Doc) string {
	var b strings.Builder
	b.WriteString("{ ")
	it := key.Iter()
	first := true
	for it.Next() {
		if !first {
			b.WriteString(", ")
		}
		first = false
		e := it.Element()
		b.WriteString(e.Key)
		b.WriteString(": ")
		switch e.Value.Type {
		case bson.TypeString:
			b.WriteString(strconv.Quote(e.Value.StringValue()))
		default:
			if f, ok := e.Value.AsFloat64(); ok {
				b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
			}
		}
	}
	b.WriteString(" }")
	return b.String()
}
