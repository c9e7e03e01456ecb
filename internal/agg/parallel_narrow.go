package agg

// NarrowSource is a BatchSource whose documents already hold only the
// fields ParallelFields names (the parallel workers then do not cut them
// down), and whose documents stay valid only until the slice that held
// them is passed back to NextBatch: the parallel runs copy what they keep
// ($group's values, a top-k $sort's documents).
type NarrowSource interface {
	BatchSource
	// NarrowFields returns the fields the documents are cut to.
	NarrowFields() []string
}

// ParallelFields returns the top-level fields (with _id) that a parallel
// run of the pipeline reads: those the stages up to its $group or $count
// read, or for a top-k $sort those up to the last inclusion $project
// before it (the documents the sort passes on hold only the projected
// fields). It returns nil when the run may read whole documents, passes
// them on whole (a top-k $sort with no such $project), or cannot run in
// parallel.
func (p *Pipeline) ParallelFields() []string {
	ti := p.parallelTerminal()
	if ti < 0 {
		return nil
	}
	if _, ok := p.stages[ti].(*sortStage); ok {
		for i := ti - 1; i >= 0; i-- {
			if ps, ok := p.stages[i].(*projectStage); ok && ps.p.stage == "$project" && ps.p.inclusion {
				return readFields(p.stages[:i+1], p.stageSpecs[:i+1])
			}
		}
		return nil
	}
	return readFields(p.stages[:ti+1], p.stageSpecs[:ti+1])
}

// narrowed checks a NarrowSource against the fields the run reads: the
// source's documents must hold every one of them.
func narrowed(src BatchSource, fields []string) (narrow, ok bool) {
	ns, isNarrow := src.(NarrowSource)
	if !isNarrow {
		return false, true
	}
	if fields == nil {
		return true, false
	}
	have := map[string]bool{}
	for _, f := range ns.NarrowFields() {
		have[f] = true
	}
	for _, f := range fields {
		if !have[f] {
			return true, false
		}
	}
	return true, true
}
