package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/internal/timeseries"
)

// Time-series collections (internal/timeseries, exec/timeseries.go): the
// command layer only reads the requests and routes them to the
// collection's buckets.

// timeseriesNamed returns db.name of c's database as a time-series
// collection (nil: it is none), in a read snapshot.
func timeseriesNamed(c *Ctx, name string) (*exec.Timeseries, error) {
	tx, err := c.readTx()
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	coll, err := catalog.Get(tx, c.DB, name)
	if err != nil {
		return nil, err
	}
	return exec.TimeseriesOfCollection(tx, coll)
}

// createTimeseries handles create with timeseries.
func createTimeseries(c *Ctx, name string) error {
	r := &exec.TimeseriesCreate{DB: c.DB, Name: name, Expire: -1}
	it := c.Body.Iter()
	it.Next()
	for it.Next() {
		e := it.Element()
		switch {
		case genericFields[e.Key]:
		case e.Key == "timeseries":
			o, err := timeseries.Parse("create", e.Value)
			if err != nil {
				return err
			}
			r.Opts = o
		case e.Key == "expireAfterSeconds":
			if !e.Value.IsNumber() {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'create.expireAfterSeconds' is the wrong type '%s', expected types '[long, int, decimal, double]'", e.Value.Type)
			}
			f, _ := e.Value.AsFloat64()
			if f < 0 {
				return mongoerr.New(mongoerr.InvalidOptions, "TTL index 'expireAfterSeconds' option cannot be less than 0")
			}
			if f > 1<<31-1 {
				return mongoerr.New(mongoerr.InvalidOptions, "TTL index 'expireAfterSeconds' option must be within an acceptable range, try a lower number")
			}
			r.Expire, _ = e.Value.AsInt64()
		case e.Key == "collation":
			if e.Value.Type != bson.TypeDocument {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'create.collation' is the wrong type '%s', expected type 'object'", e.Value.Type)
			}
			coll, err := query.ParseCollation(e.Value.Document())
			if err != nil {
				return err
			}
			if coll != nil {
				var b bson.Builder
				coll.AppendSpec(&b, "c")
				v, _ := b.Finish().Lookup("c")
				r.Collation = v.Document()
			}
		default:
			if what, ok := exec.UnsupportedCreateOption(e.Key); ok && e.Key != "pipeline" && e.Key != "idIndex" {
				return mongoerr.New(mongoerr.CommandNotSupported, "Cairn does not support %s (create option '%s')", what, e.Key)
			}
			return mongoerr.New(mongoerr.InvalidOptions, "%s.%s: 'timeseries' is not allowed with '%s'", c.DB, name, e.Key)
		}
	}
	wc, err := parseWriteConcern(c)
	if err != nil {
		return err
	}
	if r.Collation != nil {
		c.Env.collations.Note(&c.Env.Engine)
	}
	return c.writeTx(wc.durability(), func(tx *exec.Tx) error { return c.Env.CreateTimeseries(c, tx, r) })
}

// timeseriesIndexes rewrites createIndexes on a time-series collection
// into createIndexes on its buckets with the keys translated; ok is
// false for any other collection.
func timeseriesIndexes(c *Ctx, name string) (ok bool, err error) {
	ts, err := timeseriesNamed(c, name)
	if err != nil || ts == nil {
		return false, err
	}
	var b bson.Builder
	it := c.Body.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "createIndexes":
			b.AppendString(e.Key, ts.Buckets.Name)
		case "indexes":
			if e.Value.Type != bson.TypeArray {
				b.AppendElement(e)
				continue
			}
			b.StartArray("indexes")
			ii := e.Value.Document().Iter()
			for n := 0; ii.Next(); n++ {
				spec := ii.Element().Value
				if spec.Type != bson.TypeDocument {
					b.AppendValue(bson.Index(n), spec)
					continue
				}
				t, err := timeseriesIndexSpec(ts.Opts, spec.Document())
				if err != nil {
					return true, err
				}
				b.AppendDocument(bson.Index(n), t)
			}
			b.End()
		default:
			b.AppendElement(e)
		}
	}
	c.Body = b.Finish()
	return true, nil
}

// timeseriesIndexSpec translates one index specification's key (and
// names it after the user's key when it has no name).
func timeseriesIndexSpec(o *timeseries.Options, spec bson.Doc) (bson.Doc, error) {
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

// timeseriesCollMod handles collMod on a time-series collection: its
// timeseries (granularity, bucketMaxSpanSeconds, bucketRoundingSeconds)
// and expireAfterSeconds options, and an index change made on its
// buckets; ok is false for any other collection.
func timeseriesCollMod(c *Ctx, name string, wc writeConcern) (ok bool, err error) {
	ts, err := timeseriesNamed(c, name)
	if err != nil || ts == nil {
		return false, err
	}
	var tsOpt, expire *bson.Value
	var indexChange bson.Doc
	it := c.Body.Iter()
	it.Next()
	for it.Next() {
		e := it.Element()
		v := e.Value
		switch {
		case genericFields[e.Key]:
		case e.Key == "timeseries":
			tsOpt = &v
		case e.Key == "expireAfterSeconds":
			expire = &v
		case e.Key == "index":
			if v.Type != bson.TypeDocument {
				return true, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'collMod.index' is the wrong type '%s', expected type 'object'", v.Type)
			}
			indexChange = v.Document()
		default:
			return true, mongoerr.New(mongoerr.InvalidOptions, "option not supported on a time-series collection: %s", e.Key)
		}
	}
	return true, c.writeTx(wc.durability(), func(tx *exec.Tx) error {
		ts, err := exec.TimeseriesOf(tx, c.DB, name)
		if err != nil {
			return err
		}
		if ts == nil {
			return mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist: %s.%s", c.DB, name)
		}
		if indexChange != nil {
			next := *ts.Buckets
			if err := exec.ModifyIndex(tx, &next, timeseriesIndexChange(ts.Opts, indexChange)); err != nil {
				return err
			}
			if err := catalog.Put(tx, &next); err != nil {
				return err
			}
			ts.Buckets = &next
		}
		return c.Env.TimeseriesCollMod(tx, ts, tsOpt, expire)
	})
}

// timeseriesIndexChange translates collMod's index.keyPattern to the
// buckets' key.
func timeseriesIndexChange(o *timeseries.Options, change bson.Doc) bson.Doc {
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

// timeseriesUpdate runs an update statement (raw, parsed as st) on a
// time-series collection, refusing what MongoDB 7.0 refuses.
func timeseriesUpdate(c *Ctx, tx *exec.Tx, ts *exec.Timeseries, raw bson.Doc, st *exec.UpdateStmt) (exec.UpdateResult, error) {
	u, _ := raw.Lookup("u")
	if err := ts.Opts.UpdateError(u, st.Multi, st.Upsert); err != nil {
		return exec.UpdateResult{}, err
	}
	var q bson.Doc
	if v, ok := raw.Lookup("q"); ok && v.Type == bson.TypeDocument {
		q = v.Document()
	}
	if !ts.Opts.MetaOnly(q) {
		return exec.UpdateResult{}, ts.Opts.NotMetaQueryError()
	}
	return c.Env.UpdateMeasurements(c, tx, ts, q, st)
}
