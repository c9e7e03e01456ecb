package exec

// Index builds that let reads and writes go on (MongoDB's hybrid index
// build).
//
// kv has one writer at a time, so a build done inside one write
// transaction would stop every write to every collection for as long as
// it scans and sorts. Instead a build on a collection that has documents
// runs in three steps:
//
//  1. Register (a short write transaction). Each new index goes into the
//     catalog with ready: false and a build id, with an empty tree and an
//     empty side tree (catalog.Collection.SideTree). From the commit on,
//     every writer — they all go through CollWriter, which reads the
//     catalog in its own transaction — opens a building index with
//     index.OpenBuilding: instead of changing the index's tree it records
//     each entry it would add or remove in the side tree, keyed by the
//     entry, so a later change to an entry replaces the earlier record.
//     Writers check no unique constraint on a building index: as in
//     MongoDB, a duplicate written during a build is the build's failure,
//     not the write's. The planner, hint, validate and TTL ignore the
//     index (ready: false); listIndexes does not list it.
//
//  2. Scan (no transaction held open for writing). A read snapshot taken
//     after the registration commits — kv readers never block the writer
//     nor wait for it — is scanned once for all the call's indexes; the
//     keys are extracted and sorted by index.Extract (in parallel, spilling
//     sorted runs to files beyond the memory budget). The snapshot is then
//     released. currentOp shows the scan's progress.
//
//  3. Commit (one write transaction). The build checks that its indexes
//     are still in the catalog with its build id (dropIndexes or a drop of
//     the collection during the build aborts it: IndexBuildAborted), then
//     for each index bulk-loads the tree bottom-up from the sorted runs
//     and drains the side tree into it (removals, then additions: every
//     record is its entry's final state, so the order does not matter, and
//     applying a write the snapshot already reflects changes nothing), drops
//     the side tree and marks the index ready. Writers wait only for this
//     step: the load and the drain, not the scan and the sort.
//
// Unique indexes: the tree holds one entry per key. A key met twice
// while loading, or added by a side write while another document holds
// it, is a constraint violation kept aside (index.Violations); a side
// write that removes the holder's entry lets a waiting violation take its
// place. If any violation is left once every side write is drained, the
// build fails with DuplicateKey (11000) — so a duplicate that was deleted
// during the build does not fail it, exactly as MongoDB rechecks its
// recorded violations at commit.
//
// Failure (a duplicate, a parallel-arrays document, killOp, maxTimeMS, an
// aborted build) rolls the commit back and runs a cleanup transaction that
// removes the build's catalog entries and trees: nothing is left behind.
// A server stopped in the middle of a build removes the unfinished
// indexes when it starts again (AbortUnfinishedBuilds); MongoDB would
// restart the build instead (docs/compatibility.md).
//
// A second createIndexes asking for an index that is being built waits
// for that build and then answers as if the index had existed. An empty
// collection is indexed in one transaction: there is nothing to scan.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// BuildCmd is what an index build needs of the command running it: its
// context (killOp, maxTimeMS, disconnect), its read snapshot and its write
// transactions (which take the writer lock with the command's counters and
// release its snapshot once they commit).
type BuildCmd interface {
	context.Context
	ReadSnapshot() (*Tx, error)
	WriteTx(d Durability, fn func(tx *Tx) error) error
}

// IndexBuilder builds a server's indexes.
type IndexBuilder struct {
	Engine *Engine
	// Log receives the builds' "done building" lines; nil: none.
	Log *slog.Logger
	// Hook, when set (by tests), runs as a build enters each phase.
	Hook func(index.Phase)
}

func (ib *IndexBuilder) hook(p index.Phase) {
	if ib.Hook != nil {
		ib.Hook(p)
	}
}

// IndexBuild is one createIndexes call's build of one or more indexes on a
// collection with documents (steps 2 and 3 above).
type IndexBuild struct {
	DB, Coll   string
	UUID       [16]byte
	ID         string
	Targets    []*index.BuildTarget
	Durability Durability
	// Progress is the build's progress, for currentOp.
	Progress index.Progress
	ib       *IndexBuilder
}

// newBuildID returns a fresh build id.
func newBuildID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("index build id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// Register adds the build's indexes to next (not yet ready) and creates
// their empty tree and side tree in tx (step 1).
func (b *IndexBuild) Register(tx *Tx, next *catalog.Collection) error {
	for _, t := range b.Targets {
		next.Indexes = append(next.Indexes, catalog.Index{Name: t.Spec.Name, Spec: t.Spec.Raw, Build: b.ID, NumTypes: t.Spec.NewNumTypes()})
		for _, tree := range []string{next.IndexTree(t.Spec.Name), next.SideTree(t.Spec.Name)} {
			if _, err := tx.CreateTree(tree); err != nil {
				return fmt.Errorf("index %s of %s: %w", t.Spec.Name, next.Namespace(), err)
			}
		}
	}
	return nil
}

// logStep logs a step of the build (mongod's two-phase build entries:
// startIndexBuild, commitIndexBuild, abortIndexBuild) in tx.
func (b *IndexBuild) logStep(tx *Tx, what string, coll *catalog.Collection, cause bson.Doc) error {
	if b.ib.Engine.Oplog == nil {
		return nil
	}
	var id [16]byte
	if _, err := hex.Decode(id[:], []byte(b.ID)); err != nil {
		return fmt.Errorf("index build id %q: %w", b.ID, err)
	}
	specs := make([]bson.Doc, len(b.Targets))
	for i, t := range b.Targets {
		specs[i] = t.Spec.Raw
	}
	return b.ib.Engine.Oplog.IndexBuild(tx, what, coll, id, specs, cause)
}

// Run scans, loads and commits the build (steps 2 and 3); on failure it
// removes what the build left.
func (b *IndexBuild) Run(c BuildCmd) error {
	err := b.build(c)
	if err != nil {
		if cerr := b.abort(c, mongoerr.FromContext(err)); cerr != nil && b.ib.Log != nil {
			b.ib.Log.Error("cleaning up a failed index build", "ns", b.DB+"."+b.Coll, "build", b.ID, "error", cerr.Error())
		}
		return mongoerr.FromContext(err)
	}
	return nil
}

func (b *IndexBuild) build(c BuildCmd) error {
	start := time.Now()
	rtx, err := c.ReadSnapshot()
	if err != nil {
		return err
	}
	defer rtx.Rollback()
	coll, err := catalog.Get(rtx, b.DB, b.Coll)
	if err != nil {
		return err
	}
	if err := b.check(coll); err != nil {
		return err
	}
	data, err := DataTree(rtx, coll)
	if err != nil {
		return err
	}
	b.Progress.Start(index.PhaseScan, data.Len())
	b.ib.hook(index.PhaseScan)
	sorted, err := index.Extract(c, data, coll.Namespace(), b.Targets, index.BuildOptions{TempDir: b.ib.Engine.SpillDir(), Progress: &b.Progress})
	if err != nil {
		return err
	}
	defer sorted.Close()
	rtx.Rollback()
	if err := c.Err(); err != nil {
		return err
	}
	scanned := time.Now()
	b.Progress.Start(index.PhaseLoad, sorted.Entries())
	b.ib.hook(index.PhaseLoad)
	var locked, loaded, drained time.Time
	err = c.WriteTx(b.Durability, func(tx *Tx) error {
		locked = time.Now()
		coll, err := catalog.Get(tx, b.DB, b.Coll)
		if err != nil {
			return err
		}
		if err := b.check(coll); err != nil {
			return err
		}
		next := *coll
		next.Indexes = append([]catalog.Index(nil), coll.Indexes...)
		ns := coll.Namespace()
		viols := make([]index.Violations, len(b.Targets))
		sides := make([]*Tree, len(b.Targets))
		for i, t := range b.Targets {
			name := t.Spec.Name
			if sides[i], err = tx.Tree(coll.SideTree(name)); err != nil {
				return fmt.Errorf("index %s of %s: %w", name, ns, err)
			}
			var dup func(key, id []byte) error
			if t.Spec.Unique {
				// Each side write can resolve one violation at most.
				limit, v := sides[i].Len(), &viols[i]
				dup = func(key, id []byte) error {
					if v.Add(key, id); int64(v.Len()) > limit {
						return index.DuplicateKeyError(ns, t.Spec, key)
					}
					return nil
				}
			}
			if err := tx.DropTree(coll.IndexTree(name)); err != nil {
				return fmt.Errorf("index %s of %s: %w", name, ns, err)
			}
			if err := sorted.Load(tx, i, dup); err != nil {
				return err
			}
		}
		loaded = time.Now()
		b.ib.hook(index.PhaseDrain)
		for i, t := range b.Targets {
			name := t.Spec.Name
			x, err := index.Open(tx, coll.IndexTree(name), ns, t.Spec)
			if err != nil {
				return err
			}
			if err := x.Drain(sides[i], &viols[i], &b.Progress); err != nil {
				return err
			}
			if err := tx.DropTree(coll.SideTree(name)); err != nil {
				return fmt.Errorf("index %s of %s: %w", name, ns, err)
			}
			for j := range next.Indexes {
				if ix := &next.Indexes[j]; ix.Name == name {
					ix.Ready, ix.Build = true, ""
					ix.Multikey = ix.Multikey || t.Multikey
					ix.NumTypes = mergeNumTypes(ix.NumTypes, t.NumTypes)
				}
			}
		}
		drained = time.Now()
		if err := catalog.Put(tx, &next); err != nil {
			return err
		}
		return b.logStep(tx, "commitIndexBuild", &next, nil)
	})
	if err != nil {
		return err
	}
	b.logDone(start, scanned, locked, loaded, drained)
	return nil
}

// logDone logs a finished build with the time each step took, as mongod
// logs "Index build: done building".
func (b *IndexBuild) logDone(start, scanned, locked, loaded, drained time.Time) {
	if b.ib.Log == nil {
		return
	}
	ms := func(from, to time.Time) float64 { return float64(to.Sub(from).Microseconds()) / 1000 }
	names := make([]string, len(b.Targets))
	for i, t := range b.Targets {
		names[i] = t.Spec.Name
	}
	end := time.Now()
	b.ib.Log.Info("Index build: done building", "c", "INDEX", "id", 20663, "ctx", "IndexBuildsCoordinator",
		"buildUUID", b.ID, "namespace", b.DB+"."+b.Coll, "indexes", names,
		"scanSortMillis", ms(start, scanned), "waitWriterMillis", ms(scanned, locked), "loadMillis", ms(locked, loaded),
		"drainMillis", ms(loaded, drained), "commitMillis", ms(drained, end), "durationMillis", ms(start, end))
}

// check reports whether coll still has every index of the build, as the
// build registered them.
func (b *IndexBuild) check(coll *catalog.Collection) error {
	if coll == nil || coll.UUID != b.UUID {
		return mongoerr.New(mongoerr.IndexBuildAborted, "Index build aborted: %s: collection %s.%s was dropped", b.ID, b.DB, b.Coll)
	}
	for _, t := range b.Targets {
		found := false
		for _, ix := range coll.Indexes {
			if ix.Name == t.Spec.Name && !ix.Ready && ix.Build == b.ID {
				found = true
			}
		}
		if !found {
			return mongoerr.New(mongoerr.IndexBuildAborted, "Index build aborted: %s: index %s was dropped", b.ID, t.Spec.Name)
		}
	}
	return nil
}

// abort removes the build's indexes and their trees from the collection
// (wherever it is now — renamed, even to another database: it is found by
// UUID), even when the command's context is cancelled.
func (b *IndexBuild) abort(ctx context.Context, cause error) error {
	return b.ib.Engine.KV.Update(context.WithoutCancel(ctx), func(tx *Tx) error {
		colls, err := catalog.List(tx, "")
		if err != nil {
			return err
		}
		for _, coll := range colls {
			if coll.UUID == b.UUID {
				if err := RemoveBuilds(tx, coll, func(ix catalog.Index) bool { return ix.Build == b.ID }); err != nil {
					return err
				}
				var why bson.Builder
				e := mongoerr.As(cause)
				why.AppendInt32("ok", 0)
				why.AppendInt32("code", e.Code)
				why.AppendString("codeName", e.CodeName())
				why.AppendString("errmsg", e.Message)
				return b.logStep(tx, "abortIndexBuild", coll, why.Finish())
			}
		}
		return nil
	})
}

// WaitForBuild waits until index ixName of db.coll is no longer being
// built (ready, or gone with its failed build), polling the data as it is
// now (another command's build commits it).
func (e *Engine) WaitForBuild(ctx context.Context, db, coll, ixName string) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return mongoerr.FromContext(ctx.Err())
		case <-t.C:
		}
		tx, err := e.Current()
		if err != nil {
			return err
		}
		cl, err := catalog.Get(tx, db, coll)
		tx.Rollback()
		if err != nil {
			return err
		}
		building := false
		if cl != nil {
			for _, ix := range cl.Indexes {
				if ix.Name == ixName && !ix.Ready {
					building = true
				}
			}
		}
		if !building {
			return nil
		}
	}
}
