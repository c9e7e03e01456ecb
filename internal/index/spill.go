package index

// External merge sort for builds larger than the memory budget: when a
// worker's runs outgrow its share of the budget, each run is sorted and
// written as an extsort run (its records are the entries' keys and
// values), and the worker starts afresh. The load then merges the runs on
// disk with the runs still in memory (extsort.Merger).

// DefaultBuildMemory is BuildOptions.MemoryBudget's default, MongoDB's
// maxIndexBuildMemoryUsageMegabytes (200 MB).
const DefaultBuildMemory = 200 << 20

// entryOverhead is the memory an entry costs besides its bytes.
const entryOverhead = 16

// memSize is the memory the worker's runs hold.
func (x *extractor) memSize() int {
	n := 0
	for i := range x.runs {
		n += len(x.runs[i].arena) + entryOverhead*len(x.runs[i].es)
	}
	return n
}

// spill sorts each run and writes it to a file, emptying the runs.
func (x *extractor) spill() error {
	for ti := range x.runs {
		r := &x.runs[ti]
		if len(r.es) == 0 {
			continue
		}
		r.sort()
		w, err := x.spillTo.Create()
		if err != nil {
			return err
		}
		unique := x.targets[ti].Spec.valueAfterKey()
		for _, e := range r.es {
			if err := w.Add(r.key(e), r.value(e, unique)); err != nil {
				break
			}
		}
		f, err := w.Finish()
		if err != nil {
			return err
		}
		x.files[ti] = append(x.files[ti], f)
		x.spilled[ti] += int64(len(r.es))
		r.arena, r.es = r.arena[:0], r.es[:0]
	}
	return nil
}

// memSource streams a sorted in-memory run (an extsort.Source).
type memSource struct {
	r      *run
	i      int
	unique bool
}

func (m *memSource) Head() ([]byte, []byte, bool) {
	if m.i == len(m.r.es) {
		return nil, nil, false
	}
	e := m.r.es[m.i]
	return m.r.key(e), m.r.value(e, m.unique), true
}

func (m *memSource) Advance() error { m.i++; return nil }

// fileReadBuffer is the read buffer of a spilled run.
const fileReadBuffer = 128 << 10
