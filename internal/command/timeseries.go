package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/dispatch"
	"github.com/cairndb/cairn/internal/exec"
)

// Time-series collections (internal/timeseries, exec/timeseries*.go):
// the command layer only routes the requests to the collection's
// buckets; exec/timeseries_ddl.go reads create's and collMod's.

// timeseriesNamed returns db.name of c's database as a time-series
// collection (nil: it is none), in a read snapshot.
func timeseriesNamed(c *Ctx, name string) (*exec.Timeseries, error) {
	tx, err := c.ReadSnapshot()
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
	r, err := exec.ParseTimeseriesCreate(c.DB, name, c.Body, dispatch.IsGenericField)
	if err != nil {
		return err
	}
	wc, err := parseWriteConcern(c)
	if err != nil {
		return err
	}
	if r.Collation != nil {
		c.Env.Collations.Note(&c.Env.Engine)
	}
	return c.WriteTx(wc.durability(), func(tx *exec.Tx) error { return c.Env.CreateTimeseries(c, tx, r) })
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
				t, err := ts.Opts.BucketIndexSpec(spec.Document())
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

// timeseriesCollMod handles collMod on a time-series collection: its
// timeseries (granularity, bucketMaxSpanSeconds, bucketRoundingSeconds)
// and expireAfterSeconds options, and an index change made on its
// buckets; ok is false for any other collection.
func timeseriesCollMod(c *Ctx, name string, wc writeConcern) (ok bool, err error) {
	ts, err := timeseriesNamed(c, name)
	if err != nil || ts == nil {
		return false, err
	}
	ch, err := exec.ParseTimeseriesCollMod(c.Body, dispatch.IsGenericField)
	if err != nil {
		return true, err
	}
	return true, c.WriteTx(wc.durability(), func(tx *exec.Tx) error { return c.Env.CollModTimeseries(tx, c.DB, name, ch) })
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
