// Package opctx is the layer around a command's dispatch: what Cairn
// knows of an operation while it runs and after it ends, apart from what
// the command does. It holds
//
//   - the table of running operations (Table, Op): currentOp lists it,
//     killOp, a client's disconnect and a shutdown kill its entries, and
//     the registered Op is itself the command's context, so every scan,
//     sort and index build that watches its context stops;
//   - the figures an operation accumulates (Stats: the plan, the keys and
//     documents examined, the documents returned, sorts and writes) as
//     the execution layer reports them (exec.Observer);
//   - the slow-operation log (LogSlowOp, LogStatement), the database
//     profiler (Profiler) and the per-namespace usage of top (Top), with the
//     latency classes the server's opLatencies use (LatencyClass);
//   - the redaction of secrets in what they show (Redacted).
//
// It does not import internal/command: the handlers of currentOp, killOp,
// top and profile stay there and call it, and Dispatch hands it what it
// needs explicitly (the request's database, name and body, its Origin),
// so that the layer can be read, tested and reused without the commands.
// Its figures are kept in the server's state (command.Env holds a Table, a
// Top and a Profiler), never in package variables.
package opctx

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Operations in progress, for currentOp and killOp. Dispatch registers
// every command; the registered operation is also the command's context,
// which killOp cancels, and the command's scan loops notice at their next
// check and answer Interrupted (11601).
//
// Registering is on every command's path, so it is cheap: one allocation
// (the Op), and a table split in shards by operation id, each with its
// own lock, so that concurrent commands rarely meet on one.

// Op is one running operation and its context.
type Op struct {
	parent context.Context
	// cancelParent is set when the parent context can itself be cancelled:
	// the operation then wraps it with context.WithCancel (not on the
	// server's request path, whose parent never ends).
	cancelParent context.CancelFunc

	id     int64
	conn   int64
	client string
	db     string
	name   string
	body   bson.Doc
	start  time.Time

	// killed is set once the operation is killed (one pointer, so that
	// Op stays within its allocation size class on every request).
	killed atomic.Pointer[killNote]
	mu     sync.Mutex
	done   chan struct{} // made on the first Done call

	// session is the logical session the operation runs for (nil:
	// none), which killSessions matches; set before the command runs.
	session any

	stats Stats // for the slow-operation log and the profiler
	// build is the progress of the index build the operation runs, if
	// any (currentOp shows it).
	build atomic.Pointer[index.Progress]
}

// killNote is how an operation was killed.
type killNote struct {
	// cause is why, when not by killOp: its client disconnected, or the
	// server shuts down (Err returns it).
	cause *mongoerr.Interruption
	at    time.Time
}

var _ context.Context = (*Op)(nil)

// opKey finds the running operation among a context's values, however the
// command wrapped its context (maxTimeMS adds a deadline, for one).
type opKey struct{}

// Of returns the operation ctx belongs to, or nil outside a command.
func Of(ctx context.Context) *Op {
	op, _ := ctx.Value(opKey{}).(*Op)
	return op
}

// Deadline is the parent's deadline (maxTimeMS wraps the Op itself).
func (op *Op) Deadline() (time.Time, bool) { return op.parent.Deadline() }

// Value finds the operation (Of) and its figures (exec.StatsKey) among the
// context's values.
func (op *Op) Value(key any) any {
	switch key {
	case opKey{}:
		return op
	case exec.StatsKey{}:
		return &op.stats
	}
	return op.parent.Value(key)
}

// Done is closed when the operation is killed.
func (op *Op) Done() <-chan struct{} {
	if op.cancelParent != nil {
		return op.parent.Done()
	}
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.done == nil {
		op.done = make(chan struct{})
		if op.killed.Load() != nil {
			close(op.done)
		}
	}
	return op.done
}

// Err is context.Canceled once the operation is killed (by killOp), or
// the *mongoerr.Interruption it was killed for, which is a
// context.Canceled too.
func (op *Op) Err() error {
	k := op.killed.Load()
	if op.cancelParent != nil {
		if err := op.parent.Err(); err != nil {
			if k != nil && k.cause != nil {
				return k.cause
			}
			return err
		}
		return nil
	}
	if k != nil {
		if k.cause != nil {
			return k.cause
		}
		return context.Canceled
	}
	return nil
}

// ID is the operation's id (currentOp's opid).
func (op *Op) ID() int64 { return op.id }

// Name is the command the operation runs.
func (op *Op) Name() string { return op.name }

// Stats are the figures the operation's stages add to (nil for a nil Op).
func (op *Op) Stats() *Stats {
	if op == nil {
		return nil
	}
	return &op.stats
}

// ShowBuild makes currentOp show the progress of the index build the
// operation runs (nil: none).
func (op *Op) ShowBuild(p *index.Progress) { op.build.Store(p) }

// Kill cancels the operation's context (killOp).
func (op *Op) Kill() { op.KillFor(nil) }

// KillFor cancels the operation's context for cause (nil: killOp).
func (op *Op) KillFor(cause *mongoerr.Interruption) {
	first := op.killed.CompareAndSwap(nil, &killNote{cause: cause, at: time.Now()})
	if op.cancelParent != nil {
		op.cancelParent()
		return
	}
	op.mu.Lock()
	if first && op.done != nil {
		close(op.done)
	}
	op.mu.Unlock()
}

// DisconnectKill reports when the operation was killed because its client
// disconnected.
func (op *Op) DisconnectKill() (time.Time, bool) {
	k := op.killed.Load()
	if k == nil || k.cause != mongoerr.ErrClientDisconnect {
		return time.Time{}, false
	}
	return k.at, true
}

// opShards is the number of shards of the operation table.
const opShards = 64

// opShard is one shard, padded to its own cache line.
type opShard struct {
	mu sync.Mutex
	m  map[int64]*Op
	_  [48]byte
}

// Table is the table of running operations. The zero Table is ready.
type Table struct {
	next   atomic.Int64
	shards [opShards]opShard
}

// Begin registers an operation running command name (body is the request,
// redacted before currentOp shows it) on database db for connection conn
// (0: none) at remote address client. The returned Op is the command's
// context from then on, derived from parent; End must be called when the
// command returns.
func (t *Table) Begin(parent context.Context, conn int64, client, db, name string, body bson.Doc, start time.Time) *Op {
	op := &Op{parent: parent, id: t.next.Add(1), conn: conn, client: client, db: db, name: name, body: Redacted(name, body), start: start}
	if parent.Done() != nil {
		op.parent, op.cancelParent = context.WithCancel(parent)
	}
	sh := &t.shards[op.id%opShards]
	sh.mu.Lock()
	if sh.m == nil {
		sh.m = make(map[int64]*Op)
	}
	sh.m[op.id] = op
	sh.mu.Unlock()
	return op
}

// End removes the operation from the table.
func (t *Table) End(op *Op) {
	sh := &t.shards[op.id%opShards]
	sh.mu.Lock()
	delete(sh.m, op.id)
	sh.mu.Unlock()
	if op.cancelParent != nil {
		op.cancelParent()
	}
}

// KillConn kills the operations of connection conn for cause (its client
// went away) and returns how many it killed.
func (t *Table) KillConn(conn int64, cause *mongoerr.Interruption) int {
	n := 0
	t.Each(func(op *Op) {
		if op.conn == conn && op.killed.Load() == nil {
			op.KillFor(cause)
			n++
		}
	})
	return n
}

// SetSession records the logical session op runs for (a comparable
// key), before the command runs.
func (op *Op) SetSession(k any) { op.session = k }

// KillSessions kills the operations whose session match accepts and
// returns how many it killed (killSessions and its relatives: a walk of
// the table, so that registering an operation pays nothing for it).
func (t *Table) KillSessions(match func(session any) bool) int {
	n := 0
	t.Each(func(op *Op) {
		if op.session != nil && op.killed.Load() == nil && match(op.session) {
			op.Kill()
			n++
		}
	})
	return n
}

// KillAll kills every running operation for cause (shutdown).
func (t *Table) KillAll(cause *mongoerr.Interruption) int {
	n := 0
	t.Each(func(op *Op) {
		if op.killed.Load() == nil {
			op.KillFor(cause)
			n++
		}
	})
	return n
}

// Each calls fn for every running operation (under its shard's lock: fn
// must not begin or end operations).
func (t *Table) Each(fn func(*Op)) {
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.Lock()
		for _, op := range sh.m {
			fn(op)
		}
		sh.mu.Unlock()
	}
}

// Find returns the running operation id, or nil.
func (t *Table) Find(id int64) *Op {
	if id <= 0 {
		return nil
	}
	sh := &t.shards[id%opShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.m[id]
}
