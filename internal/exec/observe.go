package exec

import (
	"context"
	"sync/atomic"
)

// Counters are the server-wide figures executors add to (serverStatus's
// metrics.queryExecutor and metrics.operation.scanAndOrder).
type Counters struct {
	// Index keys and documents examined by queries
	// (metrics.queryExecutor.scanned and scannedObjects).
	KeysExamined, DocsExamined atomic.Int64
	// ScanAndOrder counts queries and writes that sorted their documents
	// in memory (metrics.operation.scanAndOrder).
	ScanAndOrder atomic.Int64
}

// StatsKey finds, among a context's values, the Observer of the
// operation (or write statement) the context runs.
type StatsKey struct{}

// Observer receives an operation's execution figures: the command layer's
// slow-operation and profiler statistics implement it.
type Observer interface {
	// Examined adds index keys and documents a stage examined, and the
	// plan it used.
	Examined(plan string, keys, docs int64)
	// Sorted records a blocking (in-memory) sort, which spilled to disk
	// or not (mongod's hasSortStage and usedDisk).
	Sorted(spilled bool)
	// Spilled records that a stage wrote to disk (mongod's usedDisk).
	Spilled()
}

// NoteExamined reports what a query stage examined to ctx's Observer, if
// any.
func NoteExamined(ctx context.Context, plan string, keys, docs int64) {
	if o, ok := ctx.Value(StatsKey{}).(Observer); ok {
		o.Examined(plan, keys, docs)
	}
}

// Examined reports what a stage examined to ctx's Observer and adds it to
// the server's counters.
func (e *Engine) Examined(ctx context.Context, plan string, keys, docs int64) {
	NoteExamined(ctx, plan, keys, docs)
	e.Counters.KeysExamined.Add(keys)
	e.Counters.DocsExamined.Add(docs)
}

// NoteSpilled records in ctx's Observer, if any, that a stage spilled.
func NoteSpilled(ctx context.Context) {
	if o, ok := ctx.Value(StatsKey{}).(Observer); ok {
		o.Spilled()
	}
}

// NoteSorted records a blocking (in-memory) sort: in ctx's Observer, and
// in metrics.operation.scanAndOrder.
func (e *Engine) NoteSorted(ctx context.Context, spilled bool) {
	e.Counters.ScanAndOrder.Add(1)
	if o, ok := ctx.Value(StatsKey{}).(Observer); ok {
		o.Sorted(spilled)
	}
}
