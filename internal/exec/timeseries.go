package exec

// Time-series collections (internal/timeseries) in the catalog: a view
// over a buckets collection, created, listed, written and expired here.
// The bucketing itself (which bucket a measurement joins, the bucket
// format, the predicates on buckets) is internal/timeseries'.

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/internal/timeseries"
)

// bucketCatalogs holds each engine's bucket catalog, by its kv database.
var bucketCatalogs sync.Map // *kv.DB → *timeseries.Catalog

// BucketCatalog is the engine's bucket catalog.
func (e *Engine) BucketCatalog() *timeseries.Catalog {
	if c, ok := bucketCatalogs.Load(e.KV); ok {
		return c.(*timeseries.Catalog)
	}
	c, _ := bucketCatalogs.LoadOrStore(e.KV, timeseries.NewCatalog())
	return c.(*timeseries.Catalog)
}

// Timeseries is a time-series collection as the catalog holds it.
type Timeseries struct {
	View, Buckets *catalog.Collection
	Opts          *timeseries.Options
	// Expire is expireAfterSeconds (-1: none).
	Expire int64
}

// TimeseriesOf returns db.name as a time-series collection, or nil when
// it is none (absent, a collection or an ordinary view).
func TimeseriesOf(tx *Tx, db, name string) (*Timeseries, error) {
	view, err := catalog.Get(tx, db, name)
	if err != nil {
		return nil, err
	}
	return TimeseriesOfCollection(tx, view)
}

// TimeseriesOfCollection returns the catalog entry view (nil: absent) as
// a time-series collection, or nil when it is none.
func TimeseriesOfCollection(tx *Tx, view *catalog.Collection) (*Timeseries, error) {
	if view == nil {
		return nil, nil
	}
	viewOn, _, ok := view.View()
	if !ok || viewOn != timeseries.BucketsName(view.Name) {
		return nil, nil
	}
	buckets, err := catalog.Get(tx, view.DB, viewOn)
	if err != nil || buckets == nil {
		return nil, err
	}
	o := timeseries.FromCollection(buckets.Options)
	if o == nil {
		return nil, nil
	}
	return &Timeseries{View: view, Buckets: buckets, Opts: o, Expire: buckets.ExpireAfterSeconds()}, nil
}

// TimeseriesCreate is create's request for a time-series collection.
type TimeseriesCreate struct {
	DB, Name string
	Opts     *timeseries.Options
	// Expire is expireAfterSeconds (-1: none).
	Expire int64
	// Collation is the collection's default collation (nil: simple).
	Collation bson.Doc
}

// bucketsOptions are the buckets collection's catalog options, as
// mongod's: {validator, clusteredIndex: true, timeseries,
// expireAfterSeconds}.
func bucketsOptions(o *timeseries.Options, expire int64, collation bson.Doc) bson.Doc {
	var b bson.Builder
	b.AppendDocument("validator", o.Validator())
	b.AppendBool("clusteredIndex", true)
	o.Append(&b, "timeseries")
	if expire >= 0 {
		b.AppendInt64("expireAfterSeconds", expire)
	}
	if collation != nil {
		b.AppendDocument("collation", collation)
	}
	return b.Finish()
}

// CreateTimeseries creates the time-series collection in tx: its buckets
// collection (with mongod's default index on meta and time when there is
// a metaField) and its view. Creating it again with the same options is
// no error, as in mongod.
func (e *Engine) CreateTimeseries(ctx context.Context, tx *Tx, r *TimeseriesCreate) error {
	if existing, err := catalog.Get(tx, r.DB, r.Name); err != nil {
		return err
	} else if existing != nil {
		ts, err := TimeseriesOf(tx, r.DB, r.Name)
		if err != nil {
			return err
		}
		if ts != nil && ts.Opts.Equal(r.Opts) && ts.Expire == r.Expire {
			return nil
		}
		return mongoerr.New(mongoerr.NamespaceExists, "A timeseries collection already exists. NS: %s.%s", r.DB, r.Name)
	}
	if strings.HasPrefix(r.Name, timeseries.BucketsPrefix) {
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid namespace: %s.%s", r.DB, r.Name)
	}
	bc, err := catalog.Create(tx, r.DB, timeseries.BucketsName(r.Name), bucketsOptions(r.Opts, r.Expire, r.Collation))
	if err != nil {
		if me := mongoerr.As(err); me != nil && me.Code == mongoerr.NamespaceExists {
			return mongoerr.New(mongoerr.NamespaceExists, "Cannot create a time-series collection %s.%s: its buckets collection exists", r.DB, r.Name)
		}
		return err
	}
	bc.Indexes = nil // clustered by _id: no _id index, as mongod's buckets
	if err := catalog.Put(tx, bc); err != nil {
		return err
	}
	if err := e.Oplog.Create(tx, bc); err != nil {
		return err
	}
	if key, name := r.Opts.DefaultIndex(); key != nil {
		var b bson.Builder
		b.AppendInt32("v", 2)
		b.AppendDocument("key", key)
		b.AppendString("name", name)
		if r.Collation != nil {
			b.AppendDocument("collation", r.Collation)
		}
		spec, err := index.Parse(b.Finish())
		if err != nil {
			return err
		}
		data, err := DataTree(tx, bc)
		if err != nil {
			return err
		}
		targets := []*index.BuildTarget{{Spec: spec, TreeName: bc.IndexTree(spec.Name)}}
		if err := index.BuildAllWith(ctx, tx, data, bc.Namespace(), targets, index.BuildOptions{TempDir: e.SpillDir()}); err != nil {
			return mongoerr.FromContext(err)
		}
		next := *bc
		next.Indexes = []catalog.Index{{Name: spec.Name, Spec: spec.Raw, Ready: true}}
		if err := catalog.Put(tx, &next); err != nil {
			return err
		}
		if err := e.Oplog.CreateIndex(tx, &next, spec.Raw); err != nil {
			return err
		}
	}
	view, err := catalog.CreateView(tx, r.DB, r.Name, bc.Name, r.Opts.ViewPipeline(), r.Collation)
	if err != nil {
		return err
	}
	return e.Oplog.Create(tx, view)
}

// DropTimeseries drops a time-series collection (its view and its
// buckets) in tx and returns the buckets' index count.
func (e *Engine) DropTimeseries(tx *Tx, ts *Timeseries) (int, error) {
	if err := catalog.Drop(tx, ts.View); err != nil {
		return 0, err
	}
	if err := e.Oplog.Drop(tx, ts.View); err != nil {
		return 0, err
	}
	if err := catalog.Drop(tx, ts.Buckets); err != nil {
		return 0, err
	}
	if err := e.Oplog.Drop(tx, ts.Buckets); err != nil {
		return 0, err
	}
	e.BucketCatalog().Forget(ts.Buckets.UUID)
	return len(ts.Buckets.Indexes), nil
}

// bucketStore is a buckets collection's writer as timeseries.Store.
type bucketStore struct {
	e   *Engine
	ctx context.Context
	w   *CollWriter
	key []byte
}

func oidValue(id [12]byte) bson.Value { return bson.Value{Type: bson.TypeObjectID, Data: id[:]} }

func (s *bucketStore) Get(id [12]byte) (bson.Doc, error) {
	s.key = DocKey(s.key[:0], oidValue(id))
	v, err := s.w.Data.Get(s.key)
	if err != nil || v == nil {
		return nil, err
	}
	return bson.Doc(append([]byte(nil), v...)), nil
}

func (s *bucketStore) Insert(doc bson.Doc) error {
	_, _, err := s.w.Insert(doc)
	return err
}

func (s *bucketStore) Replace(id [12]byte, old, updated bson.Doc) error {
	return s.w.Replace(DocKey(nil, oidValue(id)), old, updated)
}

// Reopen finds buckets for a measurement of meta at t through the
// buckets' index on meta and time when there is one (a scan otherwise).
func (s *bucketStore) Reopen(o *timeseries.Options, meta bson.Value, t int64) ([][12]byte, error) {
	var b bson.Builder
	if meta.Type != 0 {
		b.AppendValue("meta", meta)
	} else {
		b.StartDocument("meta")
		b.AppendBool("$exists", false)
		b.End()
	}
	b.StartDocument("control.min." + o.TimeField)
	b.AppendDateTime("$lte", t)
	b.AppendDateTime("$gt", t-o.MaxSpan*1000)
	b.End()
	wf, err := CompileWriteFilter(b.Finish(), &query.Options{})
	if err != nil {
		return nil, err
	}
	ms, err := s.e.SelectDocs(s.ctx, s.w.tx, s.w.Coll, s.w.Data, &wf, bson.Value{}, nil, 16)
	if err != nil {
		return nil, err
	}
	var ids [][12]byte
	for _, m := range ms {
		if len(ids) == 4 {
			break
		}
		if id, ok := m.Doc.Lookup("_id"); ok && id.Type == bson.TypeObjectID {
			ids = append(ids, id.ObjectID())
		}
	}
	return ids, nil
}

// InsertMeasurements puts measurements into the buckets through w (the
// buckets collection's writer).
func (e *Engine) InsertMeasurements(ctx context.Context, w *CollWriter, ts *Timeseries, ms []timeseries.Measurement) error {
	if len(ms) == 0 {
		return nil
	}
	return e.BucketCatalog().Insert(&bucketStore{e: e, ctx: ctx, w: w}, ts.Buckets.UUID, ts.Opts, ms)
}

// expireBuckets removes the buckets of buckets collection c (with
// options o) whose newest measurement is older than now - secs: the
// buckets that start before the cutoff are a range of the data tree (in
// _id order, and a bucket's _id starts with its start time).
func expireBuckets(ctx context.Context, e *Engine, c *catalog.Collection, o *timeseries.Options, secs int64, now time.Time) (int64, error) {
	cutoff := now.Add(-time.Duration(secs) * time.Second).UnixMilli()
	var lo, hi [12]byte
	s := cutoff / 1000
	if s <= 0 {
		return 0, nil
	}
	binary.BigEndian.PutUint32(hi[:4], uint32(min(s, 1<<32-1)))
	maxPath := []string{"control", "max", o.TimeField}
	return removeExpired(ctx, e, c, DocKey(nil, oidValue(lo)), DocKey(nil, oidValue(hi)), func(doc []byte) bool {
		v, ok := bson.Doc(doc).LookupPath(maxPath...)
		return ok && v.Type == bson.TypeDateTime && v.DateTime() < cutoff
	})
}

// TimeseriesCollMod applies collMod's timeseries and expireAfterSeconds
// options (nil: not given) to ts in tx.
func (e *Engine) TimeseriesCollMod(tx *Tx, ts *Timeseries, tsOpt, expire *bson.Value) error {
	o, expiry := ts.Opts, ts.Expire
	changed := false
	if tsOpt != nil {
		n, ch, err := o.CollMod(*tsOpt)
		if err != nil {
			return err
		}
		o, changed = n, ch
	}
	if expire != nil {
		switch {
		case expire.Type == bson.TypeString && expire.StringValue() == "off":
			expiry = -1
		case expire.IsNumber():
			n, _ := expire.AsInt64()
			if f, _ := expire.AsFloat64(); f < 0 {
				return mongoerr.New(mongoerr.InvalidOptions, "expireAfterSeconds must be a number or the string 'off'")
			}
			expiry = n
		default:
			return mongoerr.New(mongoerr.InvalidOptions, "expireAfterSeconds must be a number or the string 'off'")
		}
	}
	if !changed && expiry == ts.Expire {
		return nil
	}
	var collation bson.Doc
	if v, ok := ts.Buckets.Options.Lookup("collation"); ok && v.Type == bson.TypeDocument {
		collation = v.Document()
	}
	next := *ts.Buckets
	next.Options = bucketsOptions(o, expiry, collation)
	if err := catalog.Put(tx, &next); err != nil {
		return err
	}
	var logged []bson.Element
	if tsOpt != nil {
		logged = append(logged, bson.Element{Key: "timeseries", Value: *tsOpt})
	}
	if expire != nil {
		logged = append(logged, bson.Element{Key: "expireAfterSeconds", Value: *expire})
	}
	if err := e.Oplog.CollMod(tx, &next, logged); err != nil {
		return err
	}
	if changed {
		view := *ts.View
		var b bson.Builder
		b.AppendString("viewOn", next.Name)
		b.AppendArray("pipeline", o.ViewPipeline())
		if collation != nil {
			b.AppendDocument("collation", collation)
		}
		view.Options = b.Finish()
		if err := catalog.Put(tx, &view); err != nil {
			return err
		}
		e.BucketCatalog().Forget(ts.Buckets.UUID)
	}
	return nil
}

// AppendTimeseriesInfo appends the listCollections entry of a
// time-series collection: {name, type: "timeseries", options: {timeseries,
// expireAfterSeconds}, info: {readOnly: false}}.
func AppendTimeseriesInfo(b *bson.Builder, ts *Timeseries, nameOnly bool) {
	b.AppendString("name", ts.View.Name)
	b.AppendString("type", "timeseries")
	if nameOnly {
		return
	}
	b.StartDocument("options")
	if v, ok := ts.Buckets.Options.Lookup("collation"); ok {
		b.AppendValue("collation", v)
	}
	ts.Opts.Append(b, "timeseries")
	if ts.Expire >= 0 {
		b.AppendInt64("expireAfterSeconds", ts.Expire)
	}
	b.End()
	b.StartDocument("info")
	b.AppendBool("readOnly", false)
	b.End()
}

// timeseriesTTL expires the buckets of c when it is a buckets collection
// with expireAfterSeconds.
func timeseriesTTL(ctx context.Context, e *Engine, c *catalog.Collection, now time.Time) (int64, error) {
	if !strings.HasPrefix(c.Name, timeseries.BucketsPrefix) {
		return 0, nil
	}
	o := timeseries.FromCollection(c.Options)
	secs := c.ExpireAfterSeconds()
	if o == nil || secs < 0 {
		return 0, nil
	}
	n, err := expireBuckets(ctx, e, c, o, secs, now)
	if err != nil {
		return n, fmt.Errorf("expiring buckets of %s: %w", c.Namespace(), err)
	}
	return n, nil
}

// CheckTimeseriesRename refuses to rename a time-series collection or
// its buckets, as mongod 7.0.
func CheckTimeseriesRename(tx *Tx, src *catalog.Collection) error {
	if strings.HasPrefix(src.Name, timeseries.BucketsPrefix) && timeseries.FromCollection(src.Options) != nil {
		return mongoerr.New(mongoerr.IllegalOperation, "Cannot rename timeseries buckets collection '%s'", src.Namespace())
	}
	ts, err := TimeseriesOf(tx, src.DB, src.Name)
	if err != nil {
		return err
	}
	if ts != nil {
		return mongoerr.New(mongoerr.IllegalOperation, "Renaming a time-series collection is not allowed: %s", src.Namespace())
	}
	return nil
}

// AppendTimeseriesStats appends collStats' timeseries section for ts
// (nothing when nil): the buckets namespace, how many buckets there are
// and their average size.
func AppendTimeseriesStats(b *bson.Builder, ts *Timeseries, buckets, size int64) {
	if ts == nil {
		return
	}
	b.StartDocument("timeseries")
	b.AppendString("bucketsNs", ts.Buckets.Namespace())
	b.AppendInt64("bucketCount", buckets)
	if buckets > 0 {
		b.AppendInt64("avgBucketSize", size/buckets)
	} else {
		b.AppendInt64("avgBucketSize", 0)
	}
	b.End()
}
