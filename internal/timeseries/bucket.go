package timeseries

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/bsoncolumn"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Bucket is one bucket being built or grown: its measurements' fields as
// columns. Values may point into the stored bucket it was decoded from.
type Bucket struct {
	ID [12]byte
	// Start is the bucket's rounded start (ms since the epoch).
	Start   int64
	Meta    bson.Value // Type 0: the measurements have no meta value
	Count   int
	columns []column
	byName  map[string]int
	// size estimates the encoded size (bytes).
	size int
	// arena holds copies of the added values (a chunk never moves, so
	// that a bucket kept by the catalog does not point into requests).
	arena []byte
}

// column is one field's values by position (Type 0: missing there) and
// their smallest and largest value in BSON order.
type column struct {
	name   string
	vals   []bson.Value
	lo, hi bson.Value
}

// bound widens the column's bounds to v.
func (c *column) bound(v bson.Value) {
	if v.Type == 0 {
		return
	}
	if c.lo.Type == 0 || bson.Compare(v, c.lo) < 0 {
		c.lo = v
	}
	if c.hi.Type == 0 || bson.Compare(v, c.hi) > 0 {
		c.hi = v
	}
}

// own copies v's bytes into the bucket's arena.
func (b *Bucket) own(v bson.Value) bson.Value {
	n := len(v.Data)
	if cap(b.arena)-len(b.arena) < n {
		b.arena = make([]byte, 0, max(8192, n))
	}
	at := len(b.arena)
	b.arena = append(b.arena, v.Data...)
	v.Data = b.arena[at : at+n : at+n]
	return v
}

// clone is a copy of b that Add may grow without changing b (their
// values are shared, never written).
func (b *Bucket) clone() *Bucket {
	c := *b
	c.columns = make([]column, len(b.columns))
	for i, col := range b.columns {
		col.vals = slices.Clip(col.vals)
		c.columns[i] = col
	}
	c.byName = maps.Clone(b.byName)
	c.arena = nil
	return &c
}

// oidProcess and oidCounter make bucket _ids unique after their
// timestamp, as mongod's ObjectId generator.
var (
	oidProcess [5]byte
	oidCounter atomic.Uint32
)

func init() {
	var seed [8]byte
	_, _ = rand.Read(oidProcess[:])
	_, _ = rand.Read(seed[:])
	oidCounter.Store(binary.LittleEndian.Uint32(seed[:]))
}

// roundDown rounds t (ms) down to a multiple of rounding seconds.
func roundDown(t, rounding int64) int64 {
	r := rounding * 1000
	q := t / r
	if t%r < 0 {
		q--
	}
	return q * r
}

// NewBucket starts a bucket for meta whose first measurement is at t (ms).
func NewBucket(o *Options, meta bson.Value, t int64) *Bucket {
	b := &Bucket{Start: roundDown(t, o.Rounding), byName: map[string]int{}}
	b.Meta = b.own(meta) // the catalog may keep the bucket beyond the request
	binary.BigEndian.PutUint32(b.ID[:4], uint32(int32(b.Start/1000)))
	copy(b.ID[4:9], oidProcess[:])
	n := oidCounter.Add(1)
	b.ID[9], b.ID[10], b.ID[11] = byte(n>>16), byte(n>>8), byte(n)
	b.size = 200 + len(meta.Data)
	return b
}

// Holds reports whether a measurement at t (ms) belongs in the bucket's
// span.
func (b *Bucket) Holds(o *Options, t int64) bool {
	return t >= b.Start && t < b.Start+o.MaxSpan*1000
}

// Size is the bucket's estimated encoded size in bytes.
func (b *Bucket) Size() int { return b.size }

// Measurement is a measurement ready for a bucket: its time, its meta
// value and its other fields.
type Measurement struct {
	Doc  bson.Doc
	Time int64
	Meta bson.Value // Type 0: none
	// MetaKey identifies the meta value (its type and bytes).
	MetaKey string
}

// Prepare checks an inserted measurement (its timeField must be a date)
// and gives it an _id when it has none, with newID.
func Prepare(o *Options, d bson.Doc, newID func() [12]byte) (Measurement, error) {
	m := Measurement{Doc: d}
	tv, ok := d.Lookup(o.TimeField)
	if !ok || tv.Type != bson.TypeDateTime {
		return m, mongoerr.New(mongoerr.BadValue, "'%s' must be present and contain a valid BSON UTC datetime value", o.TimeField)
	}
	m.Time = tv.DateTime()
	if o.MetaField != "" {
		if mv, ok := d.Lookup(o.MetaField); ok {
			m.Meta = mv
			m.MetaKey = string(rune(mv.Type)) + string(mv.Data)
		}
	}
	if _, ok := d.Lookup("_id"); !ok {
		var b bson.Builder
		b.AppendObjectID("_id", newID())
		it := d.Iter()
		for it.Next() {
			b.AppendElement(it.Element())
		}
		m.Doc = b.Finish()
	}
	return m, nil
}

// MeasurementSize is what a measurement adds to a bucket, about.
func MeasurementSize(m Measurement) int { return len(m.Doc) + 8*m.Doc.Len() }

// Add appends a measurement (not its meta field) at the next position.
func (b *Bucket) Add(o *Options, m Measurement) {
	pos := b.Count
	b.Count++
	it := m.Doc.Iter()
	for it.Next() {
		e := it.Element()
		if o.MetaField != "" && e.Key == o.MetaField {
			continue
		}
		i, ok := b.byName[e.Key]
		if !ok {
			i = len(b.columns)
			name := strings.Clone(e.Key) // keys point into the request
			b.columns = append(b.columns, column{name: name})
			b.byName[name] = i
		}
		c := &b.columns[i]
		for len(c.vals) < pos {
			c.vals = append(c.vals, bson.Value{})
		}
		v := b.own(e.Value)
		c.vals = append(c.vals, v)
		c.bound(v)
		b.size += len(e.Value.Data) + len(strconv.Itoa(pos)) + 2
	}
}

// Encode builds the bucket document: compressed (control.version 2)
// when the bucket is closed (Closed), uncompressed (control.version 1)
// while it is open or when its values do not compress (MinKey, MaxKey
// or code with scope in a column, which BSONColumn does not hold).
func (b *Bucket) Encode(o *Options) bson.Doc {
	if b.Closed() {
		if d, err := b.encodeCompressed(o); err == nil {
			return d
		}
	}
	return b.encodeUncompressed(o)
}

// encodeUncompressed builds the control.version 1 bucket document.
func (b *Bucket) encodeUncompressed(o *Options) bson.Doc {
	var d bson.Builder
	d.Reset(make([]byte, 0, b.size+b.size/4))
	d.AppendObjectID("_id", b.ID)
	d.StartDocument("control")
	d.AppendInt32("version", 1)
	b.appendMinMax(o, &d)
	d.End()
	if b.Meta.Type != 0 {
		d.AppendValue("meta", b.Meta)
	}
	d.StartDocument("data")
	var key []byte
	for _, c := range b.columns {
		d.StartDocument(c.name)
		for i, v := range c.vals {
			if v.Type != 0 {
				key = strconv.AppendInt(key[:0], int64(i), 10)
				d.AppendValue(string(key), v)
			}
		}
		d.End()
	}
	d.End()
	return d.Finish()
}

// appendMinMax appends control.min and control.max: each field's smallest
// and largest value, the time's minimum being the bucket's start.
func (b *Bucket) appendMinMax(o *Options, d *bson.Builder) {
	for _, which := range []int{-1, 1} {
		if which < 0 {
			d.StartDocument("min")
		} else {
			d.StartDocument("max")
		}
		for _, c := range b.columns {
			best := c.lo
			if which > 0 {
				best = c.hi
			}
			if best.Type == 0 {
				continue
			}
			if which < 0 && c.name == o.TimeField {
				d.AppendDateTime(c.name, b.Start)
				continue
			}
			d.AppendValue(c.name, best)
		}
		d.End()
	}
}

// Decode reads a stored bucket (control.version 1 or 2) for more
// measurements; its values point into doc (or, for a compressed bucket,
// into memory of their own).
func Decode(o *Options, doc bson.Doc) (*Bucket, error) {
	b := &Bucket{byName: map[string]int{}, size: len(doc)}
	id, ok := doc.Lookup("_id")
	if !ok || id.Type != bson.TypeObjectID {
		return nil, fmt.Errorf("timeseries: bucket without an ObjectId _id")
	}
	b.ID = id.ObjectID()
	version, err := bucketVersion(doc)
	if err != nil {
		return nil, err
	}
	start, ok := doc.LookupPath("control", "min", o.TimeField)
	if !ok || start.Type != bson.TypeDateTime {
		return nil, fmt.Errorf("timeseries: bucket %x without control.min.%s", b.ID, o.TimeField)
	}
	b.Start = start.DateTime()
	if m, ok := doc.Lookup("meta"); ok {
		b.Meta = m
	}
	data, ok := doc.Lookup("data")
	if !ok || data.Type != bson.TypeDocument {
		return nil, fmt.Errorf("timeseries: bucket %x without data", b.ID)
	}
	if version == 2 {
		if err := b.decodeCompressed(data.Document()); err != nil {
			return nil, fmt.Errorf("timeseries: bucket %x: %w", b.ID, err)
		}
		return b, nil
	}
	it := data.Document().Iter()
	for it.Next() {
		e := it.Element()
		if e.Value.Type != bson.TypeDocument {
			return nil, fmt.Errorf("timeseries: bucket %x: data.%s is not an object", b.ID, e.Key)
		}
		c := column{name: e.Key}
		cit := e.Value.Document().Iter()
		for cit.Next() {
			ce := cit.Element()
			pos, err := strconv.Atoi(ce.Key)
			if err != nil || pos < len(c.vals) || pos > MaxCount*100 {
				return nil, fmt.Errorf("timeseries: bucket %x: data.%s has key %q out of order", b.ID, e.Key, ce.Key)
			}
			for len(c.vals) < pos {
				c.vals = append(c.vals, bson.Value{})
			}
			c.vals = append(c.vals, ce.Value)
			c.bound(ce.Value)
		}
		b.Count = max(b.Count, len(c.vals))
		b.byName[c.name] = len(b.columns)
		b.columns = append(b.columns, c)
	}
	return b, nil
}

// Unpacker turns buckets back into measurements.
type Unpacker struct {
	TimeField, MetaField string
	// Include, when not nil, lists the only fields to build (the
	// pipeline after the unpacking reads no others).
	Include map[string]bool
	cols    []unpackCol
	b       bson.Builder
	// For compressed buckets: a decoder and the values of each column.
	decoders []bsoncolumn.Decoder
	vals     [][]bson.Value
	names    []string
}

type unpackCol struct {
	name string
	it   bson.Iter
	pos  int // position of the next value; -1: no more
	val  bson.Value
}

func (c *unpackCol) advance() {
	for c.it.Next() {
		e := c.it.Element()
		if n, err := strconv.Atoi(e.Key); err == nil {
			c.pos, c.val = n, e.Value
			return
		}
	}
	c.pos = -1
}

// Unpack calls emit with each measurement of bucket, in position order:
// the time first, then the meta value, then the other fields as the
// bucket lists them. emit returning false stops it.
func (u *Unpacker) Unpack(bucket bson.Doc, emit func(bson.Doc) bool) error {
	data, ok := bucket.Lookup("data")
	if !ok || data.Type != bson.TypeDocument {
		return fmt.Errorf("timeseries: bucket without data")
	}
	version, err := bucketVersion(bucket)
	if err != nil {
		return err
	}
	var meta bson.Value
	if u.MetaField != "" && (u.Include == nil || u.Include[u.MetaField]) {
		meta, _ = bucket.Lookup("meta")
	}
	if version == 2 {
		return u.unpackCompressed(data.Document(), meta, emit)
	}
	u.cols = u.cols[:0]
	timeAt := -1
	it := data.Document().Iter()
	for it.Next() {
		e := it.Element()
		if e.Value.Type != bson.TypeDocument {
			continue
		}
		if e.Key != u.TimeField && u.Include != nil && !u.Include[e.Key] {
			continue
		}
		c := unpackCol{name: e.Key, it: e.Value.Document().Iter()}
		c.advance()
		if e.Key == u.TimeField {
			timeAt = len(u.cols)
		}
		u.cols = append(u.cols, c)
	}
	if timeAt < 0 {
		return nil
	}
	includeTime := u.Include == nil || u.Include[u.TimeField]
	for u.cols[timeAt].pos >= 0 {
		pos := u.cols[timeAt].pos
		u.b.Reset(nil)
		if includeTime {
			u.b.AppendValue(u.TimeField, u.cols[timeAt].val)
		}
		if meta.Type != 0 {
			u.b.AppendValue(u.MetaField, meta)
		}
		for i := range u.cols {
			c := &u.cols[i]
			if i == timeAt {
				continue
			}
			for c.pos >= 0 && c.pos < pos {
				c.advance() // a value at a position without a time
			}
			if c.pos == pos {
				u.b.AppendValue(c.name, c.val)
				c.advance()
			}
		}
		u.cols[timeAt].advance()
		if !emit(u.b.Finish()) {
			return nil
		}
	}
	return nil
}

// Rebuild is a bucket with _id id, start and meta holding only the
// measurements keep (unpacked measurements, in order).
func Rebuild(o *Options, id [12]byte, start int64, meta bson.Value, keep []bson.Doc) bson.Doc {
	return rebuilt(o, id, start, meta, keep).Encode(o)
}

func rebuilt(o *Options, id [12]byte, start int64, meta bson.Value, keep []bson.Doc) *Bucket {
	b := &Bucket{ID: id, Start: start, Meta: meta, byName: map[string]int{}}
	b.size = 200 + len(meta.Data)
	for _, d := range keep {
		m := Measurement{Doc: d, Meta: meta}
		if tv, ok := d.Lookup(o.TimeField); ok {
			m.Time = tv.DateTime()
		}
		b.Add(o, m)
	}
	return b
}

// WithMeta is bucket with its meta value replaced (Type 0: removed).
func WithMeta(bucket bson.Doc, meta bson.Value) bson.Doc {
	var b bson.Builder
	done := false
	it := bucket.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "meta":
			if meta.Type != 0 {
				b.AppendValue("meta", meta)
			}
			done = true
		case "data":
			if !done && meta.Type != 0 {
				b.AppendValue("meta", meta)
			}
			done = true
			b.AppendElement(e)
		default:
			b.AppendElement(e)
		}
	}
	return b.Finish()
}

// BucketID reads a bucket's _id and start (control.min of the time).
func BucketID(o *Options, bucket bson.Doc) (id [12]byte, start int64, ok bool) {
	v, ok1 := bucket.Lookup("_id")
	s, ok2 := bucket.LookupPath("control", "min", o.TimeField)
	if !ok1 || !ok2 || v.Type != bson.TypeObjectID || s.Type != bson.TypeDateTime {
		return id, 0, false
	}
	return v.ObjectID(), s.DateTime(), true
}
