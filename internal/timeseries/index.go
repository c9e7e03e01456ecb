package timeseries

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Index keys on a time-series collection are built on its buckets
// collection, translated as mongod's
// createBucketsIndexSpecFromTimeseriesIndexSpec does:
//
//	{<metaField>.a: 1}  → {meta.a: 1}      (any direction or type)
//	{<time or field>: 1}  → {control.min.<f>: 1, control.max.<f>: 1}
//	{<time or field>: -1} → {control.max.<f>: -1, control.min.<f>: -1}
//
// listIndexes on the collection translates back (UserIndexKey).

// BucketIndexKey translates an index key on the collection to the key
// on its buckets.
func (o *Options) BucketIndexKey(key bson.Doc) (bson.Doc, error) {
	var b bson.Builder
	it := key.Iter()
	for it.Next() {
		e := it.Element()
		if o.MetaField != "" && (e.Key == o.MetaField || strings.HasPrefix(e.Key, o.MetaField+".")) {
			b.AppendValue("meta"+strings.TrimPrefix(e.Key, o.MetaField), e.Value)
			continue
		}
		dir := 0
		if e.Value.IsNumber() {
			if f, _ := e.Value.AsFloat64(); f > 0 {
				dir = 1
			} else if f < 0 {
				dir = -1
			}
		}
		if dir == 0 {
			return nil, mongoerr.New(mongoerr.CannotCreateIndex, "Invalid index spec for time-series collection: %s. Indexes on measurement fields are only supported in ascending (1) or descending (-1) order, or on the metaField", key.String())
		}
		if dir > 0 {
			b.AppendInt32("control.min."+e.Key, 1)
			b.AppendInt32("control.max."+e.Key, 1)
		} else {
			b.AppendInt32("control.max."+e.Key, -1)
			b.AppendInt32("control.min."+e.Key, -1)
		}
	}
	return b.Finish(), nil
}

// UserIndexKey translates a buckets index key back to the key on the
// collection; ok is false for a key that is no translation of one.
func (o *Options) UserIndexKey(key bson.Doc) (bson.Doc, bool) {
	var b bson.Builder
	els := key.Elements()
	for i := 0; i < len(els); i++ {
		e := els[i]
		switch {
		case e.Key == "meta" || strings.HasPrefix(e.Key, "meta."):
			if o.MetaField == "" {
				return nil, false
			}
			b.AppendValue(o.MetaField+strings.TrimPrefix(e.Key, "meta"), e.Value)
		case strings.HasPrefix(e.Key, "control.min.") || strings.HasPrefix(e.Key, "control.max."):
			if i+1 >= len(els) {
				return nil, false
			}
			f := e.Key[len("control.min."):]
			n := els[i+1]
			dir, _ := e.Value.AsFloat64()
			switch {
			case strings.HasPrefix(e.Key, "control.min.") && dir > 0 && n.Key == "control.max."+f:
				b.AppendInt32(f, 1)
			case strings.HasPrefix(e.Key, "control.max.") && dir < 0 && n.Key == "control.min."+f:
				b.AppendInt32(f, -1)
			default:
				return nil, false
			}
			i++
		default:
			return nil, false
		}
	}
	return b.Finish(), true
}

// DefaultIndex is the index mongod 6.3+ creates with a collection that
// has a metaField: {meta: 1, control.min.time: 1, control.max.time: 1},
// named for the user's key {<metaField>: 1, <timeField>: 1}; nil without
// a metaField.
func (o *Options) DefaultIndex() (key bson.Doc, name string) {
	if o.MetaField == "" {
		return nil, ""
	}
	var b bson.Builder
	b.AppendInt32("meta", 1)
	b.AppendInt32("control.min."+o.TimeField, 1)
	b.AppendInt32("control.max."+o.TimeField, 1)
	return b.Finish(), o.MetaField + "_1_" + o.TimeField + "_1"
}

// BucketIndexSpec translates a createIndexes specification on the
// collection into one on its buckets: the key (BucketIndexKey), and
// mongod 7.0's refusals of unique and partial indexes.
func (o *Options) BucketIndexSpec(spec bson.Doc) (bson.Doc, error) {
	var b bson.Builder
	it := spec.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "key":
			if e.Value.Type != bson.TypeDocument {
				b.AppendElement(e)
				continue
			}
			k, err := o.BucketIndexKey(e.Value.Document())
			if err != nil {
				return nil, err
			}
			b.AppendDocument("key", k)
		case "unique":
			if e.Value.Truthy() {
				return nil, mongoerr.New(mongoerr.InvalidOptions, "Unique indexes are not supported on time-series collections")
			}
			b.AppendElement(e)
		case "partialFilterExpression":
			return nil, mongoerr.New(mongoerr.NotImplemented, "Cairn does not support partial indexes on time-series collections")
		default:
			b.AppendElement(e)
		}
	}
	return b.Finish(), nil
}

// BucketIndexChange translates collMod's index.keyPattern on the
// collection to the buckets' key (left as given when it does not
// translate: the index is then not found).
func (o *Options) BucketIndexChange(change bson.Doc) bson.Doc {
	var b bson.Builder
	it := change.Iter()
	for it.Next() {
		e := it.Element()
		if e.Key == "keyPattern" && e.Value.Type == bson.TypeDocument {
			if k, err := o.BucketIndexKey(e.Value.Document()); err == nil {
				b.AppendDocument(e.Key, k)
				continue
			}
		}
		b.AppendElement(e)
	}
	return b.Finish()
}

// UserIndexSpec translates a buckets index specification for
// listIndexes on the collection (UserIndexKey); ok is false for an index
// whose key does not translate back.
func (o *Options) UserIndexSpec(spec bson.Doc) (bson.Doc, bool) {
	var b bson.Builder
	it := spec.Iter()
	for it.Next() {
		e := it.Element()
		if e.Key == "key" && e.Value.Type == bson.TypeDocument {
			k, ok := o.UserIndexKey(e.Value.Document())
			if !ok {
				return nil, false
			}
			b.AppendDocument("key", k)
			continue
		}
		b.AppendElement(e)
	}
	return b.Finish(), true
}
