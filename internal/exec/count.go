package exec

// count's and distinct's executors over a FindSpec: count reads raw
// documents (an empty filter is answered from the tree's O(1) length by
// the scan), distinct collects the distinct values of a path.

import (
	"context"
	"sort"
	"strings"

	"github.com/cairndb/cairn/bson"
)

// Count counts the documents spec matches after its skip, up to limit
// (0: all).
func (e *Engine) Count(ctx context.Context, spec *FindSpec, limit int64) (int64, error) {
	var src Source = &ScanSource{Env: e, Spec: spec, Skip: spec.Skip, Raw: true}
	if spec.Text != nil {
		src = NewTextSource(e, spec, true)
	}
	var n int64
	_, err := src.Fill(ctx, func(bson.Doc) bool {
		n++
		return limit == 0 || n < limit
	})
	if err != nil {
		return 0, err
	}
	if limit > 0 && n > limit {
		n = limit
	}
	return n, nil
}

// Distinct collects the distinct values of a dotted path (an array's
// elements counted one by one), compared with a collation (nil: binary).
type Distinct struct {
	path   []string
	cmp    bson.StringComparer
	values []bson.Value
}

// NewDistinct collects the values of key under cmp.
func NewDistinct(key string, cmp bson.StringComparer) *Distinct {
	return &Distinct{path: strings.Split(key, "."), cmp: cmp}
}

func (d *Distinct) add(v bson.Value) {
	for _, have := range d.values {
		if bson.CompareCollated(have, v, d.cmp) == 0 {
			return
		}
	}
	d.values = append(d.values, bson.Value{Type: v.Type, Data: append([]byte(nil), v.Data...)})
}

// Feed adds the values of one document; it always returns true (a Fill
// callback).
func (d *Distinct) Feed(doc bson.Doc) bool {
	PathValues(doc, d.path, func(v bson.Value) {
		if v.Type == bson.TypeArray {
			it := v.Document().Iter()
			for it.Next() {
				d.add(it.Element().Value)
			}
			return
		}
		d.add(v)
	})
	return true
}

// Scan feeds the documents spec matches.
func (d *Distinct) Scan(ctx context.Context, e *Engine, spec *FindSpec) error {
	var src Source = &ScanSource{Env: e, Spec: spec, Raw: true}
	if spec.Text != nil {
		src = NewTextSource(e, spec, true)
	}
	_, err := src.Fill(ctx, d.Feed)
	src.Close()
	return err
}

// Values are the distinct values, sorted.
func (d *Distinct) Values() []bson.Value {
	sort.SliceStable(d.values, func(i, j int) bool { return bson.CompareCollated(d.values[i], d.values[j], d.cmp) < 0 })
	return d.values
}
