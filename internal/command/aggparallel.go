package command

import (
	"context"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/query"
)

// parallelRun starts the pipeline over a parallel scan when it suits one
// (see parallelPipeline).
func (s *aggSource) parallelRun(tx *exec.Tx, ctx context.Context) (agg.Iterator, bool, error) {
	if s.coll == "" {
		return nil, false, nil
	}
	return s.env.ParallelPipeline(ctx, tx, s.db, s.coll, s.p, s.p.LeadingFilter(), s.p.Filter, s.planning.Hint)
}

// RunPipeline implements agg.PipelineRunner for the sub-pipelines of
// $lookup and $unionWith: in the order of an index that provides its
// leading $sort, else in parallel, with the equality the leading $match
// makes of a correlated $expr planning the index scan.
func (k *aggCatalog) RunPipeline(db, coll string, p *agg.Pipeline) (agg.Iterator, bool, error) {
	if it, ok, err := k.sortedRun(db, coll, p, bson.Value{}); err != nil || ok {
		return it, ok, err
	}
	return k.env.ParallelPipeline(k.Ctx, k.Tx, db, coll, p, p.IndexFilter(), nil, bson.Value{})
}

// sortedRun runs p over an index walk in the order of its leading $sort
// when an index provides it (as find's planner chooses one, bounded by
// the leading $match where it can be), reporting false otherwise.
func (k *aggCatalog) sortedRun(db, name string, p *agg.Pipeline, hint bson.Value) (agg.Iterator, bool, error) {
	sortDoc, ok := p.LeadingSort()
	if !ok || exec.Hinted(hint) || k.Tx == nil {
		return nil, false, nil
	}
	coll, err := catalog.Get(k.Tx, db, name)
	if err != nil || coll == nil {
		return nil, false, err
	}
	if _, _, isView := coll.View(); isView {
		return nil, false, nil
	}
	opts := p.QueryOptions()
	sort, err := query.ParseSort(sortDoc, opts)
	if err != nil {
		return nil, false, nil // the $sort stage reports it
	}
	spec := &exec.FindSpec{FilterDoc: p.LeadingFilter(), Filter: p.Filter, SortDoc: sortDoc, Sort: sort, Opts: opts}
	var base *exec.Plan
	if len(spec.FilterDoc) > 5 {
		if base, _, err = k.env.PlanQuery(k.Ctx, k.Tx, coll, spec.FilterDoc, p.Filter, opts, bson.Value{}); err != nil {
			return nil, false, err
		}
	}
	pl := exec.ChoosePlanFind(coll, spec, base)
	if pl == nil || !pl.Sorted {
		return nil, false, nil
	}
	sc := k.ScanCollection(db, name, p.Filter)
	sc.Plan, sc.Planned = pl, true
	it, err := p.RunSorted(sc)
	return it, err == nil, err
}
