package index

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Wildcard indexes ({"$**": 1}, {"a.$**": 1}): one entry per leaf value of
// the document (or of the subtree under the path), keyed by the value's
// dotted path and then the value, so that a query on any field can scan
// the slice of its path. Array elements are indexed under the array's path
// (the index is multikey); nested arrays and empty documents are indexed
// as values; empty arrays as undefined. wildcardProjection (with "$**"
// only) includes or excludes subtrees; _id is excluded unless included.

// WildcardSpec describes a wildcard index.
type WildcardSpec struct {
	// Prefix is the path before ".$**" (nil for "$**").
	Prefix []string
	// Paths are wildcardProjection's paths; Include says whether they
	// are included (else excluded). ID is whether _id is indexed.
	Paths   []string
	Include bool
	ID      bool
}

// parseWildcard validates a wildcard key pattern and its options.
func (s *Spec) parseWildcard(d bson.Doc) error {
	var wf *Field
	for i := range s.Fields {
		if s.Fields[i].Path == "$**" || strings.HasSuffix(s.Fields[i].Path, ".$**") {
			wf = &s.Fields[i]
		}
	}
	proj, hasProj := d.Lookup("wildcardProjection")
	if wf == nil {
		if hasProj {
			return badSpec("The field 'wildcardProjection' is only allowed in an 'wildcard' index")
		}
		return nil
	}
	if len(s.Fields) > 1 {
		return mongoerr.New(mongoerr.CommandNotSupported, "Cairn does not support compound wildcard indexes")
	}
	if wf.Hashed || wf.Text {
		return badSpec("Index key contains an illegal field name: field name starts with '$'.")
	}
	switch {
	case s.Unique:
		return badSpec("Index type 'wildcard' does not support the unique option")
	case s.Sparse:
		return badSpec("Index type 'wildcard' does not support the sparse option")
	case s.ExpireAfterSeconds >= 0:
		return badSpec("Index type 'wildcard' does not support the expireAfterSeconds option")
	}
	if s.Collation != nil {
		return mongoerr.New(mongoerr.CommandNotSupported, "Cairn does not support collations on wildcard indexes")
	}
	w := &WildcardSpec{}
	if wf.Path != "$**" {
		w.Prefix = strings.Split(strings.TrimSuffix(wf.Path, ".$**"), ".")
	}
	if hasProj {
		if wf.Path != "$**" {
			return badSpec("The field 'wildcardProjection' is only allowed when 'key' is {\"$**\": ±1}")
		}
		if proj.Type != bson.TypeDocument || proj.Document().Len() == 0 {
			return badSpec("The field 'wildcardProjection' must be a non-empty object")
		}
		set := false
		it := proj.Document().Iter()
		for it.Next() {
			e := it.Element()
			incl := e.Value.Truthy()
			if e.Key == "_id" {
				w.ID = incl
				continue
			}
			if strings.HasPrefix(e.Key, "$") || strings.Contains(e.Key, "$**") {
				return badSpec("Invalid wildcardProjection path: %s", e.Key)
			}
			if set && incl != w.Include {
				return badSpec("Cannot do %s on field %s in %s projection", map[bool]string{true: "inclusion", false: "exclusion"}[incl], e.Key, map[bool]string{true: "inclusion", false: "exclusion"}[w.Include])
			}
			set = true
			w.Include = incl
			w.Paths = append(w.Paths, e.Key)
		}
		if !set && w.ID {
			w.Include = true // {_id: 1} alone indexes _id only
		}
	}
	s.Wildcard = w
	return nil
}

func under(path, p string) bool {
	return path == p || (len(path) > len(p) && path[len(p)] == '.' && strings.HasPrefix(path, p))
}

// indexes reports whether the wildcard index holds values at path (a
// leaf's full dotted path).
func (w *WildcardSpec) indexes(path string) bool {
	if path == "_id" || strings.HasPrefix(path, "_id.") {
		return w.ID
	}
	if w.Prefix != nil && !under(path, strings.Join(w.Prefix, ".")) {
		return false
	}
	if len(w.Paths) == 0 {
		return true
	}
	for _, p := range w.Paths {
		if under(path, p) {
			return w.Include
		}
	}
	return !w.Include
}

// descends reports whether a sub-document at path may hold indexed
// values.
func (w *WildcardSpec) descends(path string) bool {
	if w.indexes(path) {
		return true
	}
	if (path == "_id" && w.ID) || (w.Prefix != nil && under(strings.Join(w.Prefix, "."), path)) {
		return true
	}
	if w.Include {
		for _, p := range w.Paths {
			if under(p, path) {
				return true
			}
		}
	}
	return false
}

// CanAnswer reports whether a query on field can use the index: the field
// is indexed and has no numeric component (a positional path is not the
// path the index stores array elements under).
func (w *WildcardSpec) CanAnswer(field string) bool {
	for _, p := range strings.Split(field, ".") {
		if isPosition(p) || strings.HasPrefix(p, "$") {
			return false
		}
	}
	return w.indexes(field)
}

// wildcardKeys encodes doc's entries into kb (path then value), sorted
// and without duplicates, and emits them.
func (s *Spec) wildcardKeys(kb *keyBuf, dst []byte, doc bson.Doc, emit func(dst []byte, start int) []byte) ([]byte, bool, error) {
	w := s.Wildcard
	desc := s.Fields[0].Desc
	kb.buf, kb.ends = kb.buf[:0], kb.ends[:0]
	multikey := false
	add := func(path string, v bson.Value) {
		if !w.indexes(path) {
			return
		}
		kb.buf = bson.AppendKey(kb.buf, StringValue(path), false)
		kb.buf = s.appendValue(kb.buf, v, desc)
		kb.ends = append(kb.ends, len(kb.buf))
	}
	var walk func(v bson.Value, path string)
	walk = func(v bson.Value, path string) {
		switch v.Type {
		case bson.TypeDocument:
			d := v.Document()
			if len(d) <= 5 && path != "" {
				add(path, v) // an empty document is a value
				return
			}
			if path != "" && !w.descends(path) {
				return
			}
			it := d.Iter()
			for it.Next() {
				e := it.Element()
				p := e.Key
				if path != "" {
					p = path + "." + e.Key
				}
				walk(e.Value, p)
			}
		case bson.TypeArray:
			multikey = true
			n := 0
			it := v.Document().Iter()
			for it.Next() {
				n++
				e := it.Element().Value
				if e.Type == bson.TypeArray {
					add(path, e) // nested arrays are values
				} else {
					walk(e, path)
				}
			}
			if n == 0 {
				add(path, undefinedValue)
			}
		default:
			add(path, v)
		}
	}
	root := bson.Value{Type: bson.TypeDocument, Data: doc}
	if w.Prefix == nil {
		walk(root, "")
	} else {
		// Follow the prefix through embedded documents.
		v, path := root, ""
		for _, p := range w.Prefix {
			if v.Type != bson.TypeDocument {
				return dst, false, nil
			}
			c, ok := v.Document().Lookup(p)
			if !ok {
				return dst, false, nil
			}
			v = c
			if path != "" {
				path += "."
			}
			path += p
		}
		walk(v, path)
	}
	// Sort, drop duplicates, emit.
	kb.order = kb.order[:0]
	for i := range kb.ends {
		kb.order = append(kb.order, i)
	}
	return kb.emitSorted(dst, emit), multikey, nil
}

// WildcardRanges maps value intervals of field to ranges of a wildcard
// index's keys.
func (s *Spec) WildcardRanges(field string, ivs []Interval) []KeyRange {
	return s.rangesWith(bson.AppendKey(nil, StringValue(field), false), s.Fields[0], ivs)
}
