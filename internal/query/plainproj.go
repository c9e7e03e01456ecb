package query

import "github.com/cairndb/cairn/bson"

// Plain projections: the find projections that only keep or drop whole
// top-level fields ({_id: 0, field0: 1, …, field9: 1}, the projection
// every YCSB read and scan sends, or {secret: 0}). They need none of
// ParseProjection's machinery (path trees, expressions, positional and
// $slice/$elemMatch operators), so the express find path recognises them
// with one pass over the spec, allocating nothing, and applies them with
// one pass over the document. A cache keyed by the spec's bytes would not
// serve YCSB: its binding builds the projection from a Go map, so every
// request lists the same fields in a different order.
//
// Anything else (dotted or $-prefixed names, values that are not booleans
// or numbers, decimals, a mix of inclusions and exclusions besides _id,
// repeated names, more than maxPlainFields names) is not plain, and the
// caller takes the general path, which also reports the errors.
// ParseProjection also recognises them and applies a find's plain
// projection this way (Projection.plain), so that a scan's projected
// documents (YCSB's workload E) skip the path tree too.

// maxPlainFields bounds the names a plain projection holds, so that
// applying it stays a short linear scan.
const maxPlainFields = 32

// PlainProjection is a parsed plain projection. Its names point into the
// spec, which must outlive it.
type PlainProjection struct {
	inclusion bool
	keepID    bool
	n         int
	names     [maxPlainFields]string
}

// Reset makes p the projection that keeps whole documents.
func (p *PlainProjection) Reset() { p.inclusion, p.keepID, p.n = false, true, 0 }

// ParsePlainProjection parses spec into p and reports whether spec is a
// plain projection. An empty spec is plain and keeps whole documents.
func ParsePlainProjection(spec bson.Doc, p *PlainProjection) bool {
	p.Reset()
	typeSet, idSet := false, false
	it := spec.Iter()
	for it.Next() {
		e := it.Element()
		if !plainName(e.Key) {
			return false
		}
		var keep bool
		switch e.Value.Type {
		case bson.TypeBoolean, bson.TypeInt32, bson.TypeInt64:
			keep = e.Value.Truthy()
		case bson.TypeDouble:
			if f := e.Value.Double(); f != f {
				return false // NaN: leave its meaning to the general parser
			}
			keep = e.Value.Truthy()
		default:
			return false
		}
		if e.Key == "_id" {
			if idSet {
				return false
			}
			idSet, p.keepID = true, keep
			continue
		}
		if typeSet && keep != p.inclusion {
			return false // mixed: the general path answers the error
		}
		typeSet, p.inclusion = true, keep
		if p.n == maxPlainFields || p.has(e.Key) {
			return false
		}
		p.names[p.n] = e.Key
		p.n++
	}
	if it.Corrupt() {
		return false
	}
	if !typeSet {
		// {_id: 1} alone keeps only _id; {_id: 0} drops it.
		p.inclusion = idSet && p.keepID
	}
	return true
}

// plainName reports whether a projection key names a top-level field.
func plainName(k string) bool {
	if k == "" || k[0] == '$' {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] == '.' || k[i] == 0 {
			return false
		}
	}
	return true
}

func (p *PlainProjection) has(k string) bool {
	for _, n := range p.names[:p.n] {
		if n == k {
			return true
		}
	}
	return false
}

// Whole reports whether the projection returns documents unchanged.
func (p *PlainProjection) Whole() bool { return !p.inclusion && p.n == 0 && p.keepID }

// AppendTo appends doc, projected, to b as the document field key, with
// its fields in the document's order.
func (p *PlainProjection) AppendTo(b *bson.Builder, key string, doc bson.Doc) {
	if p.Whole() {
		b.AppendDocument(key, doc)
		return
	}
	b.StartDocument(key)
	p.appendFields(b, doc)
	b.End()
}

// appendFields appends the fields of doc the projection keeps to the
// document b is building.
func (p *PlainProjection) appendFields(b *bson.Builder, doc bson.Doc) {
	it := doc.Iter()
	for it.Next() {
		e := it.Element()
		var keep bool
		if e.Key == "_id" {
			keep = p.keepID
		} else {
			keep = p.has(e.Key) == p.inclusion
		}
		if keep {
			b.AppendElement(e)
		}
	}
}
