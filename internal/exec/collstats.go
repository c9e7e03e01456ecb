package exec

import (
	"os"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/kv"
)

// The collection and index statistics collStats, dbStats, listDatabases
// and the $collStats / $indexStats / $listLocalSessions stages report,
// read from one snapshot.

// CollSizes returns a collection's document count and total document bytes.
func CollSizes(tx *kv.Tx, coll *catalog.Collection) (count, size int64, err error) {
	if _, _, isView := coll.View(); isView {
		return 0, 0, ErrOnView(coll.Namespace()) // collStats on a view, as mongod answers
	}
	t, err := DataTree(tx, coll)
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

// IndexSizes returns the bytes of each index's entries (keys and values;
// for _id_, the encoded _id keys of the data tree) and their total.
func IndexSizes(tx *kv.Tx, coll *catalog.Collection) (map[string]int64, int64, error) {
	sizes := make(map[string]int64, len(coll.Indexes))
	var total int64
	for _, ix := range coll.Indexes {
		name := coll.IndexTree(ix.Name)
		idOnly := ix.IsID() && !coll.Capped
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

// CollStatsDoc answers $collStats on db.name in tx: the sections spec
// names (latencyStats from latency, which returns the namespace's top
// figures for reads, writes, commands and transactions as {latency, ops};
// storageStats; count; queryExecStats).
func CollStatsDoc(tx *kv.Tx, db, name string, spec bson.Doc, latency func() [4][2]int64) (bson.Doc, error) {
	coll, err := catalog.Get(tx, db, name)
	if err != nil {
		return nil, err
	}
	if coll == nil {
		return nil, mongoerr.New(mongoerr.NamespaceNotFound, "Unable to retrieve storageStats in $collStats stage :: caused by :: Collection [%s.%s] not found.", db, name)
	}
	ns := coll.Namespace()
	var ts *Timeseries
	if _, _, isView := coll.View(); isView {
		if ts, err = TimeseriesOf(tx, db, name); err != nil {
			return nil, err
		} else if ts != nil {
			coll = ts.Buckets // a time-series collection's storage is its buckets'
		}
	}
	count, size, err := CollSizes(tx, coll)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	var b bson.Builder
	b.AppendString("ns", ns)
	b.AppendString("host", host)
	b.AppendDateTime("localTime", time.Now().UnixMilli())
	it := spec.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "latencyStats":
			// The namespace's figures from top; Cairn has no transactions.
			lat := latency()
			b.StartDocument("latencyStats")
			for i, op := range []string{"reads", "writes", "commands", "transactions"} {
				b.StartDocument(op)
				b.AppendInt64("latency", lat[i][0])
				b.AppendInt64("ops", lat[i][1])
				b.End()
			}
			b.End()
		case "storageStats":
			scale := int64(1)
			if v, ok := e.Value.Document().Lookup("scale"); ok {
				n, ok := v.AsInt64()
				if !ok || n < 1 {
					return nil, mongoerr.New(mongoerr.BadValue, "Invalid scale argument, scale has to be >= 1")
				}
				scale = n
			}
			b.StartDocument("storageStats")
			if err := AppendStorageStats(&b, tx, coll, count, size, scale); err != nil {
				return nil, err
			}
			AppendTimeseriesStats(&b, ts, count, size)
			b.End()
		case "count":
			b.AppendInt64("count", count)
		case "queryExecStats":
			b.StartDocument("queryExecStats")
			b.StartDocument("collectionScans")
			b.AppendInt64("total", 0)
			b.AppendInt64("nonTailable", 0)
			b.End()
			b.End()
		}
	}
	return b.Finish(), nil
}

// IndexStatsDocs answers $indexStats on db.name in tx (Cairn keeps no
// per-index access counters yet: ops is 0 since the server started, at
// since).
func IndexStatsDocs(tx *kv.Tx, db, name string, since time.Time) ([]bson.Doc, error) {
	coll, err := catalog.Get(tx, db, name)
	if err != nil || coll == nil {
		return nil, err
	}
	host, _ := os.Hostname()
	var out []bson.Doc
	for _, ix := range coll.Indexes {
		var b bson.Builder
		b.AppendString("name", ix.Name)
		if key, ok := ix.Spec.Lookup("key"); ok {
			b.AppendValue("key", key)
		}
		b.AppendString("host", host)
		b.StartDocument("accesses")
		b.AppendInt64("ops", 0)
		b.AppendDateTime("since", since.UnixMilli())
		b.End()
		b.AppendDocument("spec", ix.Spec)
		out = append(out, b.Finish())
	}
	return out, nil
}

// AppendStorageStats appends collStats' figures (and $collStats's
// storageStats) for coll, which holds count documents of size bytes,
// divided by scale: sizes, counts, and each index's size.
func AppendStorageStats(b *bson.Builder, tx *kv.Tx, coll *catalog.Collection, count, size, scale int64) error {
	ixSizes, ixTotal, err := IndexSizes(tx, coll)
	if err != nil {
		return err
	}
	b.AppendInt64("size", size/scale)
	b.AppendInt64("count", count)
	if count > 0 {
		b.AppendInt64("avgObjSize", size/count)
	} else {
		b.AppendInt64("avgObjSize", 0)
	}
	b.AppendInt64("storageSize", size/scale)
	b.AppendInt64("freeStorageSize", 0)
	b.AppendBool("capped", coll.Capped)
	if coll.Capped {
		// mongod's appendNumber: an int when it fits.
		appendNumber(b, "max", coll.CappedMax)
		appendNumber(b, "maxSize", coll.CappedSize/scale)
	}
	b.AppendInt32("nindexes", int32(len(coll.Indexes)))
	b.AppendInt64("totalIndexSize", ixTotal/scale)
	b.AppendInt64("totalSize", (size+ixTotal)/scale)
	b.StartDocument("indexSizes")
	for _, ix := range coll.Indexes {
		b.AppendInt64(ix.Name, ixSizes[ix.Name]/scale)
	}
	b.End()
	b.AppendInt64("scaleFactor", scale)
	return nil
}

// appendNumber appends n as an int32 when it fits, else an int64 (mongod's
// BSONObjBuilder::appendNumber).
func appendNumber(b *bson.Builder, key string, n int64) {
	if n >= -1<<31 && n < 1<<31 {
		b.AppendInt32(key, int32(n))
		return
	}
	b.AppendInt64(key, n)
}

// AppendDBStats appends dbStats' reply fields for db, read in tx, to r,
// sizes divided by scale: its collections and views (a view has no storage
// of its own), objects, data and index sizes.
func AppendDBStats(r *bson.Builder, tx *kv.Tx, db string, scale int64) error {
	colls, err := catalog.List(tx, db)
	if err != nil {
		return err
	}
	var objects, size, indexes, ixBytes, views int64
	for _, coll := range colls {
		if _, _, isView := coll.View(); isView {
			views++
			continue
		}
		n, s, err := CollSizes(tx, coll)
		if err != nil {
			return err
		}
		_, ixs, err := IndexSizes(tx, coll)
		if err != nil {
			return err
		}
		objects += n
		size += s
		ixBytes += ixs
		indexes += int64(len(coll.Indexes))
	}
	r.AppendString("db", db)
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
