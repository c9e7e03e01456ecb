package timeseries

// Compressed buckets (control.version 2), as mongod 7.0 writes them:
//
//	{_id, control: {version: 2, min: {...}, max: {...}, count: n},
//	 meta: <meta value>,
//	 data: {<field>: BinData(7, <BSONColumn>), ...}}
//
// Each column holds count values, one per measurement (a skip where the
// measurement lacks the field), in time order: compressing sorts the
// measurements by time (stably), as mongod does. A bucket is compressed
// when it is written closed (Closed: full by count or size), so that the
// bucket still taking measurements stays uncompressed; a compressed bucket
// that is reopened for a measurement (out-of-order data) or rewritten
// without deleted measurements is decompressed, and written back
// uncompressed unless it is still closed (deletes keep a compressed
// bucket compressed: RebuildLike).

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/bsoncolumn"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// bucketVersion is a bucket's control.version, 1 or 2.
func bucketVersion(bucket bson.Doc) (int64, error) {
	v, ok := bucket.LookupPath("control", "version")
	if !ok {
		return 1, nil
	}
	n, _ := v.AsInt64()
	if n != 1 && n != 2 {
		return 0, mongoerr.New(mongoerr.TimeseriesBucketCompressionFailed, "Cairn does not read time-series buckets of control.version %d", n)
	}
	return n, nil
}

// Closed reports whether the bucket takes no more measurements: it holds
// MaxCount of them, or one more of their average size would pass
// MaxSize. A closed bucket is stored compressed.
func (b *Bucket) Closed() bool {
	return b.Count >= MaxCount || (b.Count > 0 && b.size+b.size/b.Count > MaxSize)
}

// encodeCompressed builds the control.version 2 bucket document.
func (b *Bucket) encodeCompressed(o *Options) (bson.Doc, error) {
	// Positions in time order.
	order := make([]int, b.Count)
	for i := range order {
		order[i] = i
	}
	if t, ok := b.byName[o.TimeField]; ok {
		times := b.columns[t].vals
		at := func(i int) (int64, bool) {
			if i < len(times) && times[i].Type == bson.TypeDateTime {
				return times[i].DateTime(), true
			}
			return 0, false
		}
		slices.SortStableFunc(order, func(x, y int) int {
			tx, okx := at(x)
			ty, oky := at(y)
			switch {
			case okx != oky: // without a time: last
				if okx {
					return -1
				}
				return 1
			case tx < ty:
				return -1
			case tx > ty:
				return 1
			}
			return 0
		})
	}
	var d bson.Builder
	d.AppendObjectID("_id", b.ID)
	d.StartDocument("control")
	d.AppendInt32("version", 2)
	b.appendMinMax(o, &d)
	d.AppendInt32("count", int32(b.Count))
	d.End()
	if b.Meta.Type != 0 {
		d.AppendValue("meta", b.Meta)
	}
	d.StartDocument("data")
	vals := make([]bson.Value, b.Count)
	for _, c := range b.columns {
		for j, i := range order {
			vals[j] = bson.Value{}
			if i < len(c.vals) {
				vals[j] = c.vals[i]
			}
		}
		col, err := bsoncolumn.Encode(vals)
		if err != nil {
			return nil, fmt.Errorf("timeseries: compressing data.%s: %w", c.name, err)
		}
		d.AppendBinary(c.name, bsoncolumn.Subtype, col)
	}
	d.End()
	return d.Finish(), nil
}

// decodeCompressed reads the columns of a compressed bucket's data.
func (b *Bucket) decodeCompressed(data bson.Doc) error {
	b.size = 200 + len(b.Meta.Data)
	it := data.Iter()
	for it.Next() {
		e := it.Element()
		col, err := columnBinary(e)
		if err != nil {
			return err
		}
		vals, err := bsoncolumn.Decode(nil, col)
		if err != nil {
			return fmt.Errorf("data.%s: %w", e.Key, err)
		}
		if len(vals) > MaxCount*100 {
			return fmt.Errorf("data.%s holds %d values", e.Key, len(vals))
		}
		c := column{name: e.Key, vals: vals}
		for i, v := range vals {
			if v.Type != 0 {
				b.size += len(v.Data) + len(strconv.Itoa(i)) + 2
				c.bound(v)
			}
		}
		b.Count = max(b.Count, len(vals))
		b.byName[e.Key] = len(b.columns)
		b.columns = append(b.columns, c)
	}
	return nil
}

// columnBinary is the BSONColumn of a compressed bucket's data field.
func columnBinary(e bson.Element) ([]byte, error) {
	if e.Value.Type != bson.TypeBinary {
		return nil, fmt.Errorf("data.%s is not a BSONColumn binary", e.Key)
	}
	sub, col := e.Value.Binary()
	if sub != bsoncolumn.Subtype {
		return nil, fmt.Errorf("data.%s is a binary of subtype %d, not a BSONColumn", e.Key, sub)
	}
	return col, nil
}

// unpackCompressed is Unpack for a compressed bucket's data.
func (u *Unpacker) unpackCompressed(data bson.Doc, meta bson.Value, emit func(bson.Doc) bool) error {
	names := u.names[:0]
	n := 0
	timeAt := -1
	it := data.Iter()
	for it.Next() {
		e := it.Element()
		if e.Key != u.TimeField && u.Include != nil && !u.Include[e.Key] {
			continue
		}
		col, err := columnBinary(e)
		if err != nil {
			return fmt.Errorf("timeseries: %w", err)
		}
		if n == len(u.decoders) {
			u.decoders = append(u.decoders, bsoncolumn.Decoder{})
			u.vals = append(u.vals, nil)
		}
		u.vals[n], err = u.decoders[n].Decode(u.vals[n][:0], col)
		if err != nil {
			return fmt.Errorf("timeseries: data.%s: %w", e.Key, err)
		}
		if e.Key == u.TimeField {
			timeAt = n
		}
		names = append(names, e.Key)
		n++
	}
	u.names = names
	if timeAt < 0 {
		return nil
	}
	includeTime := u.Include == nil || u.Include[u.TimeField]
	for pos, tv := range u.vals[timeAt] {
		if tv.Type == 0 {
			continue
		}
		u.b.Reset(nil)
		if includeTime {
			u.b.AppendValue(u.TimeField, tv)
		}
		if meta.Type != 0 {
			u.b.AppendValue(u.MetaField, meta)
		}
		for i := 0; i < n; i++ {
			if i == timeAt || pos >= len(u.vals[i]) {
				continue
			}
			if v := u.vals[i][pos]; v.Type != 0 {
				u.b.AppendValue(names[i], v)
			}
		}
		if !emit(u.b.Finish()) {
			return nil
		}
	}
	return nil
}

// BucketCount is how many measurements a bucket holds: control.count of
// a compressed bucket, the length of the time column of another.
func BucketCount(bucket bson.Doc, timeField string) int {
	if v, err := bucketVersion(bucket); err == nil && v == 2 {
		if c, ok := bucket.LookupPath("control", "count"); ok {
			if n, ok := c.AsInt64(); ok {
				return int(n)
			}
		}
		tv, ok := bucket.LookupPath("data", timeField)
		if !ok {
			return 0
		}
		col, err := columnBinary(bson.Element{Key: timeField, Value: tv})
		if err != nil {
			return 0
		}
		vals, err := bsoncolumn.Decode(nil, col)
		if err != nil {
			return 0
		}
		n := 0
		for _, v := range vals {
			if v.Type != 0 {
				n++
			}
		}
		return n
	}
	col, ok := bucket.LookupPath("data", timeField)
	if !ok || col.Type != bson.TypeDocument {
		return 0
	}
	return col.Document().Len()
}

// RebuildLike is bucket old (its _id, start and meta) holding only the
// measurements keep (unpacked measurements, in order), compressed when
// old was.
func RebuildLike(o *Options, old bson.Doc, keep []bson.Doc) (bson.Doc, error) {
	id, start, ok := BucketID(o, old)
	if !ok {
		return nil, fmt.Errorf("timeseries: malformed bucket")
	}
	meta, _ := old.Lookup("meta")
	b := rebuilt(o, id, start, meta, keep)
	if v, err := bucketVersion(old); err == nil && v == 2 && b.Count > 0 {
		if d, err := b.encodeCompressed(o); err == nil {
			return d, nil
		}
	}
	return b.Encode(o), nil
}
