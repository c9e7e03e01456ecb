package exec

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/index"
)

// Covered plans (MongoDB's PROJECTION_COVERED): when the filter, the
// projection and the sort read only fields of the plan's index, each entry's
// key is decoded back into a document holding those fields and the
// document itself is not fetched.
//
// Keys keep values exactly except in three ways, and an entry whose key
// loses something the query needs is answered by fetching its document
// instead: a number comes back as the narrowest numeric type that holds it
// (so numbers are returned from keys only when the catalog knows the one
// numeric type the field has held, index/numtypes.go; a field that held
// several is not covered at all, and symbols never are), null also stands
// for a missing field, and strings under a collation are stored as sort
// keys that cannot be decoded. Hashed fields are never covered; multikey
// indexes never are (an entry holds one array element).
//
// _id is returned from an index without it too: every entry's value is its
// document's key in the collection's tree (DocKey, _id key-encoded without
// a collation), so an ObjectId or string _id is decoded from it exactly;
// an entry whose _id is of another type (numbers lose theirs) fetches.
// mongod cannot cover _id this way (its entries hold a record id), so such
// a plan explains PROJECTION_COVERED where mongod's says FETCH.

// coverNeed is what a query needs of one index field.
type coverNeed uint8

const (
	needNone   coverNeed = iota
	needFilter           // compared by the filter or the sort: numeric type may be lost
	needOutput           // returned by the projection: must be exact
)

// coverage describes how to rebuild documents from an index's keys.
type coverage struct {
	// needs holds one entry per key component, in key order.
	needs []coverNeed
	// parts are the components' paths, split at dots.
	parts [][]string
	// last is the index of the last needed component (decoding stops there).
	last int
	// numAs, when the index tracks its fields' numeric types, is the type
	// a returned component's numbers are given back in (0: it never held
	// one); nil for an index that does not track them, whose numbers are
	// then fetched.
	numAs []bson.Type
	// numSets is the index's NumTypes numAs was made from: a walk that
	// finds them changed (a later batch) fetches instead.
	numSets []byte
	// idFromRef: the projection returns _id, which the index does not
	// hold; it is decoded from the entry's document key.
	idFromRef bool
}

// CoverPlan marks p covered when spec's filter, projection and sort need
// only fields of p's index; it returns p.
func CoverPlan(coll *catalog.Collection, spec *FindSpec, p *Plan) *Plan {
	if p == nil || p.Spec == nil || coll == nil || spec.Text != nil {
		return p
	}
	if spec.ProjDoc == nil && !spec.CountOnly {
		return p
	}
	s := p.Spec
	if s.Text != nil || s.IsGeo() || s.Wildcard != nil || s.Column != nil || len(s.Fields) == 0 {
		return p
	}
	ix := indexNamed(coll, p.Index)
	if ix == nil || ix.Multikey || !ix.Ready {
		return p
	}
	paths := map[string]int{}
	for i, f := range s.Fields {
		paths[f.Path] = i
	}
	// A field whose path extends another's would be rebuilt twice.
	for _, f := range s.Fields {
		for _, g := range s.Fields {
			if strings.HasPrefix(g.Path, f.Path+".") {
				return p
			}
		}
	}
	if !contiguousPrefixes(s.Fields) {
		return p
	}
	cv := &coverage{needs: make([]coverNeed, len(s.Fields)), last: -1}
	for _, f := range s.Fields {
		cv.parts = append(cv.parts, f.Parts)
	}
	need := func(path string, n coverNeed) bool {
		i, ok := paths[path]
		if !ok || s.Fields[i].Hashed {
			return false
		}
		cv.needs[i] = max(cv.needs[i], n)
		cv.last = max(cv.last, i)
		return true
	}
	var filterPaths []string
	if !coverableFilter(spec.FilterDoc, &filterPaths) {
		return p
	}
	for _, f := range filterPaths {
		if !need(f, needFilter) {
			return p
		}
	}
	if spec.SortDoc.Len() > 0 {
		keys, ok := plainSortKeys(spec.SortDoc)
		if !ok {
			return p
		}
		for _, k := range keys {
			if !need(k.Path, needFilter) {
				return p
			}
		}
	}
	if spec.ProjDoc != nil {
		out, ok := coverableProjection(spec.ProjDoc)
		if !ok {
			return p
		}
		for _, f := range out {
			if _, inIndex := paths[f]; f == "_id" && !inIndex {
				cv.idFromRef = true
				continue
			}
			if !need(f, needOutput) {
				return p
			}
		}
	}
	if ix.NumTypes != nil && len(ix.NumTypes) == len(s.Fields) {
		// The index knows each field's numeric types: a field returned
		// by the projection gives numbers back in their one type, or
		// the plan fetches (a field that held several numeric types).
		cv.numAs = make([]bson.Type, len(s.Fields))
		cv.numSets = ix.NumTypes
		for i, n := range cv.needs {
			if n != needOutput {
				continue
			}
			t, ok := index.ExactNumType(ix.NumTypes[i])
			if !ok {
				return p
			}
			cv.numAs[i] = t
		}
	}
	c := *p
	c.Covered = cv
	return &c
}

// contiguousPrefixes reports whether fields sharing a parent path are
// adjacent in the key, so that rebuilding opens each sub-document once.
func contiguousPrefixes(fields []index.Field) bool {
	cp := func(a, b []string) int {
		n := 0
		for n < len(a)-1 && n < len(b)-1 && a[n] == b[n] {
			n++
		}
		return n
	}
	for i := range fields {
		for j := i + 1; j < len(fields); j++ {
			for k := j + 1; k < len(fields); k++ {
				if cp(fields[i].Parts, fields[k].Parts) > cp(fields[i].Parts, fields[j].Parts) {
					return false
				}
			}
		}
	}
	return true
}

// coverableFilter reports whether filter reads only plain field paths with
// operators whose result does not depend on a number's BSON type, and
// appends those paths.
func coverableFilter(filter bson.Doc, paths *[]string) bool {
	it := filter.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "$and", "$or", "$nor":
			if e.Value.Type != bson.TypeArray {
				return false
			}
			ai := e.Value.Document().Iter()
			for ai.Next() {
				sub := ai.Element().Value
				if sub.Type != bson.TypeDocument || !coverableFilter(sub.Document(), paths) {
					return false
				}
			}
			continue
		case "$comment":
			continue
		}
		if strings.HasPrefix(e.Key, "$") || strings.Contains(e.Key, "$") {
			return false // $expr, $where, $jsonSchema, $text...
		}
		if e.Value.Type == bson.TypeDocument && !coverableOperators(e.Value.Document()) {
			return false
		}
		*paths = append(*paths, e.Key)
	}
	return true
}

// coverableOperators rejects the operators that see a number's type.
func coverableOperators(d bson.Doc) bool {
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "$type":
			return false
		case "$not":
			if e.Value.Type == bson.TypeDocument && !coverableOperators(e.Value.Document()) {
				return false
			}
		case "$elemMatch", "$mod", "$bitsAllSet", "$bitsAnySet", "$bitsAllClear", "$bitsAnyClear":
			return false
		}
	}
	return true
}

// coverableProjection returns the paths an inclusion projection of plain
// fields returns (with _id unless excluded); ok is false for any other
// projection.
func coverableProjection(proj bson.Doc) (paths []string, ok bool) {
	id := true
	it := proj.Iter()
	for it.Next() {
		e := it.Element()
		if strings.Contains(e.Key, "$") {
			return nil, false
		}
		var incl bool
		switch {
		case e.Value.Type == bson.TypeBoolean:
			incl = e.Value.Boolean()
		case e.Value.IsNumber():
			f, _ := e.Value.AsFloat64()
			incl = f != 0
		default:
			return nil, false // sub-projections, operators, literals
		}
		if e.Key == "_id" {
			id = incl
			continue
		}
		if !incl {
			return nil, false // an exclusion projection returns every other field
		}
		paths = append(paths, e.Key)
	}
	if len(paths) == 0 {
		return nil, false
	}
	if id {
		paths = append(paths, "_id")
	}
	return paths, true
}

// doc rebuilds from key the fields the query needs, with b reset to dst;
// ok is false when a needed value cannot be recovered exactly (the
// document must then be fetched).
func (cv *coverage) doc(b *bson.Builder, dst, key, ref []byte) (bson.Doc, bool) {
	// Decode the needed values first: the document is written with _id
	// first, as stored documents have it, then the others in key order.
	var local [8]bson.Value
	vals := local[:0]
	if cv.last >= len(local) {
		vals = make([]bson.Value, 0, cv.last+1)
	}
	rest := key
	idAt := -1
	for i := 0; i <= cv.last; i++ {
		v, r, err := bson.DecodeKey(rest)
		if err != nil {
			return nil, false
		}
		rest = r
		vals = append(vals, v)
		switch cv.needs[i] {
		case needNone:
			continue
		case needOutput:
			if cv.numAs != nil && isKeyNumber(v.Type) {
				if cv.numAs[i] == 0 {
					return nil, false
				}
			} else if !exactFromKey(v) {
				return nil, false
			}
		}
		if v.Type == bson.TypeNull || hasSymbol(v) {
			return nil, false // null may be a missing field
		}
		if len(cv.parts[i]) == 1 && cv.parts[i][0] == "_id" {
			idAt = i
		}
	}
	b.Reset(dst)
	if cv.idFromRef {
		id, rest, err := bson.DecodeKey(ref)
		if err != nil || len(rest) != 0 || (id.Type != bson.TypeObjectID && id.Type != bson.TypeString) {
			return nil, false
		}
		b.AppendValue("_id", id)
	}
	if idAt >= 0 && !cv.appendValue(b, idAt, vals[idAt]) {
		return nil, false
	}
	var open []string // the path of the open sub-documents
	for i, v := range vals {
		if cv.needs[i] == needNone || i == idAt {
			continue
		}
		parts := cv.parts[i]
		common := 0
		for common < len(open) && common < len(parts)-1 && open[common] == parts[common] {
			common++
		}
		for len(open) > common {
			b.End()
			open = open[:len(open)-1]
		}
		for _, p := range parts[len(open) : len(parts)-1] {
			b.StartDocument(p)
			open = append(open, p)
		}
		if !cv.appendValue(b, i, v) {
			return nil, false
		}
	}
	return b.Finish(), true
}

// appendValue appends component i's decoded value under its last path
// component, a number in the type the field's numbers have.
func (cv *coverage) appendValue(b *bson.Builder, i int, v bson.Value) bool {
	name := cv.parts[i][len(cv.parts[i])-1]
	if cv.needs[i] == needOutput && cv.numAs != nil && isKeyNumber(v.Type) {
		return index.AppendNumAs(b, name, v, cv.numAs[i])
	}
	b.AppendValue(name, v)
	return true
}

// isKeyNumber reports the types a number decodes to from a key.
func isKeyNumber(t bson.Type) bool {
	return t == bson.TypeInt32 || t == bson.TypeInt64 || t == bson.TypeDouble
}

// exactFromKey reports whether a decoded key value is the stored value
// itself: numbers lose their type, symbols become strings.
func exactFromKey(v bson.Value) bool {
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128, bson.TypeSymbol:
		return false
	case bson.TypeDocument, bson.TypeArray:
		it := v.Document().Iter()
		for it.Next() {
			if !exactFromKey(it.Element().Value) {
				return false
			}
		}
	case bson.TypeCodeWithScope:
		return false
	}
	return true
}

// hasSymbol reports a symbol anywhere in v (decoded as a string, which
// filters may treat differently).
func hasSymbol(v bson.Value) bool {
	switch v.Type {
	case bson.TypeSymbol, bson.TypeCodeWithScope:
		return true
	case bson.TypeDocument, bson.TypeArray:
		it := v.Document().Iter()
		for it.Next() {
			if hasSymbol(it.Element().Value) {
				return true
			}
		}
	}
	return false
}

// indexNamed is coll's index called name (nil: none).
func indexNamed(coll *catalog.Collection, name string) *catalog.Index {
	for i := range coll.Indexes {
		if coll.Indexes[i].Name == name {
			return &coll.Indexes[i]
		}
	}
	return nil
}
