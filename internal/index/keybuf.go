package index

import (
	"bytes"
	"slices"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// keyBuf is reusable scratch space for generating a document's keys
// without allocating per key: the keys are encoded one after another into
// buf, ends[i] is where key i ends.
type keyBuf struct {
	perField [][]bson.Value
	buf      []byte
	ends     []int
	order    []int
	hash     []byte
}

// appendKeys appends the document's keys to dst in ascending order
// without duplicates, calling emit after each with dst and where the key
// starts (emit may append more and returns dst). It is Keys without the
// allocations.
func (s *Spec) appendKeys(kb *keyBuf, dst []byte, doc bson.Doc, emit func(dst []byte, start int) []byte) ([]byte, bool, error) {
	if s.Text != nil || s.IsGeo() {
		keys, mk, err := s.pluginKeys(doc)
		if err != nil {
			return dst, false, err
		}
		for _, k := range keys {
			start := len(dst)
			dst = append(dst, k...)
			dst = emit(dst, start)
		}
		return dst, mk, nil
	}
	if s.Wildcard != nil {
		return s.wildcardKeys(kb, dst, doc, emit)
	}
	if s.Column != nil {
		return s.columnKeys(kb, dst, doc, emit)
	}
	if cap(kb.perField) < len(s.Fields) {
		kb.perField = make([][]bson.Value, len(s.Fields))
	}
	perField := kb.perField[:len(s.Fields)]
	arrayField := -1
	combos := 1
	for i, f := range s.Fields {
		vals, isArray := fieldValuesInto(perField[i][:0], doc, f.Parts)
		if isArray && !f.Hashed {
			if arrayField >= 0 {
				return dst, false, mongoerr.New(mongoerr.CannotIndexParallelArrays, "cannot index parallel arrays [%s] [%s]", f.Parts[len(f.Parts)-1], s.Fields[arrayField].Parts[len(s.Fields[arrayField].Parts)-1])
			}
			arrayField = i
		}
		if isArray && f.Hashed {
			return dst, false, mongoerr.New(mongoerr.HashedIndexArrayValue, "Error: hashed indexes do not currently support array values. Found array at path: %s", f.Path)
		}
		if len(vals) == 0 {
			vals = append(vals, nullValue)
		}
		perField[i] = vals
		combos = max(combos, len(vals))
	}
	encode := func(out []byte, combo int) []byte {
		for i, f := range s.Fields {
			v := perField[i][0]
			if i == arrayField {
				v = perField[i][combo]
			}
			if f.Hashed {
				out = kb.appendHashed(s, out, v, f.Desc)
			} else {
				out = s.appendValue(out, v, f.Desc)
			}
		}
		return out
	}
	if combos == 1 {
		start := len(dst)
		dst = encode(dst, 0)
		dst = emit(dst, start)
		return dst, arrayField >= 0, nil
	}
	// Several keys: encode into scratch, sort, drop duplicates.
	kb.buf, kb.ends, kb.order = kb.buf[:0], kb.ends[:0], kb.order[:0]
	for c := 0; c < combos; c++ {
		kb.buf = encode(kb.buf, c)
		kb.ends = append(kb.ends, len(kb.buf))
		kb.order = append(kb.order, c)
	}
	return kb.emitSorted(dst, emit), true, nil
}

// emitSorted appends the keys in kb.buf (ending at kb.ends, listed in
// kb.order) to dst in order without duplicates, calling emit after each.
func (kb *keyBuf) emitSorted(dst []byte, emit func(dst []byte, start int) []byte) []byte {
	key := func(i int) []byte {
		start := 0
		if i > 0 {
			start = kb.ends[i-1]
		}
		return kb.buf[start:kb.ends[i]]
	}
	slices.SortFunc(kb.order, func(a, b int) int { return bytes.Compare(key(a), key(b)) })
	var prev []byte
	for n, i := range kb.order {
		k := key(i)
		if n > 0 && bytes.Equal(k, prev) {
			continue
		}
		prev = k
		start := len(dst)
		dst = append(dst, k...)
		dst = emit(dst, start)
	}
	return dst
}

// appendHashed is appendHashed reusing the scratch buffer.
func (kb *keyBuf) appendHashed(s *Spec, dst []byte, v bson.Value, desc bool) []byte {
	kb.hash = s.appendValue(kb.hash[:0], v, false)
	return appendHashedSum(dst, fnv64a(kb.hash), desc)
}

// fieldValuesInto is fieldValues appending to dst.
func fieldValuesInto(dst []bson.Value, doc bson.Doc, parts []string) (vals []bson.Value, isArray bool) {
	collect(bson.Value{Type: bson.TypeDocument, Data: doc}, parts, &dst, &isArray, false)
	return dst, isArray
}
