package index

import (
	"bytes"
	"strings"

	"github.com/cairndb/cairn/bson"
)

// Interval is a range of values of one field, in MongoDB's order.
type Interval struct {
	Lo, Hi       bson.Value
	LoInc, HiInc bool
}

// Point reports whether the interval holds one value.
func (iv Interval) Point() bool {
	return iv.LoInc && iv.HiInc && bson.Compare(iv.Lo, iv.Hi) == 0
}

var (
	minKey = bson.Value{Type: bson.TypeMinKey}
	maxKey = bson.Value{Type: bson.TypeMaxKey}
)

// FieldBounds derives from a filter the values of field that any matching
// document must index under: a superset, since the filter is applied again
// to every fetched document. It understands equality, $eq, $in, the range
// operators and top-level $and; multikey disables intersecting a lower and
// an upper bound (two array elements may satisfy them separately). ok is
// false when the filter does not restrict the field.
func FieldBounds(filter bson.Doc, field string, multikey bool) (ivs []Interval, ok bool) {
	var all [][]Interval
	collectBounds(filter, field, &all)
	if len(all) == 0 {
		return nil, false
	}
	// Prefer the most selective: points first, then a range.
	best := all[0]
	for _, c := range all[1:] {
		if score(c) > score(best) {
			best = c
		}
	}
	if !multikey && len(best) == 1 && !best[0].Point() {
		// Intersect every single-interval range constraint.
		cur := best[0]
		for _, c := range all {
			if len(c) == 1 && !c[0].Point() {
				cur = intersect(cur, c[0])
			}
		}
		best = []Interval{cur}
	}
	return best, true
}

// NeBounds returns the intervals that leave out the value of a
// {field: {$ne: v}} constraint at the top level of filter (or in a
// top-level $and): everything below v and everything above it. They
// bound no more than a whole index does in the worst case, so the
// planner does not count them as bounds; they spare an index walk in
// sort order the keys equal to v.
func NeBounds(filter bson.Doc, field string) ([]Interval, bool) {
	var found []Interval
	eachConjunct(filter, func(e bson.Element) {
		if e.Key != field || e.Value.Type != bson.TypeDocument || !isOperatorDoc(e.Value.Document()) || found != nil {
			return
		}
		oi := e.Value.Document().Iter()
		for oi.Next() {
			op := oi.Element()
			if op.Key == "$ne" && rangeIndexable(op.Value) {
				found = []Interval{{Lo: minKey, LoInc: true, Hi: op.Value}, {Lo: op.Value, Hi: maxKey, HiInc: true}}
				return
			}
		}
	})
	return found, found != nil
}

// eachConjunct calls fn with every element at the top level of filter,
// and inside a top-level $and, in order.
func eachConjunct(filter bson.Doc, fn func(e bson.Element)) {
	it := filter.Iter()
	for it.Next() {
		e := it.Element()
		if e.Key == "$and" && e.Value.Type == bson.TypeArray {
			ai := e.Value.Document().Iter()
			for ai.Next() {
				if sub := ai.Element().Value; sub.Type == bson.TypeDocument {
					eachConjunct(sub.Document(), fn)
				}
			}
			continue
		}
		fn(e)
	}
}

func score(ivs []Interval) int {
	for _, iv := range ivs {
		if !iv.Point() {
			return 1
		}
	}
	return 2
}

func intersect(a, b Interval) Interval {
	if c := bson.Compare(b.Lo, a.Lo); c > 0 || (c == 0 && !b.LoInc) {
		a.Lo, a.LoInc = b.Lo, b.LoInc
	}
	if c := bson.Compare(b.Hi, a.Hi); c < 0 || (c == 0 && !b.HiInc) {
		a.Hi, a.HiInc = b.Hi, b.HiInc
	}
	return a
}

// collectBounds appends one interval list per constraint on field found at
// the top level of filter (or inside a top-level $and).
func collectBounds(filter bson.Doc, field string, out *[][]Interval) {
	eachConjunct(filter, func(e bson.Element) {
		if e.Key != field {
			return
		}
		v := e.Value
		if v.Type == bson.TypeDocument && isOperatorDoc(v.Document()) {
			oi := v.Document().Iter()
			for oi.Next() {
				op := oi.Element()
				if ivs, ok := operatorBounds(op.Key, op.Value); ok {
					*out = append(*out, ivs)
				}
			}
			return
		}
		if equalityIndexable(v) {
			*out = append(*out, []Interval{{Lo: v, Hi: v, LoInc: true, HiInc: true}})
		}
	})
}

func isOperatorDoc(d bson.Doc) bool {
	it := d.Iter()
	return it.Next() && strings.HasPrefix(it.Element().Key, "$")
}

// equalityIndexable excludes values whose equality match is not a single
// index point: arrays (they match whole arrays and elements), regexes
// (pattern matches), null (also matches undefined) and MinKey/MaxKey.
func equalityIndexable(v bson.Value) bool {
	switch v.Type {
	case bson.TypeArray, bson.TypeRegex, bson.TypeNull, bson.TypeUndefined, bson.TypeMinKey, bson.TypeMaxKey:
		return false
	}
	return true
}

func operatorBounds(op string, v bson.Value) ([]Interval, bool) {
	switch op {
	case "$eq":
		if !equalityIndexable(v) {
			return nil, false
		}
		return []Interval{{Lo: v, Hi: v, LoInc: true, HiInc: true}}, true
	case "$in":
		if v.Type != bson.TypeArray {
			return nil, false
		}
		var ivs []Interval
		it := v.Document().Iter()
		for it.Next() {
			x := it.Element().Value
			if !equalityIndexable(x) {
				return nil, false
			}
			ivs = append(ivs, Interval{Lo: x, Hi: x, LoInc: true, HiInc: true})
		}
		if len(ivs) == 0 {
			return nil, false
		}
		return ivs, true
	case "$gt", "$gte":
		if !rangeIndexable(v) {
			return nil, false
		}
		return []Interval{{Lo: v, LoInc: op == "$gte", Hi: maxKey, HiInc: true}}, true
	case "$lt", "$lte":
		if !rangeIndexable(v) {
			return nil, false
		}
		return []Interval{{Lo: minKey, LoInc: true, Hi: v, HiInc: op == "$lte"}}, true
	}
	return nil, false
}

// rangeIndexable excludes range operands whose matches are not a simple
// interval of the index order (arrays, regexes, null and the key bounds).
func rangeIndexable(v bson.Value) bool {
	switch v.Type {
	case bson.TypeArray, bson.TypeRegex, bson.TypeNull, bson.TypeUndefined, bson.TypeMinKey, bson.TypeMaxKey, bson.TypeDocument:
		return false
	}
	if f, ok := v.AsFloat64(); ok && f != f {
		return false // NaN
	}
	return true
}

// KeyRange is an interval of an index's kv keys: every key k with
// Start <= k, and k < End or (EndInclusivePrefix and k has prefix End).
type KeyRange struct {
	// All covers the whole index (a hinted index the filter does not
	// restrict).
	All   bool
	Start []byte
	// StartExclusivePrefix skips keys that begin with Start.
	StartExclusivePrefix bool
	End                  []byte
	EndInclusivePrefix   bool
}

// KeyRanges maps value intervals of the index's leading field to ranges of
// its kv keys, ascending and merged where they overlap.
func (s *Spec) KeyRanges(ivs []Interval) []KeyRange {
	return s.rangesWith(nil, s.Fields[0], ivs)
}

// rangesWith is KeyRanges for field f's values after a fixed prefix.
func (s *Spec) rangesWith(prefix []byte, f Field, ivs []Interval) []KeyRange {
	enc := func(v bson.Value) []byte {
		k := append([]byte(nil), prefix...)
		if f.Hashed {
			return s.appendHashed(k, v, f.Desc)
		}
		return s.appendValue(k, v, f.Desc)
	}
	var out []KeyRange
	for _, iv := range ivs {
		lo, hi := enc(iv.Lo), enc(iv.Hi)
		loInc, hiInc := iv.LoInc, iv.HiInc
		if f.Desc {
			lo, hi = hi, lo
			loInc, hiInc = hiInc, loInc
		}
		out = append(out, KeyRange{Start: lo, StartExclusivePrefix: !loInc, End: hi, EndInclusivePrefix: hiInc})
	}
	if len(out) > 1 {
		sortRanges(out)
	}
	return out
}

func sortRanges(rs []KeyRange) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && bytes.Compare(rs[j].Start, rs[j-1].Start) < 0; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

// BeforeEnd reports whether key lies before the end of r.
func (r KeyRange) BeforeEnd(key []byte) bool {
	if r.All {
		return true
	}
	if r.EndInclusivePrefix {
		return bytes.Compare(key, r.End) <= 0 || bytes.HasPrefix(key, r.End)
	}
	return bytes.Compare(key, r.End) < 0
}

// PastStart reports whether key lies after the start of r.
func (r KeyRange) PastStart(key []byte) bool {
	if r.All {
		return true
	}
	if r.StartExclusivePrefix {
		return bytes.Compare(key, r.Start) > 0 && !bytes.HasPrefix(key, r.Start)
	}
	return bytes.Compare(key, r.Start) >= 0
}

// Usable reports whether the planner may use this index for a query
// without collation: hidden, sparse and partial indexes do not hold every
// document; column store indexes serve aggregations' column scans only.
func (s *Spec) Usable() bool {
	return !s.Hidden && !s.Sparse && s.Partial == nil && s.Text == nil && !s.IsGeo() && s.Column == nil
}

// FilterFields lists the fields a filter constrains at its top level (or
// in a top-level $and), in order, without duplicates.
func FilterFields(filter bson.Doc) []string {
	var out []string
	seen := map[string]bool{}
	eachConjunct(filter, func(e bson.Element) {
		if !strings.HasPrefix(e.Key, "$") && !seen[e.Key] {
			seen[e.Key] = true
			out = append(out, e.Key)
		}
	})
	return out
}

// CompoundRanges is KeyRanges for a filter that pins the leading field to
// points: when it also bounds the second field, each point is combined
// with the second field's intervals, so the scan reads only the matching
// slice of a compound index. second reports whether the second field was
// used.
func (s *Spec) CompoundRanges(lead []Interval, filter bson.Doc, multikey bool) (ranges []KeyRange, second bool) {
	if len(s.Fields) < 2 || s.Fields[1].Hashed {
		return s.KeyRanges(lead), false
	}
	for _, iv := range lead {
		if !iv.Point() {
			return s.KeyRanges(lead), false
		}
	}
	ivs, ok := FieldBounds(filter, s.Fields[1].Path, multikey)
	if !ok {
		return s.KeyRanges(lead), false
	}
	f0, f1 := s.Fields[0], s.Fields[1]
	for _, p := range lead {
		var prefix []byte
		if f0.Hashed {
			prefix = s.appendHashed(nil, p.Lo, f0.Desc)
		} else {
			prefix = s.appendValue(nil, p.Lo, f0.Desc)
		}
		for _, iv := range ivs {
			lo := s.appendValue(append([]byte(nil), prefix...), iv.Lo, f1.Desc)
			hi := s.appendValue(append([]byte(nil), prefix...), iv.Hi, f1.Desc)
			loInc, hiInc := iv.LoInc, iv.HiInc
			if f1.Desc {
				lo, hi = hi, lo
				loInc, hiInc = hiInc, loInc
			}
			ranges = append(ranges, KeyRange{Start: lo, StartExclusivePrefix: !loInc, End: hi, EndInclusivePrefix: hiInc})
		}
	}
	sortRanges(ranges)
	return ranges, true
}
