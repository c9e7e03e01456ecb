package command

import (
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/dispatch"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// scaleArg reads collStats/dbStats' scale (default 1).
func scaleArg(a args) (int64, error) {
	scale, ok, err := a.Integer("scale")
	if err != nil {
		return 0, err
	}
	if !ok {
		return 1, nil
	}
	if scale < 1 {
		return 0, mongoerr.New(mongoerr.BadValue, "scale has to be >= 1")
	}
	return scale, nil
}

func collStats(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("scale", "verbose"); err != nil {
		return err
	}
	name, err := c.CollectionArg()
	if err != nil {
		return err
	}
	scale, err := scaleArg(a)
	if err != nil {
		return err
	}
	tx, coll, err := c.SnapshotCollection(name)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if coll == nil {
		return mongoerr.New(mongoerr.NamespaceNotFound, "Collection [%s.%s] not found.", c.DB, name)
	}
	ns := coll.Namespace()
	ts, err := exec.TimeseriesOfCollection(tx, coll)
	if err != nil {
		return err
	}
	if ts != nil {
		coll = ts.Buckets // a time-series collection's storage is its buckets'
	}
	count, size, err := exec.CollSizes(tx, coll)
	if err != nil {
		return err
	}
	r := c.Reply
	r.AppendString("ns", ns)
	if err := exec.AppendStorageStats(r, tx, coll, count, size, scale); err != nil {
		return err
	}
	exec.AppendTimeseriesStats(r, ts, count, size)
	return nil
}

func dbStats(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("scale", "freeStorage"); err != nil {
		return err
	}
	if err := catalog.ValidateDBName(c.DB); err != nil {
		return err
	}
	scale, err := scaleArg(a)
	if err != nil {
		return err
	}
	tx, err := c.ReadSnapshot()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return exec.AppendDBStats(c.Reply, tx, c.DB, scale)
}

// dataSize (alias datasize): the documents of a namespace and their bytes,
// all of them or those in an index key range (exec.DataSize).
func dataSize(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("keyPattern", "min", "max", "estimate", "maxSize", "maxObjects"); err != nil {
		return err
	}
	start := time.Now()
	db, name, err := dispatch.DataSizeNamespace(c)
	if err != nil {
		return err
	}
	var o exec.DataSizeOptions
	for _, f := range []struct {
		name string
		dst  *bson.Doc
	}{{"keyPattern", &o.KeyPattern}, {"min", &o.Min}, {"max", &o.Max}} {
		if *f.dst, _, err = a.Doc(f.name); err != nil {
			return err
		}
	}
	if o.Estimate, _, err = a.Boolean("estimate"); err != nil {
		return err
	}
	if o.MaxSize, _, err = a.Integer("maxSize"); err != nil {
		return err
	}
	if o.MaxObjects, _, err = a.Integer("maxObjects"); err != nil {
		return err
	}
	tx, err := c.ReadSnapshot()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	coll, err := catalog.Get(tx, db, name)
	if err != nil {
		return err
	}
	res, err := exec.DataSize(c, tx, coll, o)
	if err != nil {
		return err
	}
	r := c.Reply
	if res.Counted {
		r.AppendBool("estimate", o.Estimate)
	}
	r.AppendInt64("size", res.Size)
	r.AppendInt64("numObjects", res.NumObjects)
	r.AppendInt64("millis", time.Since(start).Milliseconds())
	if res.MaxReached {
		r.AppendBool("maxReached", true)
	}
	return nil
}
