package exec

// find's min, max, returnKey and showRecordId, as mongod 7.0 runs them.
//
// min and max bound the scan of the hinted index by index keys rather than
// by a filter: min is the inclusive lower bound, max the exclusive upper
// bound, each a document with the index's fields in its key pattern's order
// (values in the index's order, so a descending field runs high to low). The
// filter still applies to what the scan returns. mongod's checks are kept:
// a hint is required (51173), the bounds must name the hinted index's fields
// in order (51174), and min must come before max (51175).
//
// returnKey replaces each result with its index key, {field: value} for
// each field of the key pattern of the index the plan reads (the _id index
// when the scan is in _id order: a sort on _id, an _id range or equality);
// a collection scan returns empty documents. Keys are rebuilt from the
// document: for a multikey index, the element of the array that comes
// first in the index's order; for a hashed field, its hash (mongod returns
// the index entry that matched, which may be another element).
//
// showRecordId adds $recordId (but not under returnKey, whose results are
// the key alone, as mongod's): a capped collection's record id (NumberLong,
// as mongod's record ids), or, for the others, whose documents are keyed by
// _id as a clustered collection's are in mongod, the data tree key of the
// document as BinData (mongod shows a clustered collection's record id as
// the BinData of its _id's KeyString; Cairn's key encoding differs).

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// HasMinMax reports whether the find has min or max.
func (spec *FindSpec) HasMinMax() bool { return spec.Min != nil || spec.Max != nil }

// decorated reports whether returnKey or showRecordId changes the results.
func (spec *FindSpec) decorated() bool { return spec.ReturnKey || spec.ShowRecordID }

// MinMaxPlan is the plan of a find with min or max: the hinted index's
// keys from min (inclusive) to max (exclusive); when the hinted index is
// the _id index that the data tree is, the plan is nil and idRange bounds
// the collection scan instead.
func MinMaxPlan(coll *catalog.Collection, spec *FindSpec) (p *Plan, idRange *index.KeyRange, err error) {
	if spec.Hint.Type == 0 {
		return nil, nil, mongoerr.New(mongoerr.MinMaxRequireHint, "When using min()/max() a hint of which index to use must be provided")
	}
	if coll == nil {
		return nil, nil, nil
	}
	var ix *catalog.Index
	for i := range coll.Indexes {
		c := &coll.Indexes[i]
		if !c.Ready {
			continue
		}
		key, _ := c.Spec.Lookup("key")
		if (spec.Hint.Type == bson.TypeString && c.Name == spec.Hint.StringValue()) ||
			(spec.Hint.Type == bson.TypeDocument && bson.Equal(key, spec.Hint)) {
			ix = c
			break
		}
	}
	notCompatible := mongoerr.New(mongoerr.MinMaxIndexNotCompatible, "The index chosen is not compatible with min/max")
	if ix == nil {
		return nil, nil, notCompatible // {$natural: 1}
	}
	s, err := index.ParseCached(ix.Spec)
	if err != nil {
		return nil, nil, err
	}
	if s.Text != nil || s.IsGeo() || s.Wildcard != nil {
		return nil, nil, notCompatible
	}
	r, err := s.MinMaxRange(spec.Min, spec.Max)
	if err != nil {
		return nil, nil, err
	}
	if ix.IsID() && ScansByID(coll) {
		return nil, &r, nil
	}
	return &Plan{Index: ix.Name, Spec: s, Ranges: []index.KeyRange{r}, Dedupe: ix.Multikey}, nil, nil
}

// decorate applies returnKey and showRecordId to one result: out is the
// projected document, orig the stored one, dataKey its data tree key.
func (s *ScanSource) decorate(out, orig bson.Doc, dataKey []byte, coll *catalog.Collection) (bson.Doc, error) {
	spec := s.Spec
	var b bson.Builder
	b.Reset(s.decoBuf[:0])
	if spec.ReturnKey {
		if ks := s.keySpec(coll); ks != nil {
			appendReturnKey(&b, ks, orig)
		}
	} else {
		it := out.Iter()
		for it.Next() {
			b.AppendElement(it.Element())
		}
	}
	if spec.ShowRecordID && !spec.ReturnKey { // returnKey shows the key alone, as mongod
		if rid, ok := catalog.RecordID(dataKey); ok && coll.Capped {
			b.AppendInt64("$recordId", int64(rid))
		} else {
			b.AppendBinary("$recordId", 0, dataKey)
		}
	}
	d := b.Finish()
	s.decoBuf = d
	return d, nil
}

// keySpec is the index whose keys returnKey shows (nil: a collection
// scan, which has none).
func (s *ScanSource) keySpec(coll *catalog.Collection) *index.Spec {
	p := s.Plan
	if p != nil && p.Or != nil {
		if s.Walk.branch >= len(p.Or) {
			return nil
		}
		p = p.Or[s.Walk.branch]
	}
	if p != nil {
		return p.Spec
	}
	_, byID := s.Spec.Filter.IDEquality()
	if coll.Clustered() || coll.Capped || !(byID || s.idr != nil || s.CollScanOnly) {
		return nil
	}
	spec, err := index.ParseCached(catalog.IDIndexSpec())
	if err != nil {
		return nil
	}
	return spec
}

// appendReturnKey appends d's key in index s: each key pattern field with
// its value (null when missing; the first element in index order for an
// array; the hash for a hashed field).
func appendReturnKey(b *bson.Builder, s *index.Spec, d bson.Doc) {
	if s.Text != nil || s.IsGeo() || s.Wildcard != nil {
		return
	}
	for _, f := range s.Fields {
		var first bson.Value
		found := false
		take := func(v bson.Value) {
			if !found {
				first, found = v, true
				return
			}
			c := bson.Compare(v, first)
			if (c < 0) != f.Desc && c != 0 {
				first = v
			}
		}
		PathValues(d, f.Parts, func(v bson.Value) {
			if v.Type == bson.TypeArray && !f.Hashed {
				it := v.Document().Iter()
				any := false
				for it.Next() {
					any = true
					take(it.Element().Value)
				}
				if !any {
					take(bson.Value{Type: bson.TypeUndefined})
				}
				return
			}
			take(v)
		})
		if !found {
			first = bson.Value{Type: bson.TypeNull}
		}
		if f.Hashed {
			b.AppendInt64(f.Path, index.HashedValue(first))
			continue
		}
		b.AppendValue(f.Path, first)
	}
}
