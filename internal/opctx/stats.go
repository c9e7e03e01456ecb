package opctx

import (
	"context"
	"sync/atomic"

	"github.com/cairndb/cairn/internal/exec"
)

// Stats are the figures a running operation accumulates for its
// slow-operation line and profile document (atomics: a pipeline's stages
// may run concurrently). A write command's statements (update, delete)
// each have their own, as mongod gives each statement its own line.
type Stats struct {
	planSummary  atomic.Pointer[string] // the first query stage's plan
	keysExamined atomic.Int64
	docsExamined atomic.Int64
	nreturned    atomic.Int64
	// hasSortStage and usedDisk: the query sorted in memory (spilling to
	// disk).
	hasSortStage, usedDisk atomic.Bool
	write                  exec.WriteFigures
}

var _ exec.Observer = (*Stats)(nil)

// StatsOf returns the figures ctx's stages add to (its operation's, or
// its write statement's), or nil outside a command.
func StatsOf(ctx context.Context) *Stats {
	s, _ := ctx.Value(exec.StatsKey{}).(*Stats)
	return s
}

// WithStats returns a context whose stages add to s instead (a write
// statement's own figures).
func WithStats(ctx context.Context, s *Stats) context.Context {
	return context.WithValue(ctx, exec.StatsKey{}, s)
}

// Examined implements exec.Observer: index keys and documents a query
// stage examined, and the plan it used (the first one reported).
func (s *Stats) Examined(plan string, keys, docs int64) {
	s.planSummary.CompareAndSwap(nil, &plan)
	s.keysExamined.Add(keys)
	s.docsExamined.Add(docs)
}

// Sorted implements exec.Observer: a blocking sort, as mongod's
// hasSortStage and usedDisk.
func (s *Stats) Sorted(spilled bool) {
	s.hasSortStage.Store(true)
	if spilled {
		s.usedDisk.Store(true)
	}
}

// Spilled records that a stage spilled to disk (usedDisk).
func (s *Stats) Spilled() { s.usedDisk.Store(true) }

// Returned counts documents a command returned to the client.
func (s *Stats) Returned(n int64) { s.nreturned.Add(n) }

// Writes are the write figures of the operation or statement.
func (s *Stats) Writes() *exec.WriteFigures { return &s.write }

// NoteReturned counts documents returned to ctx's operation, if any.
func NoteReturned(ctx context.Context, n int64) {
	if s := StatsOf(ctx); s != nil {
		s.Returned(n)
	}
}

// WriteFiguresOf returns the write figures ctx's writes add to, or nil.
func WriteFiguresOf(ctx context.Context) *exec.WriteFigures {
	if s := StatsOf(ctx); s != nil {
		return &s.write
	}
	return nil
}
