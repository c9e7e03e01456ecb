package command

import (
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/kv"
)

// collSizes returns a collection's document count and total document bytes.
func collSizes(c *Ctx, tx *kv.Tx, coll *catalog.Collection) (count, size int64, err error) {
	if _, _, isView := coll.View(); isView {
		return 0, 0, exec.ErrOnView(coll.Namespace()) // collStats on a view, as mongod answers
	}
	t, err := exec.DataTree(tx, coll)
	if err != nil {
		return 0, 0, err
	}
	cur := t.Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		size += int64(len(v))
	}
	if err := cur.Err(); err != nil {
		return 0, 0, err
	}
	return t.Len(), size, nil
}

// indexSizes returns the bytes of each index's entries (keys and values;
// for _id_, the encoded _id keys of the data tree) and their total.
func indexSizes(tx *kv.Tx, coll *catalog.Collection) (map[string]int64, int64, error) {
	sizes := make(map[string]int64, len(coll.Indexes))
	var total int64
	for _, ix := range coll.Indexes {
		name := coll.IndexTree(ix.Name)
		idOnly := ix.Name == "_id_"
		if idOnly {
			name = coll.DataTree()
		}
		t, err := tx.Tree(name)
		if err != nil {
			return nil, 0, err
		}
		var n int64
		cur := t.Cursor()
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			n += int64(len(k))
			if !idOnly {
				n += int64(len(v))
			}
		}
		if err := cur.Err(); err != nil {
			return nil, 0, err
		}
		sizes[ix.Name] = n
		total += n
	}
	return sizes, total, nil
}

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
	count, size, err := collSizes(c, tx, coll)
	if err != nil {
		return err
	}
	ixSizes, ixTotal, err := indexSizes(tx, coll)
	if err != nil {
		return err
	}
	r := c.Reply
	r.AppendString("ns", coll.Namespace())
	r.AppendInt64("size", size/scale)
	r.AppendInt64("count", count)
	if count > 0 {
		r.AppendInt64("avgObjSize", size/count)
	} else {
		r.AppendInt64("avgObjSize", 0)
	}
	r.AppendInt64("storageSize", size/scale)
	r.AppendInt64("freeStorageSize", 0)
	r.AppendBool("capped", false)
	r.AppendInt32("nindexes", int32(len(coll.Indexes)))
	r.AppendInt64("totalIndexSize", ixTotal/scale)
	r.AppendInt64("totalSize", (size+ixTotal)/scale)
	r.StartDocument("indexSizes")
	for _, ix := range coll.Indexes {
		r.AppendInt64(ix.Name, ixSizes[ix.Name]/scale)
	}
	r.End()
	r.AppendInt64("scaleFactor", scale)
	return nil
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
		n, s, err := collSizes(c, tx, coll)
		if err != nil {
			return err
		}
		_, ixs, err := indexSizes(tx, coll)
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
