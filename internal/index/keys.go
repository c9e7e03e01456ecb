package index

import (
	"bytes"
	"encoding/binary"
	"hash/fnv"
	"sort"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

var (
	nullValue      = bson.Value{Type: bson.TypeNull}
	undefinedValue = bson.Value{Type: bson.TypeUndefined}
)

// Applies reports whether doc belongs in the index: partial indexes hold
// only the documents their filter matches; sparse ones only documents that
// have at least one of the indexed fields.
func (s *Spec) Applies(doc bson.Doc) bool {
	if s.Partial != nil && !s.Partial.Match(doc) {
		return false
	}
	if s.Sparse && s.Text == nil {
		for _, f := range s.Fields {
			if vals, _ := fieldValues(doc, f.Parts); len(vals) > 0 {
				return true
			}
		}
		return false
	}
	return true
}

// Keys returns the index values of doc, encoded (without the _id suffix),
// sorted and without duplicates, and whether any field held an array
// (the index is then multikey). A document with arrays in two indexed
// fields is refused with CannotIndexParallelArrays (171).
func (s *Spec) Keys(doc bson.Doc) (keys [][]byte, multikey bool, err error) {
	if s.Text != nil {
		return s.textKeys(doc)
	}
	perField := make([][]bson.Value, len(s.Fields))
	arrayField := -1
	for i, f := range s.Fields {
		vals, isArray := fieldValues(doc, f.Parts)
		if isArray && !f.Hashed {
			if arrayField >= 0 {
				return nil, false, mongoerr.New(mongoerr.CannotIndexParallelArrays, "cannot index parallel arrays [%s] [%s]", f.Parts[len(f.Parts)-1], s.Fields[arrayField].Parts[len(s.Fields[arrayField].Parts)-1])
			}
			arrayField = i
		}
		if isArray && f.Hashed {
			return nil, false, mongoerr.New(16766, "Error: hashed indexes do not currently support array values. Found array at path: %s", f.Path)
		}
		if len(vals) == 0 {
			vals = []bson.Value{nullValue}
		}
		perField[i] = vals
	}
	// Cross product; at most one field has several values.
	keys = [][]byte{nil}
	for i, f := range s.Fields {
		var next [][]byte
		for _, prefix := range keys {
			for _, v := range perField[i] {
				k := append([]byte(nil), prefix...)
				if f.Hashed {
					k = appendHashed(k, v, f.Desc)
				} else {
					k = bson.AppendKey(k, v, f.Desc)
				}
				next = append(next, k)
			}
		}
		keys = next
	}
	if len(keys) > 1 {
		sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i], keys[j]) < 0 })
		out := keys[:1]
		for _, k := range keys[1:] {
			if !bytes.Equal(k, out[len(out)-1]) {
				out = append(out, k)
			}
		}
		keys = out
	}
	return keys, arrayField >= 0, nil
}

// HashedValue is the 64-bit hash a hashed index stores for v. Numbers that
// compare equal hash equally (they share one key encoding).
func HashedValue(v bson.Value) int64 {
	h := fnv.New64a()
	h.Write(bson.AppendKey(nil, v, false))
	return int64(h.Sum64())
}

func appendHashed(dst []byte, v bson.Value, desc bool) []byte {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(HashedValue(v)))
	return bson.AppendKey(dst, bson.Value{Type: bson.TypeInt64, Data: b[:]}, desc)
}

// fieldValues returns the values an index stores for a dotted path: a
// path through an array of documents yields each element's value; an array
// at the end of the path yields its elements (an empty array yields
// undefined, as MongoDB indexes it). isArray reports that an array was
// expanded. No values means the field is missing (indexed as null).
func fieldValues(doc bson.Doc, parts []string) (vals []bson.Value, isArray bool) {
	collect(bson.Value{Type: bson.TypeDocument, Data: doc}, parts, &vals, &isArray, false)
	return vals, isArray
}

func collect(v bson.Value, parts []string, out *[]bson.Value, isArray *bool, inArray bool) {
	if len(parts) == 0 {
		if v.Type == bson.TypeArray {
			*isArray = true
			n := 0
			it := v.Document().Iter()
			for it.Next() {
				*out = append(*out, it.Element().Value)
				n++
			}
			if n == 0 {
				*out = append(*out, undefinedValue)
			}
			return
		}
		*out = append(*out, v)
		return
	}
	switch v.Type {
	case bson.TypeDocument:
		child, ok := v.Document().Lookup(parts[0])
		if !ok {
			if inArray {
				*out = append(*out, nullValue)
			}
			return
		}
		collect(child, parts[1:], out, isArray, inArray)
	case bson.TypeArray:
		*isArray = true
		if isPosition(parts[0]) {
			if child, ok := v.Document().Lookup(parts[0]); ok {
				collect(child, parts[1:], out, isArray, inArray)
				return
			}
		}
		n := 0
		it := v.Document().Iter()
		for it.Next() {
			e := it.Element().Value
			if e.Type == bson.TypeDocument {
				collect(e, parts, out, isArray, true)
				n++
			}
		}
		if n == 0 {
			*out = append(*out, nullValue)
		}
	default:
		if inArray {
			*out = append(*out, nullValue)
		}
	}
}

func isPosition(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
