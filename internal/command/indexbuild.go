package command

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
//     every writer — they all go through collWriter, which reads the
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
// indexes when it starts again (exec.AbortUnfinishedBuilds); MongoDB would
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
	"github.com/cairndb/cairn/internal/opctx"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// indexBuild is one createIndexes call's build of one or more indexes on a
// collection with documents (steps 2 and 3 above).
type indexBuild struct {
	db, coll   string
	uuid       [16]byte
	id         string
	targets    []*index.BuildTarget
	durability exec.Durability
	progress   index.Progress
}

// newBuildID returns a fresh build id.
func newBuildID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("index build id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// register adds the build's indexes to next (not yet ready) and creates
// their empty tree and side tree in tx (step 1).
func (b *indexBuild) register(tx *exec.Tx, next *catalog.Collection) error {
	for _, t := range b.targets {
		next.Indexes = append(next.Indexes, catalog.Index{Name: t.Spec.Name, Spec: t.Spec.Raw, Build: b.id})
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
func (b *indexBuild) logStep(c *Ctx, tx *exec.Tx, what string, coll *catalog.Collection, cause bson.Doc) error {
	if c.Env.Oplog == nil {
		return nil
	}
	var id [16]byte
	if _, err := hex.Decode(id[:], []byte(b.id)); err != nil {
		return fmt.Errorf("index build id %q: %w", b.id, err)
	}
	specs := make([]bson.Doc, len(b.targets))
	for i, t := range b.targets {
		specs[i] = t.Spec.Raw
	}
	return c.Env.Oplog.IndexBuild(tx, what, coll, id, specs, cause)
}

// run scans, loads and commits the build (steps 2 and 3), showing its
// progress in currentOp; on failure it removes what the build left.
func (b *indexBuild) run(c *Ctx) error {
	if op := opctx.Of(c); op != nil {
		op.ShowBuild(&b.progress)
		defer op.ShowBuild(nil)
	}
	err := b.build(c)
	if err != nil {
		if cerr := b.abort(c, ctxErr(err)); cerr != nil {
			c.Env.Log.Error("cleaning up a failed index build", "ns", b.db+"."+b.coll, "build", b.id, "error", cerr.Error())
		}
		return ctxErr(err)
	}
	return nil
}

func (b *indexBuild) build(c *Ctx) error {
	start := time.Now()
	rtx, err := c.readTx()
	if err != nil {
		return err
	}
	defer rtx.Rollback()
	coll, err := catalog.Get(rtx, b.db, b.coll)
	if err != nil {
		return err
	}
	if err := b.check(coll); err != nil {
		return err
	}
	data, err := exec.DataTree(rtx, coll)
	if err != nil {
		return err
	}
	b.progress.Start(index.PhaseScan, data.Len())
	if h := c.Env.state.indexBuildHook; h != nil {
		h(index.PhaseScan)
	}
	sorted, err := index.Extract(c, data, coll.Namespace(), b.targets, index.BuildOptions{TempDir: c.Env.tempDir(), Progress: &b.progress})
	if err != nil {
		return err
	}
	defer sorted.Close()
	rtx.Rollback()
	if err := c.Err(); err != nil {
		return err
	}
	scanned := time.Now()
	b.progress.Start(index.PhaseLoad, sorted.Entries())
	if h := c.Env.state.indexBuildHook; h != nil {
		h(index.PhaseLoad)
	}
	var locked, loaded, drained time.Time
	err = c.writeTx(b.durability, func(tx *exec.Tx) error {
		locked = time.Now()
		coll, err := catalog.Get(tx, b.db, b.coll)
		if err != nil {
			return err
		}
		if err := b.check(coll); err != nil {
			return err
		}
		next := *coll
		next.Indexes = append([]catalog.Index(nil), coll.Indexes...)
		ns := coll.Namespace()
		viols := make([]index.Violations, len(b.targets))
		sides := make([]*exec.Tree, len(b.targets))
		for i, t := range b.targets {
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
		if h := c.Env.state.indexBuildHook; h != nil {
			h(index.PhaseDrain)
		}
		for i, t := range b.targets {
			name := t.Spec.Name
			x, err := index.Open(tx, coll.IndexTree(name), ns, t.Spec)
			if err != nil {
				return err
			}
			if err := x.Drain(sides[i], &viols[i], &b.progress); err != nil {
				return err
			}
			if err := tx.DropTree(coll.SideTree(name)); err != nil {
				return fmt.Errorf("index %s of %s: %w", name, ns, err)
			}
			for j := range next.Indexes {
				if ix := &next.Indexes[j]; ix.Name == name {
					ix.Ready, ix.Build = true, ""
					ix.Multikey = ix.Multikey || t.Multikey
				}
			}
		}
		drained = time.Now()
		if err := catalog.Put(tx, &next); err != nil {
			return err
		}
		return b.logStep(c, tx, "commitIndexBuild", &next, nil)
	})
	if err != nil {
		return err
	}
	b.logDone(c, start, scanned, locked, loaded, drained)
	return nil
}

// logDone logs a finished build with the time each step took, as mongod
// logs "Index build: done building".
func (b *indexBuild) logDone(c *Ctx, start, scanned, locked, loaded, drained time.Time) {
	ms := func(from, to time.Time) float64 { return float64(to.Sub(from).Microseconds()) / 1000 }
	names := make([]string, len(b.targets))
	for i, t := range b.targets {
		names[i] = t.Spec.Name
	}
	end := time.Now()
	c.Env.Log.Info("Index build: done building", "c", "INDEX", "id", 20663, "ctx", "IndexBuildsCoordinator",
		"buildUUID", b.id, "namespace", b.db+"."+b.coll, "indexes", names,
		"scanSortMillis", ms(start, scanned), "waitWriterMillis", ms(scanned, locked), "loadMillis", ms(locked, loaded),
		"drainMillis", ms(loaded, drained), "commitMillis", ms(drained, end), "durationMillis", ms(start, end))
}

// check reports whether coll still has every index of the build, as the
// build registered them.
func (b *indexBuild) check(coll *catalog.Collection) error {
	if coll == nil || coll.UUID != b.uuid {
		return mongoerr.New(mongoerr.IndexBuildAborted, "Index build aborted: %s: collection %s.%s was dropped", b.id, b.db, b.coll)
	}
	for _, t := range b.targets {
		found := false
		for _, ix := range coll.Indexes {
			if ix.Name == t.Spec.Name && !ix.Ready && ix.Build == b.id {
				found = true
			}
		}
		if !found {
			return mongoerr.New(mongoerr.IndexBuildAborted, "Index build aborted: %s: index %s was dropped", b.id, t.Spec.Name)
		}
	}
	return nil
}

// abort removes the build's indexes and their trees from the collection
// (wherever it is now — renamed, even to another database: it is found by
// UUID), even when the command's context is cancelled.
func (b *indexBuild) abort(c *Ctx, cause error) error {
	return c.Env.KV.Update(context.WithoutCancel(c), func(tx *exec.Tx) error {
		colls, err := catalog.List(tx, "")
		if err != nil {
			return err
		}
		for _, coll := range colls {
			if coll.UUID == b.uuid {
				if err := exec.RemoveBuilds(tx, coll, func(ix catalog.Index) bool { return ix.Build == b.id }); err != nil {
					return err
				}
				var why bson.Builder
				e := mongoerr.As(cause)
				why.AppendInt32("ok", 0)
				why.AppendInt32("code", e.Code)
				why.AppendString("codeName", e.CodeName())
				why.AppendString("errmsg", e.Message)
				return b.logStep(c, tx, "abortIndexBuild", coll, why.Finish())
			}
		}
		return nil
	})
}

// waitForBuild waits until index ixName of db.coll is no longer being
// built (ready, or gone with its failed build).
func waitForBuild(c *Ctx, coll, ixName string) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-c.Done():
			return ctxErr(c.Err())
		case <-t.C:
		}
		tx, err := c.currentTx() // another command's build: poll what is committed now
		if err != nil {
			return err
		}
		cl, err := catalog.Get(tx, c.DB, coll)
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
