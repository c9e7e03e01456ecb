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
