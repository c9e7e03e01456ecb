package query

import "github.com/cairndb/cairn/bson"

// Compound sorts. With several keys MongoDB does not take each key's
// smallest (or largest) value on its own: it generates the document's
// index-style key tuples, where keys under one array vary together (one
// tuple per element), and sorts the document by its best tuple. Keys that
// go through two different arrays cannot be generated ("parallel arrays").

// errParallelArrays is MongoDB's error for such a sort.
var errParallelArrays = badValue("cannot sort with keys that are parallel arrays")

// compound reports whether the sort has more than one ordinary key.
func (s *Sort) compound() bool {
	n := 0
	for _, k := range s.keys {
		if !k.meta {
			n++
		}
	}
	return n > 1
}

// genField is a sort key being generated: its position among the
// ordinary keys, its direction and the rest of its path.
type genField struct {
	parts []string
	desc  bool
}

// tupleValues returns the values doc sorts by, one per ordinary key. On
// parallel arrays it returns each key's own value and the error.
func (s *Sort) tupleValues(doc bson.Doc) ([]bson.Value, error) {
	fields := make([]genField, 0, len(s.keys))
	for _, k := range s.keys {
		if !k.meta {
			fields = append(fields, genField{parts: k.parts, desc: k.desc})
		}
	}
	vals, err := s.bestTuple(doc, fields)
	if err != nil {
		out := make([]bson.Value, 0, len(fields))
		for i := range s.keys {
			if !s.keys[i].meta {
				out = append(out, s.keyValue(doc, &s.keys[i]))
			}
		}
		return out, err
	}
	return vals, nil
}

// extractForSort follows parts through documents (and positional array
// indexes) to the value, or to the first array to expand, returning the
// rest of the path after it.
func extractForSort(d bson.Doc, parts []string) (v bson.Value, rest []string, isArray bool) {
	for i := 0; i < len(parts); i++ {
		x, ok := d.Lookup(parts[i])
		if !ok {
			return bson.Value{}, nil, false
		}
		last := i == len(parts)-1
		switch {
		case x.Type == bson.TypeArray:
			if !last && isAllDigits(parts[i+1]) {
				if y, ok := bson.Doc(x.Data).Lookup(parts[i+1]); ok {
					if i+1 == len(parts)-1 {
						if y.Type == bson.TypeArray {
							return y, nil, true
						}
						return y, nil, false
					}
					if y.Type == bson.TypeDocument {
						d = bson.Doc(y.Data)
						i++
						continue
					}
					return bson.Value{}, nil, false
				}
			}
			return x, parts[i+1:], true
		case last:
			return x, nil, false
		case x.Type == bson.TypeDocument:
			d = bson.Doc(x.Data)
		default:
			return bson.Value{}, nil, false
		}
	}
	return bson.Value{}, nil, false
}

func sortNull(v bson.Value) bson.Value {
	if v.Type == 0 || v.Type == bson.TypeUndefined {
		return bson.Value{Type: bson.TypeNull}
	}
	return v
}

// bestTuple returns the best key tuple of d for fields, in their order.
func (s *Sort) bestTuple(d bson.Doc, fields []genField) ([]bson.Value, error) {
	vals := make([]bson.Value, len(fields))
	var arr bson.Value
	var onArr []int
	var rests [][]string
	for i, f := range fields {
		v, rest, isArr := extractForSort(d, f.parts)
		if !isArr {
			vals[i] = sortNull(v)
			continue
		}
		if onArr != nil && &arr.Data[0] != &v.Data[0] {
			return nil, errParallelArrays
		}
		arr = v
		onArr = append(onArr, i)
		rests = append(rests, rest)
	}
	if onArr == nil {
		return vals, nil
	}
	elems := bson.Doc(arr.Data).Values()
	if len(elems) == 0 {
		for j, i := range onArr {
			if len(rests[j]) == 0 {
				vals[i] = bson.Value{Type: bson.TypeUndefined}
			} else {
				vals[i] = bson.Value{Type: bson.TypeNull}
			}
		}
		return vals, nil
	}
	var best []bson.Value
	cand := make([]bson.Value, len(vals))
	var sub []genField
	var subAt []int
	for j, i := range onArr {
		if len(rests[j]) > 0 {
			sub = append(sub, genField{parts: rests[j], desc: fields[i].desc})
			subAt = append(subAt, i)
		}
	}
	for _, e := range elems {
		copy(cand, vals)
		for j, i := range onArr {
			if len(rests[j]) == 0 {
				cand[i] = sortNull(e)
			}
		}
		if len(sub) > 0 {
			if e.Type == bson.TypeDocument {
				sv, err := s.bestTuple(bson.Doc(e.Data), sub)
				if err != nil {
					return nil, err
				}
				for j, i := range subAt {
					cand[i] = sv[j]
				}
			} else {
				for _, i := range subAt {
					cand[i] = bson.Value{Type: bson.TypeNull}
				}
			}
		}
		if best == nil || s.tupleLess(cand, best, fields) {
			best = append(best[:0], cand...)
		}
	}
	return best, nil
}

// tupleLess orders tuples by the fields' directions.
func (s *Sort) tupleLess(a, b []bson.Value, fields []genField) bool {
	for i, f := range fields {
		r := bson.CompareCollated(a[i], b[i], s.comparer())
		if f.desc {
			r = -r
		}
		if r != 0 {
			return r < 0
		}
	}
	return false
}
