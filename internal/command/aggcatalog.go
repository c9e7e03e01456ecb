package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
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
	durability exec.Durability
}

// Scan implements agg.Catalog; a view is read through its pipeline.
func (k *aggCatalog) Scan(db, coll string) (agg.Iterator, error) {
	source, stages, isView, err := exec.ResolveView(k.Tx, db, coll)
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
	_, _, isView, err := exec.ResolveView(k.Tx, db, coll)
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
	return k.c.writeTx(k.durability, func(tx *exec.Tx) error {
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
	return k.c.writeTx(k.durability, func(tx *exec.Tx) error {
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
	return exec.CollStatsDoc(k.Tx, db, name, spec, func() [4][2]int64 { return k.env.Top.Latency(db, name) })
}

// IndexStats implements $indexStats.
func (k *aggCatalog) IndexStats(db, name string) ([]bson.Doc, error) {
	return exec.IndexStatsDocs(k.Tx, db, name, k.env.Started)
}
