package index

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Column store indexes ({"$**": "columnstore"}, {"a.$**": "columnstore"},
// optionally with columnstoreProjection, as MongoDB 6.3 spells them) keep
// the collection's documents by column: for every stored top-level field
// and every document that has it, one kv entry keyed by the field and the
// document's key in the data tree, whose value is the field's cell — where
// the field stands among the document's elements (its ordinal, a uvarint)
// followed by its BSON type byte and value bytes. Every document also has
// an entry under the row-id column (the empty path), whose value is one
// zero byte:
// a scan of it lists every document, including those with none of the
// stored fields, which is what counts and row alignment need (mongod's
// column store has the same row-id column).
//
// Key layout: uvarint(len(field)) field docKey. A column's entries are
// therefore contiguous and in the data tree's order, so that a reader
// walking a few columns side by side meets each document's cells in the
// same order as a collection scan would meet the documents. Subdocuments
// and arrays are stored whole in their top-level field's cell, so that
// any dotted path under a stored field is answered exactly as from the
// document itself (mongod instead splits documents into leaf paths with
// array info; see docs/compatibility.md).
//
// Through the generic index machinery a column store's "keys" for a
// document (Keys, appendKeys) are prefix+cell per field, sorted; the
// entry a key makes (Spec.entryOf) moves the cell into the kv value, and
// the bulk build lays entries out the same way. Updates therefore write
// only the columns whose cells changed, in the writer's transaction.

// ColumnSpec describes a column store index: the top-level fields it
// stores.
type ColumnSpec struct {
	// Fields are the projection's top-level field names; Include says
	// whether they are the stored ones (else every other field is). ID
	// says whether _id is stored (by default it is).
	Fields  []string
	Include bool
	ID      bool
}

// RowIDColumn is the column every document has an entry in.
const RowIDColumn = ""

// Stores reports whether the index keeps field (a top-level field name).
func (c *ColumnSpec) Stores(field string) bool {
	if field == "_id" {
		return c.ID
	}
	if slices.Contains(c.Fields, field) {
		return c.Include
	}
	return !c.Include
}

// sameColumns reports whether two column store specs (or nils) store
// the same fields.
func sameColumns(a, b *ColumnSpec) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Include != b.Include || a.ID != b.ID || len(a.Fields) != len(b.Fields) {
		return false
	}
	for _, f := range a.Fields {
		if !slices.Contains(b.Fields, f) {
			return false
		}
	}
	return true
}

// ColumnPrefix is the key prefix of a column's entries.
func ColumnPrefix(field string) []byte {
	return append(binary.AppendUvarint(nil, uint64(len(field))), field...)
}

// parseColumnStore validates a column store key pattern and its options
// (after parseKey). It reports whether the spec is a column store index.
func (s *Spec) parseColumnStore(d bson.Doc) (bool, error) {
	cf := -1
	for i := range s.Fields {
		if s.Fields[i].Column {
			cf = i
		}
	}
	proj, hasProj := d.Lookup("columnstoreProjection")
	if cf < 0 {
		if hasProj {
			return false, mongoerr.New(mongoerr.InvalidIndexSpecificationOption, "The field 'columnstoreProjection' is only allowed in a 'columnstore' index")
		}
		return false, nil
	}
	f := s.Fields[cf]
	if len(s.Fields) > 1 {
		return true, badSpec("Compound columnstore indexes are not supported: %s", s.Key.String())
	}
	if f.Path != "$**" && (!strings.HasSuffix(f.Path, ".$**") || strings.Count(f.Path, "$**") > 1) {
		return true, badSpec("Column store indexes must be of the form {\"$**\": \"columnstore\"} or {\"<path>.$**\": \"columnstore\"}, found %s", s.Key.String())
	}
	switch {
	case s.Unique:
		return true, badSpec("Index type 'columnstore' does not support the unique option")
	case s.Sparse:
		return true, badSpec("Index type 'columnstore' does not support the sparse option")
	case s.Partial != nil:
		return true, badSpec("Index type 'columnstore' does not support the partialFilterExpression option")
	case s.ExpireAfterSeconds >= 0:
		return true, badSpec("Index type 'columnstore' does not support the expireAfterSeconds option")
	case s.Collation != nil:
		return true, badSpec("Index type 'columnstore' does not support the collation option")
	}
	if v, ok := d.Lookup("v"); ok {
		if n, _ := v.AsInt64(); n != 2 {
			return true, badSpec("Index type 'columnstore' requires index version 2, found v=%s", v.String())
		}
	}
	if _, ok := d.Lookup("wildcardProjection"); ok {
		return true, mongoerr.New(mongoerr.BadValue, "The field 'wildcardProjection' is not valid for a 'columnstore' index; use 'columnstoreProjection'")
	}
	if hasProj && proj.Type != bson.TypeDocument {
		return true, mongoerr.New(mongoerr.TypeMismatch, "The field 'columnstoreProjection' must be an object, but got %s", proj.Type)
	}
	c := &ColumnSpec{ID: true}
	if f.Path != "$**" {
		if hasProj {
			return true, mongoerr.New(mongoerr.FailedToParse, "The field 'columnstoreProjection' is only allowed when 'key' is {\"$**\": \"columnstore\"}")
		}
		// A subtree is kept by its top-level field: cells hold the whole
		// value, so the subtree is in it.
		c.Fields, c.Include, c.ID = []string{f.Parts[0]}, true, f.Parts[0] == "_id"
	}
	if hasProj {
		if proj.Document().Len() == 0 {
			return true, mongoerr.New(mongoerr.FailedToParse, "The field 'columnstoreProjection' must be a non-empty object")
		}
		set := false
		it := proj.Document().Iter()
		for it.Next() {
			e := it.Element()
			var incl bool
			switch e.Value.Type {
			case bson.TypeBoolean, bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
				incl = e.Value.Truthy()
			default:
				return true, mongoerr.New(mongoerr.IndexProjectionNotFieldPath, "In a columnstoreProjection a field can only be included or excluded, found %s: %s", e.Key, e.Value.String())
			}
			if e.Key == "" || strings.HasPrefix(e.Key, "$") || strings.Contains(e.Key, "$**") {
				return true, badSpec("Invalid columnstoreProjection path: %s", e.Key)
			}
			top, _, dotted := strings.Cut(e.Key, ".")
			if top == "_id" {
				if dotted {
					return true, badSpec("Cairn's column store indexes keep _id whole: %s cannot be projected on its own", e.Key)
				}
				c.ID = incl
				continue
			}
			if set && incl != c.Include {
				if incl {
					return true, mongoerr.New(mongoerr.InclusionInExclusionProjection, "Cannot do inclusion on field %s in exclusion projection", e.Key)
				}
				return true, mongoerr.New(mongoerr.ExclusionInInclusionProjection, "Cannot do exclusion on field %s in inclusion projection", e.Key)
			}
			set, c.Include = true, incl
			// A dotted inclusion keeps its whole top-level field (a
			// superset); a dotted exclusion excludes nothing whole.
			if dotted && !incl {
				continue
			}
			if !slices.Contains(c.Fields, top) {
				c.Fields = append(c.Fields, strings.Clone(top))
			}
		}
		if !set {
			c.Include = true // {_id: 1} alone keeps _id only
		}
	}
	s.Column = c
	return true, nil
}

// columnKeys appends doc's column store keys (see the top of the file) to
// dst in ascending order, calling emit after each as appendKeys does.
func (s *Spec) columnKeys(kb *keyBuf, dst []byte, doc bson.Doc, emit func(dst []byte, start int) []byte) ([]byte, bool, error) {
	c := s.Column
	kb.buf, kb.ends = kb.buf[:0], kb.ends[:0]
	kb.buf = append(kb.buf, 0, 0) // the row-id column: its prefix, and a cell of one zero byte
	kb.ends = append(kb.ends, len(kb.buf))
	var seen []string
	it := doc.Iter()
	for ord := 0; it.Next(); ord++ {
		e := it.Element()
		if !c.Stores(e.Key) || slices.Contains(seen, e.Key) {
			continue // the first of repeated keys counts, as Lookup finds it
		}
		seen = append(seen, e.Key)
		kb.buf = binary.AppendUvarint(kb.buf, uint64(len(e.Key)))
		kb.buf = append(kb.buf, e.Key...)
		kb.buf = binary.AppendUvarint(kb.buf, uint64(ord))
		kb.buf = append(kb.buf, byte(e.Value.Type))
		kb.buf = append(kb.buf, e.Value.Data...)
		kb.ends = append(kb.ends, len(kb.buf))
	}
	if it.Corrupt() {
		return dst, false, mongoerr.New(mongoerr.InvalidBSON, "column store index %s: the document is not valid BSON", s.Name)
	}
	kb.order = kb.order[:0]
	for i := range kb.ends {
		kb.order = append(kb.order, i)
	}
	key := func(i int) []byte {
		start := 0
		if i > 0 {
			start = kb.ends[i-1]
		}
		return kb.buf[start:kb.ends[i]]
	}
	slices.SortFunc(kb.order, func(a, b int) int { return bytes.Compare(key(a), key(b)) })
	for _, i := range kb.order {
		start := len(dst)
		dst = append(dst, key(i)...)
		dst = emit(dst, start)
	}
	return dst, false, nil
}

// splitColumnKey splits a column store key into its column prefix and
// its cell.
func splitColumnKey(k []byte) (prefix, cell []byte) {
	n, w := binary.Uvarint(k)
	if w <= 0 || uint64(len(k)-w) < n {
		return k, nil // not produced by columnKeys
	}
	end := w + int(n)
	return k[:end], k[end:]
}

// entryOf returns the kv key and value of the entry that an index key
// (as Keys makes it) and a document's key make: for a column store the
// column prefix and the document key, with the cell as value; for other
// indexes the values (followed by the document key unless unique), with
// the document key as value. The key is built in buf.
func (s *Spec) entryOf(buf, values, idKey []byte) (key, val []byte) {
	if s.Column != nil {
		prefix, cell := splitColumnKey(values)
		buf = append(append(buf[:0], prefix...), idKey...)
		return buf, cell
	}
	buf = append(buf[:0], values...)
	if !s.Unique {
		buf = append(buf, idKey...)
	}
	return buf, idKey
}

// EntryOf is entryOf into a new buffer (validate's expected entries).
func (s *Spec) EntryOf(values, idKey []byte) (key, val []byte) {
	k, v := s.entryOf(nil, values, idKey)
	return k, bytes.Clone(v)
}

// valueAfterKey reports whether, in a bulk build's arena, an entry's value
// follows its key (unique and column store indexes) rather than being the
// key's last bytes (the document key ending a non-unique key).
func (s *Spec) valueAfterKey() bool { return s.Unique || s.Column != nil }

// Cell is one document's value in a column: the field's place among the
// document's elements and its value.
type Cell struct {
	Ordinal int
	Value   bson.Value
}

// DecodeCell decodes a column store entry's value; ok is false for a
// malformed one.
func DecodeCell(v []byte) (c Cell, ok bool) {
	ord, w := binary.Uvarint(v)
	if w <= 0 || len(v) < w+1 {
		return Cell{}, false
	}
	t := bson.Type(v[w])
	data := v[w+1:]
	if sz := bson.ValueSize(t, data); sz != len(data) {
		return Cell{}, false
	}
	return Cell{Ordinal: int(ord), Value: bson.Value{Type: t, Data: data}}, true
}
