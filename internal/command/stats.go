package command

import (
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// scaleArg reads collStats/dbStats' scale (default 1).
func scaleArg(a args) (int64, error) {
	scale, ok, err := a.integer("scale")
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
	if err := a.check("scale", "verbose"); err != nil {
		return err
	}
	name, err := c.collectionArg()
	if err != nil {
		return err
	}
	scale, err := scaleArg(a)
	if err != nil {
		return err
	}
	tx, coll, err := c.snapshotCollection(name)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if coll == nil {
		return mongoerr.New(mongoerr.NamespaceNotFound, "Collection [%s.%s] not found.", c.DB, name)
	}
	count, size, err := exec.CollSizes(tx, coll)
	if err != nil {
		return err
	}
	r := c.Reply
	r.AppendString("ns", coll.Namespace())
	return exec.AppendStorageStats(r, tx, coll, count, size, scale)
}

func dbStats(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("scale", "freeStorage"); err != nil {
		return err
	}
	if err := catalog.ValidateDBName(c.DB); err != nil {
		return err
	}
	scale, err := scaleArg(a)
	if err != nil {
		return err
	}
	tx, err := c.readTx()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	colls, err := catalog.List(tx, c.DB)
	if err != nil {
		return err
	}
	var objects, size, indexes, ixBytes, views int64
	for _, coll := range colls {
		if _, _, isView := coll.View(); isView {
			views++ // a view has no storage of its own
			continue
		}
		n, s, err := exec.CollSizes(tx, coll)
		if err != nil {
			return err
		}
		_, ixs, err := exec.IndexSizes(tx, coll)
		if err != nil {
			return err
		}
		objects += n
		size += s
		ixBytes += ixs
		indexes += int64(len(coll.Indexes))
	}
	r := c.Reply
	r.AppendString("db", c.DB)
	r.AppendInt64("collections", int64(len(colls))-views)
	r.AppendInt64("views", views)
	r.AppendInt64("objects", objects)
	if objects > 0 {
		r.AppendDouble("avgObjSize", float64(size)/float64(objects))
	} else {
		r.AppendDouble("avgObjSize", 0)
	}
	r.AppendDouble("dataSize", float64(size/scale))
	r.AppendDouble("storageSize", float64(size/scale))
	r.AppendInt64("indexes", indexes)
	r.AppendDouble("indexSize", float64(ixBytes/scale))
	r.AppendDouble("totalSize", float64((size+ixBytes)/scale))
	r.AppendInt64("scaleFactor", scale)
	return nil
}
