package command

import (
	"os"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/kv"
)

// aggCatalog serves the pipeline's reads from the current Fill's snapshot
// and its writes ($out, $merge) through collWriter.
type aggCatalog struct {
	// aggSnapshot is what the collection scans read (aggscan.go).
	exec.AggSnapshot
	env *Env
	// c is the aggregate command's context, used only while the command
	// runs ($out and $merge complete within it).
	c          *Ctx
	lsid       bson.Doc
	durability kv.Durability
}

// Scan implements agg.Catalog; a view is read through its pipeline.
func (k *aggCatalog) Scan(db, coll string) (agg.Iterator, error) {
	source, stages, isView, err := resolveView(k.Tx, db, coll)
	if err != nil {
		return nil, err
	}
	if !isView {
		return k.ScanCollection(db, coll, nil), nil
	}
	vctx := *k.Actx
	vctx.DB, vctx.Coll = db, source
	p, err := agg.Parse(&vctx, stages)
	if err != nil {
		return nil, err
	}
	return p.Run(k.ScanCollection(db, source, nil))
}

// ScanFiltered implements agg.FilteredScanner: a collection (not a view)
// is read through the index plan filter selects, if any; the documents
// are a superset of filter's matches.
func (k *aggCatalog) ScanFiltered(db, coll string, filter bson.Doc) (agg.Iterator, error) {
	_, _, isView, err := resolveView(k.Tx, db, coll)
	if err != nil {
		return nil, err
	}
	if isView {
		return k.Scan(db, coll)
	}
	s := k.ScanCollection(db, coll, nil)
	s.FilterDoc = filter
	return s, nil
}

// Out implements $out: the target's documents are replaced by the
// pipeline's in one transaction (the target keeps its indexes; a duplicate
// _id fails the whole $out and leaves the target unchanged).
func (k *aggCatalog) Out(spec *agg.OutSpec, in agg.Iterator) error {
	if err := catalog.ValidateCollectionName(spec.DB, spec.Coll); err != nil {
		return err
	}
	return k.c.writeTx(k.durability, func(tx *kv.Tx) error {
		coll, err := exec.CollectionForWrite(tx, spec.DB, spec.Coll, true)
		if err != nil {
			return err
		}
		if err := exec.CheckNotView(coll); err != nil {
			return err
		}
		w, err := k.c.writer(tx, coll)
		if err != nil {
			return err
		}
		if err := exec.ClearCollection(w); err != nil {
			return err
		}
		for {
			d, err := in.Next()
			if err != nil {
				return err
			}
			if d == nil {
				return nil
			}
			if _, _, err := w.Insert(d); err != nil {
				return err
			}
		}
	})
}

// Merge implements $merge: each document is inserted, replaces or is
// merged into the target document with the same 'on' fields (_id, or the
// fields of a unique index), as spec says.
func (k *aggCatalog) Merge(spec *agg.MergeSpec, in agg.Iterator) error {
	if err := catalog.ValidateCollectionName(spec.DB, spec.Coll); err != nil {
		return err
	}
	return k.c.writeTx(k.durability, func(tx *kv.Tx) error {
		coll, err := exec.CollectionForWrite(tx, spec.DB, spec.Coll, spec.OnID())
		if err != nil {
			return err
		}
		if coll == nil || (!spec.OnID() && !exec.HasUniqueIndexOn(coll, spec.On)) {
			return mongoerr.New(mongoerr.MergeOnNoUniqueIndex, "Cannot find index to verify that join fields will be unique")
		}
		if err := exec.CheckNotView(coll); err != nil {
			return err
		}
		w, err := k.c.writer(tx, coll)
		if err != nil {
			return err
		}
		m := &exec.Merger{Spec: spec, W: w, NS: coll.Namespace()}
		if !spec.OnID() {
			if err := m.IndexTarget(); err != nil {
				return err
			}
		}
		for {
			d, err := in.Next()
			if err != nil || d == nil {
				return err
			}
			if err := m.Merge(d); err != nil {
				return err
			}
		}
	})
}

// CollStats implements $collStats.
func (k *aggCatalog) CollStats(db, name string, spec bson.Doc) (bson.Doc, error) {
	coll, err := catalog.Get(k.Tx, db, name)
	if err != nil {
		return nil, err
	}
	if coll == nil {
		return nil, mongoerr.New(mongoerr.NamespaceNotFound, "Unable to retrieve storageStats in $collStats stage :: caused by :: Collection [%s.%s] not found.", db, name)
	}
	count, size, err := collSizes(&Ctx{Context: k.Ctx, Env: k.env}, k.Tx, coll)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	var b bson.Builder
	b.AppendString("ns", coll.Namespace())
	b.AppendString("host", host)
	b.AppendDateTime("localTime", time.Now().UnixMilli())
	it := spec.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "latencyStats":
			// The namespace's figures from top; Cairn has no transactions.
			lat := k.env.Top.latency(db, name)
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
			b.AppendInt64("size", size/scale)
			b.AppendInt64("count", count)
			if count > 0 {
				b.AppendInt64("avgObjSize", size/count)
			} else {
				b.AppendInt64("avgObjSize", 0)
			}
			b.AppendInt64("storageSize", size/scale)
			b.AppendInt64("freeStorageSize", 0)
			b.AppendBool("capped", false)
			ixSizes, ixTotal, err := indexSizes(k.Tx, coll)
			if err != nil {
				return nil, err
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

// IndexStats implements $indexStats (Cairn keeps no per-index access
// counters yet: ops is 0 since the server started).
func (k *aggCatalog) IndexStats(db, name string) ([]bson.Doc, error) {
	coll, err := catalog.Get(k.Tx, db, name)
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
		b.AppendDateTime("since", k.env.Started.UnixMilli())
		b.End()
		b.AppendDocument("spec", ix.Spec)
		out = append(out, b.Finish())
	}
	return out, nil
}

// LocalSessions implements $listLocalSessions. Cairn keeps no session
// cache: the requesting session is the one it knows.
func (k *aggCatalog) LocalSessions(spec bson.Doc) ([]bson.Doc, error) {
	id, ok := k.lsid.Lookup("id")
	if !ok {
		return nil, nil
	}
	var b bson.Builder
	b.StartDocument("_id")
	b.AppendValue("id", id)
	b.AppendBinary("uid", 0, emptyUserDigest[:])
	b.End()
	b.AppendDateTime("lastUse", time.Now().UnixMilli())
	return []bson.Doc{b.Finish()}, nil
}

// emptyUserDigest is SHA-256 of the empty string: the uid of sessions of
// an unauthenticated client, as MongoDB reports it.
var emptyUserDigest = [32]byte{0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
	0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55}
