package agg

// NarrowSource is a BatchSource whose documents already hold only the
// fields ParallelFields names (the parallel workers then do not cut them
// down), and whose documents stay valid only until the slice that held
// them is passed back to NextBatch: RunParallel uses such a source only
// for runs whose workers copy what they keep ($group and $count).
type NarrowSource interface {
	BatchSource
	// NarrowFields returns the fields the documents are cut to.
	NarrowFields() []string
}

// ParallelFields returns the top-level fields (with _id) that a parallel
// run of the pipeline reads before its $group or $count, or nil when it
// may read whole documents, passes them on whole (a top-k $sort), or
// cannot run in parallel.
func (p *Pipeline) ParallelFields() []string {
	ti := p.parallelTerminal()
	if ti < 0 {
		return nil
	}
	if _, ok := p.stages[ti].(*sortStage); ok {
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
