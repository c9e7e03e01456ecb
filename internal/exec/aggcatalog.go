package exec

import (
	"os"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// AggCommand is what the aggregation catalog needs of the command that
// runs the pipeline: its write transactions ($out and $merge take the
// command's writer lock with its write concern's durability, and release
// its read snapshot once they commit) and its collection writers (which
// honour bypassDocumentValidation and add to its write figures).
type AggCommand interface {
	WriteTx(d Durability, fn func(tx *Tx) error) error
	Writer(tx *Tx, coll *catalog.Collection) (*CollWriter, error)
}

// AggCatalog serves a pipeline's reads from the current Fill's snapshot
// (AggSnapshot) and its writes ($out, $merge) through the command's
// writers; it implements agg.Catalog and the optional interfaces the
// stages look for.
type AggCatalog struct {
	// AggSnapshot is what the collection scans read (aggscan.go).
	AggSnapshot
	// Cmd is the aggregate command, used only while it runs ($out and
	// $merge complete within it).
	Cmd        AggCommand
	Durability Durability
	// Sessions answers $listLocalSessions and $listSessions (the session
	// registry is the command layer's); nil: no sessions are listed.
	Sessions SessionLister
	// Latency is a namespace's latencies ($collStats latencyStats: the
	// top counters).
	Latency func(db, coll string) [4][2]int64
	// Started is when the server started ($indexStats' since).
	Started time.Time
}

// Scan implements agg.Catalog; a view is read through its pipeline.
func (k *AggCatalog) Scan(db, coll string) (agg.Iterator, error) {
	source, stages, isView, err := ResolveView(k.Tx, db, coll)
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
func (k *AggCatalog) ScanFiltered(db, coll string, filter bson.Doc) (agg.Iterator, error) {
	_, _, isView, err := ResolveView(k.Tx, db, coll)
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
func (k *AggCatalog) Out(spec *agg.OutSpec, in agg.Iterator) error {
	if err := catalog.ValidateCollectionName(spec.DB, spec.Coll); err != nil {
		return err
	}
	return k.Cmd.WriteTx(k.Durability, func(tx *Tx) error {
		coll, err := CollectionForWrite(tx, spec.DB, spec.Coll, true, k.Eng.Oplog)
		if err != nil {
			return err
		}
		if err := CheckNotView(coll); err != nil {
			return err
		}
		w, err := k.Cmd.Writer(tx, coll)
		if err != nil {
			return err
		}
		if err := ClearCollection(w); err != nil {
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
func (k *AggCatalog) Merge(spec *agg.MergeSpec, in agg.Iterator) error {
	if err := catalog.ValidateCollectionName(spec.DB, spec.Coll); err != nil {
		return err
	}
	return k.Cmd.WriteTx(k.Durability, func(tx *Tx) error {
		coll, err := CollectionForWrite(tx, spec.DB, spec.Coll, spec.OnID(), k.Eng.Oplog)
		if err != nil {
			return err
		}
		if coll == nil || (!spec.OnID() && !HasUniqueIndexOn(coll, spec.On)) {
			return mongoerr.New(mongoerr.MergeOnNoUniqueIndex, "Cannot find index to verify that join fields will be unique")
		}
		if err := CheckNotView(coll); err != nil {
			return err
		}
		w, err := k.Cmd.Writer(tx, coll)
		if err != nil {
			return err
		}
		m := &Merger{Spec: spec, W: w, NS: coll.Namespace()}
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
func (k *AggCatalog) CollStats(db, name string, spec bson.Doc) (bson.Doc, error) {
	return CollStatsDoc(k.Tx, db, name, spec, func() [4][2]int64 { return k.Latency(db, name) })
}

// IndexStats implements $indexStats.
func (k *AggCatalog) IndexStats(db, name string) ([]bson.Doc, error) {
	return IndexStatsDocs(k.Tx, db, name, k.Started)
}

// SessionLister lists logical sessions for the session stages.
type SessionLister interface {
	// LocalSessions answers $listLocalSessions: the server's registry.
	LocalSessions(spec bson.Doc) ([]bson.Doc, error)
	// ListSessions answers $listSessions: the records of
	// config.system.sessions in k's snapshot.
	ListSessions(k *AggCatalog, spec bson.Doc) ([]bson.Doc, error)
}

// LocalSessions implements $listLocalSessions.
func (k *AggCatalog) LocalSessions(spec bson.Doc) ([]bson.Doc, error) {
	if k.Sessions == nil {
		return nil, nil
	}
	return k.Sessions.LocalSessions(spec)
}

// ListSessions implements agg.SessionLister ($listSessions).
func (k *AggCatalog) ListSessions(spec bson.Doc) ([]bson.Doc, error) {
	if k.Sessions == nil {
		return nil, nil
	}
	return k.Sessions.ListSessions(k, spec)
}

// RunPipeline implements agg.PipelineRunner for the sub-pipelines of
// $lookup and $unionWith: in the order of an index that provides its
// leading $sort, else in parallel, with the equality the leading $match
// makes of a correlated $expr planning the index scan.
func (k *AggCatalog) RunPipeline(db, coll string, p *agg.Pipeline) (agg.Iterator, bool, error) {
	if it, ok, err := k.SortedRun(db, coll, p, bson.Value{}); err != nil || ok {
		return it, ok, err
	}
	return k.Eng.ParallelPipeline(k.Ctx, k.Tx, db, coll, p, p.IndexFilter(), nil, bson.Value{})
}

// SortedRun runs p over an index walk in the order of its leading $sort
// when an index provides it (as find's planner chooses one, bounded by
// the leading $match where it can be), reporting false otherwise.
func (k *AggCatalog) SortedRun(db, name string, p *agg.Pipeline, hint bson.Value) (agg.Iterator, bool, error) {
	sortDoc, ok := p.LeadingSort()
	if !ok || Hinted(hint) || k.Tx == nil {
		return nil, false, nil
	}
	coll, err := catalog.Get(k.Tx, db, name)
	if err != nil || coll == nil {
		return nil, false, err
	}
	if _, _, isView := coll.View(); isView {
		return nil, false, nil
	}
	opts := p.QueryOptions()
	sort, err := query.ParseSort(sortDoc, opts)
	if err != nil {
		return nil, false, nil // the $sort stage reports it
	}
	spec := &FindSpec{FilterDoc: p.LeadingFilter(), Filter: p.Filter, SortDoc: sortDoc, Sort: sort, Opts: opts}
	var base *Plan
	if len(spec.FilterDoc) > 5 {
		if base, _, err = k.Eng.PlanQuery(k.Ctx, k.Tx, coll, spec.FilterDoc, p.Filter, opts, bson.Value{}); err != nil {
			return nil, false, err
		}
	}
	pl := ChoosePlanFind(coll, spec, base)
	if pl == nil || !pl.Sorted {
		return nil, false, nil
	}
	sc := k.ScanCollection(db, name, p.Filter)
	sc.Plan, sc.Planned = pl, true
	it, err := p.RunSorted(sc)
	return it, err == nil, err
}

// PlanCacheStats implements $planCacheStats.
func (k *AggCatalog) PlanCacheStats(db, name string) ([]bson.Doc, error) {
	coll, err := catalog.Get(k.Tx, db, name)
	if err != nil || coll == nil {
		return nil, err
	}
	host, _ := os.Hostname()
	return k.Eng.Plans.Stats(coll, host), nil
}
