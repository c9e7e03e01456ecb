package exec

import (
	"context"
	"fmt"
	"os"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/colcache"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/kv"
)

// Engine is the state the executors share, created once per server; the
// command layer's Env embeds it.
type Engine struct {
	KV *kv.DB
	// TempDir receives sorts' and aggregations' spill files (the data
	// directory's _tmp, emptied at startup); "" means os.TempDir().
	TempDir string
	// ColumnCache serves parallel aggregations' scans from in-memory
	// columns (colscan.go); nil: off.
	ColumnCache *colcache.Cache
	// Planner chooses plans and holds the plan cache (planrace.go).
	Planner
	// Counters are the execution figures serverStatus reports.
	Counters Counters
	// Oplog is local.oplog.rs in replica-set mode (nil on a standalone):
	// the collection writers and DDL log their changes to it in their
	// own transactions.
	Oplog *oplog.Log
}

// SpillDir is where spill files go.
func (e *Engine) SpillDir() string {
	if e.TempDir != "" {
		return e.TempDir
	}
	return os.TempDir()
}

// Snapshotter is a context that carries its operation's read snapshot (the
// command layer's Ctx): an executor reads in that snapshot, so a command's
// plan choice and its reads see the same data.
type Snapshotter interface {
	ReadSnapshot() (*kv.Tx, error)
}

// SnapshotOf returns the read transaction for ctx: its operation's
// snapshot when it carries one, else a new read transaction.
func SnapshotOf(ctx context.Context, e *Engine) (*kv.Tx, error) {
	if s, ok := ctx.(Snapshotter); ok {
		return s.ReadSnapshot()
	}
	return e.KV.BeginRead()
}

// DocKey is a document's key in its collection's data tree.
func DocKey(dst []byte, id bson.Value) []byte { return bson.AppendKey(dst, id, false) }

// DataTree opens the collection's data tree.
func DataTree(tx *kv.Tx, coll *catalog.Collection) (*kv.Tree, error) {
	t, err := tx.Tree(coll.DataTree())
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", coll.Namespace(), err)
	}
	return t, nil
}
