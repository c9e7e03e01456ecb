package timeseries

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// UnpackSpec is a $_internalUnpackBucket stage's specification.
type UnpackSpec struct {
	TimeField, MetaField string
	MaxSpan              int64
}

// ParseUnpackSpec reads {timeField, metaField, bucketMaxSpanSeconds};
// ok is false when the specification is not one.
func ParseUnpackSpec(v bson.Value) (UnpackSpec, bool) {
	var s UnpackSpec
	if v.Type != bson.TypeDocument {
		return s, false
	}
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "timeField":
			if e.Value.Type != bson.TypeString {
				return s, false
			}
			s.TimeField = e.Value.StringValue()
		case "metaField":
			if e.Value.Type != bson.TypeString {
				return s, false
			}
			s.MetaField = e.Value.StringValue()
		case "bucketMaxSpanSeconds":
			s.MaxSpan, _ = e.Value.AsInt64()
		default:
			return s, false
		}
	}
	return s, s.TimeField != "" && s.MaxSpan > 0
}

// Rewrite returns stages with a $match on the buckets in front of each
// $_internalUnpackBucket that a $match follows, holding the parts of the
// $match (and of the $matches right after it) that test the time or the
// meta value. The $matches stay where they are.
func Rewrite(stages []bson.Doc) []bson.Doc {
	var out []bson.Doc
	for i := 0; i < len(stages); i++ {
		key, val := first(stages[i])
		if key != UnpackStage {
			if out != nil {
				out = append(out, stages[i])
			}
			continue
		}
		spec, ok := ParseUnpackSpec(val)
		if !ok {
			if out != nil {
				out = append(out, stages[i])
			}
			continue
		}
		var preds []bson.Doc
		for j := i + 1; j < len(stages); j++ {
			k, v := first(stages[j])
			if k != "$match" || v.Type != bson.TypeDocument {
				break
			}
			preds = append(preds, spec.bucketPredicates(v.Document())...)
		}
		if len(preds) == 0 {
			if out != nil {
				out = append(out, stages[i])
			}
			continue
		}
		if out == nil {
			out = append([]bson.Doc(nil), stages[:i]...)
		}
		out = append(out, matchOf(preds), stages[i])
	}
	if out == nil {
		return stages
	}
	return out
}

func first(d bson.Doc) (string, bson.Value) {
	it := d.Iter()
	if !it.Next() {
		return "", bson.Value{}
	}
	return it.Element().Key, it.Element().Value
}

// matchOf is {$match: {$and: preds}} (or the one predicate).
func matchOf(preds []bson.Doc) bson.Doc {
	var b bson.Builder
	b.StartDocument("$match")
	if len(preds) == 1 {
		it := preds[0].Iter()
		for it.Next() {
			b.AppendElement(it.Element())
		}
	} else {
		b.StartArray("$and")
		for i, p := range preds {
			b.AppendDocument(bson.Index(i), p)
		}
		b.End()
	}
	b.End()
	return b.Finish()
}

// bucketPredicates translates the conjuncts of a measurement filter that
// bound the time or test the meta value into filters on buckets; every
// bucket holding a matching measurement matches them.
func (s UnpackSpec) bucketPredicates(filter bson.Doc) []bson.Doc {
	var out []bson.Doc
	it := filter.Iter()
	for it.Next() {
		e := it.Element()
		switch {
		case e.Key == "$and":
			if e.Value.Type != bson.TypeArray {
				continue
			}
			ait := e.Value.Document().Iter()
			for ait.Next() {
				if v := ait.Element().Value; v.Type == bson.TypeDocument {
					out = append(out, s.bucketPredicates(v.Document())...)
				}
			}
		case e.Key == s.TimeField:
			out = append(out, s.timePredicates(e.Value)...)
		case s.MetaField != "" && (e.Key == s.MetaField || strings.HasPrefix(e.Key, s.MetaField+".")):
			// Every measurement of a bucket has the bucket's meta value,
			// so any predicate on it means the same on the bucket.
			var b bson.Builder
			b.AppendValue("meta"+strings.TrimPrefix(e.Key, s.MetaField), e.Value)
			out = append(out, b.Finish())
		}
	}
	return out
}

// timePredicates bounds control.min/max of the time for a predicate on the
// time: a bucket's measurements lie in [control.min, control.max].
func (s UnpackSpec) timePredicates(v bson.Value) []bson.Doc {
	minF, maxF := "control.min."+s.TimeField, "control.max."+s.TimeField
	one := func(field, op string, d bson.Value) bson.Doc {
		var b bson.Builder
		b.StartDocument(field)
		b.AppendValue(op, d)
		b.End()
		return b.Finish()
	}
	if v.Type == bson.TypeDateTime {
		return []bson.Doc{one(minF, "$lte", v), one(maxF, "$gte", v)}
	}
	if v.Type != bson.TypeDocument {
		return nil
	}
	var out []bson.Doc
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		if e.Value.Type != bson.TypeDateTime {
			continue
		}
		switch e.Key {
		case "$eq":
			out = append(out, one(minF, "$lte", e.Value), one(maxF, "$gte", e.Value))
		case "$gt":
			out = append(out, one(maxF, "$gt", e.Value))
		case "$gte":
			out = append(out, one(maxF, "$gte", e.Value))
		case "$lt":
			out = append(out, one(minF, "$lt", e.Value))
		case "$lte":
			out = append(out, one(minF, "$lte", e.Value))
		}
	}
	return out
}

// BucketFilter is a filter on buckets that every bucket holding a
// measurement matching filter matches (an empty document when none of
// filter bounds the buckets).
func (o *Options) BucketFilter(filter bson.Doc) bson.Doc {
	s := UnpackSpec{TimeField: o.TimeField, MetaField: o.MetaField, MaxSpan: o.MaxSpan}
	preds := s.bucketPredicates(filter)
	if len(preds) == 0 {
		return bson.EmptyDoc
	}
	m := matchOf(preds)
	v, _ := m.Lookup("$match")
	return v.Document()
}

// MetaOnly reports whether filter tests nothing but the metaField (and
// its subfields), as an update's filter on a time-series collection must.
func (o *Options) MetaOnly(filter bson.Doc) bool {
	it := filter.Iter()
	for it.Next() {
		e := it.Element()
		switch {
		case e.Key == "$and" || e.Key == "$or" || e.Key == "$nor":
			if e.Value.Type != bson.TypeArray {
				return false
			}
			ait := e.Value.Document().Iter()
			for ait.Next() {
				v := ait.Element().Value
				if v.Type != bson.TypeDocument || !o.MetaOnly(v.Document()) {
					return false
				}
			}
		case e.Key == "$comment":
		case o.MetaField != "" && (e.Key == o.MetaField || strings.HasPrefix(e.Key, o.MetaField+".")):
		default:
			return false
		}
	}
	return true
}

// UpdateError checks an update statement on a time-series collection as
// MongoDB 7.0 does: multi, no upsert, an operator update that changes
// only the metaField (its $rename too). It returns nil when allowed.
func (o *Options) UpdateError(u bson.Value, multi, upsert bool) error {
	if !multi {
		return mongoerr.New(mongoerr.InvalidOptions, "Cannot perform a non-multi update on a time-series collection")
	}
	if upsert {
		return mongoerr.New(mongoerr.InvalidOptions, "Cannot perform an upsert on a time-series collection")
	}
	if u.Type == bson.TypeArray {
		return mongoerr.New(mongoerr.InvalidOptions, "Cannot perform an update on a time-series collection using a pipeline update")
	}
	if u.Type != bson.TypeDocument {
		return nil // the update's own parsing answers
	}
	notMeta := mongoerr.New(mongoerr.InvalidOptions, "Cannot perform an update on a time-series collection which updates a field that is not the metaField '%s'", o.MetaField)
	isMeta := func(f string) bool {
		return o.MetaField != "" && (f == o.MetaField || strings.HasPrefix(f, o.MetaField+"."))
	}
	it := u.Document().Iter()
	for it.Next() {
		e := it.Element()
		if !strings.HasPrefix(e.Key, "$") {
			return mongoerr.New(mongoerr.InvalidOptions, "Cannot perform an update on a time-series collection using a replacement document")
		}
		if e.Value.Type != bson.TypeDocument {
			continue
		}
		fit := e.Value.Document().Iter()
		for fit.Next() {
			f := fit.Element()
			if !isMeta(f.Key) {
				return notMeta
			}
			if e.Key == "$rename" && (f.Value.Type != bson.TypeString || !isMeta(f.Value.StringValue())) {
				return notMeta
			}
		}
	}
	return nil
}

// NotMetaQueryError is MongoDB's refusal of an update filter on other
// fields than the metaField.
func (o *Options) NotMetaQueryError() error {
	return mongoerr.New(mongoerr.InvalidOptions, "Cannot perform an update or delete on a time-series collection when querying on a field that is not the metaField '%s'", o.MetaField)
}

// MetaDoc is the measurement-shaped document {<metaField>: meta} that a
// meta-only filter or update applies to (empty without a meta value).
func (o *Options) MetaDoc(meta bson.Value) bson.Doc {
	var b bson.Builder
	if meta.Type != 0 && o.MetaField != "" {
		b.AppendValue(o.MetaField, meta)
	}
	return b.Finish()
}
