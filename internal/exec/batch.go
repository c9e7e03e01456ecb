package exec

// Cursor batches. A find, aggregate or listing answers its first batch
// and every getMore its next one the same way: FillBatch appends the
// documents its source gives to the reply's array until the batch's
// count (101 by default for a first batch), the reply's size or the
// cursor's limit is reached, and Finish then closes the cursor (its
// source is exhausted, the limit reached, or singleBatch) or keeps it
// for getMore — a first batch registers a new cursor that keeps a clone
// of the command's snapshot, so that every getMore reads the data the
// first batch read.
//
// A tailable awaitData cursor's getMore that finds nothing waits, up to
// its await time, for a commit that changes the collection's data tree:
// a kv tree watch (a change stream: its commit point's shared channel,
// ChangeNotifier) is armed before each read, so no commit slips
// between the read and the wait, and each wake-up reads again in a fresh
// snapshot (the caller's Release drops the command's). The wait ends
// early with the command's error when its context ends (killOp, maxTimeMS,
// a disconnect, shutdown), and with CursorKilled when killCursors kills
// the cursor. It never polls.
//
// A source may ask a getMore to linger (Lingerer): when a read brought
// documents and more are coming fast — a change stream whose read found
// a group of events, at once or after a wake-up —, the getMore waits a
// short, bounded moment and reads once more into the same batch before
// it answers, so that one round trip carries the events of several
// commits instead of one (never past the await time; a context end or
// killCursors meanwhile answers the batch read so far, and a batch
// already full answers at once).

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// MaxBatchBytes bounds the documents of one reply, leaving room for the
// reply's own fields within the 16 MiB a BSON object may have.
const MaxBatchBytes = MaxBSONObjectSize - 16*1024

// DefaultAwaitTime is how long an awaitData getMore without maxTimeMS
// waits (mongod's default).
const DefaultAwaitTime = time.Second

// BatchOptions bound one batch of a cursor reply.
type BatchOptions struct {
	BatchSize int64 // 0 = no count limit
	// FirstBatch selects the field name and MongoDB's default of 101
	// documents for the first batch when BatchSize is absent.
	FirstBatch bool
	// Empty is an explicit batchSize of 0: the first batch holds nothing
	// and the cursor is opened for getMore.
	Empty bool
	// Tailable and AwaitData open a tailable cursor on the data tree
	// Watch (tailable.go); Await is a getMore's wait for data.
	Tailable, AwaitData bool
	Watch               string
	Await               time.Duration
}

// Batch is one batch being filled: from Cur (nil: a first batch, from
// Src), which may still return Limit documents (0: unlimited).
type Batch struct {
	Cur   *Cursor
	Src   Source
	Limit int64
	Opt   BatchOptions
	// Release, for an awaitData getMore, drops the command's snapshot
	// before a read after a wake-up; Wakeups counts those wake-ups.
	Release func()
	Wakeups *atomic.Int64
	// full is set once the batch holds its count or refused a document:
	// a getMore that might linger answers at once.
	full bool
}

// FillBatch appends b's documents to r as the array firstBatch or
// nextBatch and reports how many, and whether the source is exhausted.
// On an error the cursor (or the first batch's source) is discarded.
func (e *Engine) FillBatch(ctx context.Context, cs *Cursors, r *bson.Builder, b *Batch) (int64, bool, error) {
	field := "nextBatch"
	if b.Opt.FirstBatch {
		field = "firstBatch"
	}
	r.StartArray(field)
	var n, bytes int64
	maxDocs := b.Opt.BatchSize
	if maxDocs <= 0 && b.Opt.FirstBatch {
		maxDocs = 101
	}
	if b.Limit > 0 && (maxDocs <= 0 || b.Limit < maxDocs) {
		maxDocs = b.Limit
	}
	// emit refuses (and the source keeps for the next batch) a document
	// that would overflow the batch.
	emit := func(d bson.Doc) bool {
		if b.Opt.Empty || (maxDocs > 0 && n >= maxDocs) {
			b.full = true
			return false
		}
		if n > 0 && bytes+int64(len(d)) > MaxBatchBytes {
			b.full = true
			return false
		}
		r.AppendDocument(bson.Index(int(n)), d)
		n++
		bytes += int64(len(d))
		if maxDocs > 0 && n >= maxDocs {
			b.full = true
		}
		return true
	}
	fill := func() (bool, error) { return b.Src.Fill(ctx, emit) }
	var exhausted bool
	var err error
	if b.Cur != nil && b.Opt.Await > 0 {
		exhausted, err = e.awaitFill(ctx, cs, b, fill, &n)
	} else {
		exhausted, err = fill()
	}
	if err != nil {
		cs.discard(b.Cur, b.Src)
		return 0, false, err
	}
	r.End()
	return n, exhausted, nil
}

// awaitFill waits, after a fill that returned nothing, for a commit to the
// cursor's collection and fills again, until a document came (n > 0), the
// await time is over, or the wait is ended (above). fill reads current
// data.
func (e *Engine) awaitFill(ctx context.Context, cs *Cursors, b *Batch, fill func() (bool, error), n *int64) (bool, error) {
	cur := b.Cur
	// A change stream waits for the majority commit point to advance
	// (its shared channel, loaded before each read, no registration of
	// its own); other cursors register a watch of their tree.
	var changed func() <-chan struct{}
	if cn, ok := cur.Src.(ChangeNotifier); ok && cn.Changed() != nil {
		changed = cn.Changed
	} else {
		watch := e.KV.WatchTree(cur.Watch)
		defer watch.Cancel()
		changed = func() <-chan struct{} {
			watch.Rearm()
			return watch.C()
		}
	}
	ch := changed()
	exhausted, err := fill()
	if err != nil || exhausted {
		return exhausted, err
	}
	if *n > 0 {
		// Documents were waiting: a source that is being written faster
		// than its reader's round trips may still ask to linger.
		return e.linger(ctx, b, b.Opt.Await, fill, *n, false)
	}
	deadline := time.Now().Add(b.Opt.Await)
	timer := time.NewTimer(b.Opt.Await)
	defer timer.Stop()
	if cs.AwaitHook != nil {
		cs.AwaitHook(cur)
	}
	for {
		select {
		case <-ch:
		case <-timer.C:
			return false, nil
		case <-ctx.Done():
			return false, mongoerr.FromContext(ctx.Err())
		case <-cur.Killed():
			return false, mongoerr.New(mongoerr.CursorKilled, "cursor id %d was killed while awaiting data", cur.ID)
		}
		if b.Wakeups != nil {
			b.Wakeups.Add(1)
		}
		ch = changed()
		if b.Release != nil {
			b.Release() // read what the commit wrote
		}
		if exhausted, err = fill(); err != nil || exhausted || *n > 0 {
			if err == nil && !exhausted {
				return e.linger(ctx, b, time.Until(deadline), fill, *n, true)
			}
			return exhausted, err
		}
	}
}

// linger, when the cursor's source asks for it after a read that brought
// n documents (Lingerer; woken: the read followed a wake-up), waits the
// time the source names, never more than left of the await time, and
// reads once more into the batch before it answers. It sleeps through
// the commits meanwhile rather than reading at each: a hundred lingering
// change streams then cost one wake-up and one read each, not one per
// journal flush. A batch already full answers at once; the command's end
// and killCursors answer what the batch holds.
func (e *Engine) linger(ctx context.Context, b *Batch, left time.Duration, fill func() (bool, error), n int64, woken bool) (bool, error) {
	cur := b.Cur
	lg, ok := cur.Src.(Lingerer)
	if !ok || b.full {
		return false, nil
	}
	d := min(lg.Linger(n, woken), left)
	if d <= 0 {
		return false, nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return false, nil // answer what the batch holds
	case <-cur.Killed():
		return false, nil
	}
	if b.Release != nil {
		b.Release()
	}
	return fill()
}

// Lingerer is a source that may ask an awaitData getMore whose read
// brought n documents — at once, or after a wake-up (woken) — to wait d
// for more and read once more before it answers (0: answer now).
type Lingerer interface {
	Linger(n int64, woken bool) (d time.Duration)
}

// ChangeNotifier is a source that provides its own wake-up channel (a
// change stream's commit point): Changed is loaded before each read and
// closed by the next advance that may matter; nil means none.
type ChangeNotifier interface {
	Changed() <-chan struct{}
}

// discard closes a cursor that failed (removing it from the table) or,
// for a first batch, its source.
func (cs *Cursors) discard(cur *Cursor, src Source) {
	if cur != nil {
		cs.Remove(cur.ID)
		cur.Close()
	} else {
		src.Close()
	}
}

// FinishBatch ends b after n documents: done (the source exhausted,
// singleBatch) or its limit reached closes the cursor; otherwise a
// continued cursor keeps its remaining limit, and a first batch
// registers nc (its Owner, Origin, Lsid, NoTimeout and AtClusterTime set
// by the caller; the rest here), which keeps a clone of snap (the
// command's snapshot, if open) unless it is tailable. It returns the
// cursor's id, 0 when closed.
func (cs *Cursors) FinishBatch(b *Batch, n int64, done bool, ns string, nc *Cursor, snap *Snapshot) (int64, error) {
	limit := b.Limit
	if limit > 0 {
		limit -= n
		done = done || limit <= 0
	}
	switch {
	case done:
		cs.discard(b.Cur, b.Src)
		return 0, nil
	case b.Cur != nil:
		b.Cur.Limit = limit
		b.Cur.LastUsed = time.Now()
		return b.Cur.ID, nil
	}
	nc.NS, nc.Src, nc.Limit = ns, b.Src, limit
	nc.Tailable, nc.AwaitData, nc.Watch = b.Opt.Tailable, b.Opt.AwaitData, b.Opt.Watch
	if b.Opt.AwaitData {
		nc.NewKilled()
	}
	if snap.Open() && !b.Opt.Tailable { // a tailable cursor reads current data
		var err error
		if nc.Snap, err = snap.Clone(); err != nil {
			b.Src.Close()
			return 0, err
		}
	}
	cs.Add(nc)
	return nc.ID, nil
}
