package exec

import (
	"sync/atomic"
)

// OptCount is a figure logged only once set, even to zero.
type OptCount struct {
	N   atomic.Int64
	Set atomic.Bool
}

func (o *OptCount) Add(n int64) {
	o.N.Add(n)
	o.Set.Store(true)
}

// WriteFigures are a write's figures, in the order mongod logs them.
type WriteFigures struct {
	NMatched, NModified, Ninserted, Ndeleted, NUpserted OptCount
	keysInserted, keysDeleted                           OptCount
}

// Fields lists the figures with their names, in mongod's order.
func (w *WriteFigures) Fields() [7]struct {
	Name string
	C    *OptCount
} {
	return [7]struct {
		Name string
		C    *OptCount
	}{{"nMatched", &w.NMatched}, {"nModified", &w.NModified}, {"ninserted", &w.Ninserted},
		{"ndeleted", &w.Ndeleted}, {"nUpserted", &w.NUpserted}, {"keysInserted", &w.keysInserted},
		{"keysDeleted", &w.keysDeleted}}
}

// AppendAttrs adds the figures that were set to a slow-operation line.
func (w *WriteFigures) AppendAttrs(attrs []any) []any {
	for _, f := range w.Fields() {
		if f.C.Set.Load() {
			attrs = append(attrs, f.Name, f.C.N.Load())
		}
	}
	return attrs
}

// Any reports whether any write figure was set.
func (w *WriteFigures) Any() bool {
	for _, f := range w.Fields() {
		if f.C.Set.Load() {
			return true
		}
	}
	return false
}
