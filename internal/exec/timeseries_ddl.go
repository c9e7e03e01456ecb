package exec

// Time-series collections' DDL requests, as mongod 7.0 reads them:
// create with timeseries (its options, expireAfterSeconds, collation and
// the options it may not be combined with) and collMod on a time-series
// collection (timeseries, expireAfterSeconds, an index change made on
// its buckets). The command layer only routes a request here when the
// collection is, or is to be, a time-series one.

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/internal/timeseries"
)

// ParseTimeseriesCreate reads create's body (its first field names the
// collection db.name, its timeseries field is present); generic reports
// the fields every command may carry, which are skipped.
func ParseTimeseriesCreate(db, name string, body bson.Doc, generic func(string) bool) (*TimeseriesCreate, error) {
	r := &TimeseriesCreate{DB: db, Name: name, Expire: -1}
	it := body.Iter()
	it.Next()
	for it.Next() {
		e := it.Element()
		switch {
		case generic(e.Key):
		case e.Key == "timeseries":
			o, err := timeseries.Parse("create", e.Value)
			if err != nil {
				return nil, err
			}
			r.Opts = o
		case e.Key == "expireAfterSeconds":
			if !e.Value.IsNumber() {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'create.expireAfterSeconds' is the wrong type '%s', expected types '[long, int, decimal, double]'", e.Value.Type)
			}
			f, _ := e.Value.AsFloat64()
			if f < 0 {
				return nil, mongoerr.New(mongoerr.InvalidOptions, "TTL index 'expireAfterSeconds' option cannot be less than 0")
			}
			if f > 1<<31-1 {
				return nil, mongoerr.New(mongoerr.InvalidOptions, "TTL index 'expireAfterSeconds' option must be within an acceptable range, try a lower number")
			}
			r.Expire, _ = e.Value.AsInt64()
		case e.Key == "collation":
			if e.Value.Type != bson.TypeDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'create.collation' is the wrong type '%s', expected type 'object'", e.Value.Type)
			}
			coll, err := query.ParseCollation(e.Value.Document())
			if err != nil {
				return nil, err
			}
			if coll != nil {
				var b bson.Builder
				coll.AppendSpec(&b, "c")
				v, _ := b.Finish().Lookup("c")
				r.Collation = v.Document()
			}
		default:
			if what, ok := unsupportedCreateOptions[e.Key]; ok && e.Key != "pipeline" && e.Key != "idIndex" {
				return nil, mongoerr.New(mongoerr.CommandNotSupported, "Cairn does not support %s (create option '%s')", what, e.Key)
			}
			return nil, mongoerr.New(mongoerr.InvalidOptions, "%s.%s: 'timeseries' is not allowed with '%s'", db, name, e.Key)
		}
	}
	return r, nil
}

// TimeseriesCollModChange is what a collMod on a time-series collection
// changes: its timeseries options, its expireAfterSeconds (each nil when
// not given) and an index of its buckets (Index: collMod's index field,
// with the key the collection's users gave).
type TimeseriesCollModChange struct {
	Timeseries, Expire *bson.Value
	Index              bson.Doc
}

// ParseTimeseriesCollMod reads collMod's body (its first field names
// the collection); generic reports the fields every command may carry.
func ParseTimeseriesCollMod(body bson.Doc, generic func(string) bool) (*TimeseriesCollModChange, error) {
	ch := &TimeseriesCollModChange{}
	it := body.Iter()
	it.Next()
	for it.Next() {
		e := it.Element()
		v := e.Value
		switch {
		case generic(e.Key):
		case e.Key == "timeseries":
			ch.Timeseries = &v
		case e.Key == "expireAfterSeconds":
			ch.Expire = &v
		case e.Key == "index":
			if v.Type != bson.TypeDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'collMod.index' is the wrong type '%s', expected type 'object'", v.Type)
			}
			ch.Index = v.Document()
		default:
			return nil, mongoerr.New(mongoerr.InvalidOptions, "option not supported on a time-series collection: %s", e.Key)
		}
	}
	return ch, nil
}

// CollModTimeseries applies ch to the time-series collection db.name in
// tx (NamespaceNotFound when it is gone or no longer one).
func (e *Engine) CollModTimeseries(tx *Tx, db, name string, ch *TimeseriesCollModChange) error {
	ts, err := TimeseriesOf(tx, db, name)
	if err != nil {
		return err
	}
	if ts == nil {
		return mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist: %s.%s", db, name)
	}
	if ch.Index != nil {
		next := *ts.Buckets
		if err := ModifyIndex(tx, &next, ts.Opts.BucketIndexChange(ch.Index)); err != nil {
			return err
		}
		if err := catalog.Put(tx, &next); err != nil {
			return err
		}
		ts.Buckets = &next
	}
	return e.TimeseriesCollMod(tx, ts, ch.Timeseries, ch.Expire)
}
