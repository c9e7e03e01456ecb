package command

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// Operations in progress, for currentOp and killOp. Dispatch registers
// every command; the registered operation is also the command's context,
// which killOp cancels, and the command's scan loops notice at their next
// check and answer Interrupted (11601).
//
// Registering is on every command's path, so it is cheap: one allocation
// (the opInfo), and a table split in shards by operation id, each with its
// own lock, so that concurrent commands rarely meet on one.

// opInfo is one running operation and its context.
type opInfo struct {
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
	// opInfo stays within its allocation size class on every request).
	killed atomic.Pointer[killNote]
	mu     sync.Mutex
	done   chan struct{} // made on the first Done call

	stats opStats // for the slow-operation log (slowlog.go)
	// build is the progress of the index build the operation runs, if
	// any (indexbuild.go).
	build atomic.Pointer[index.Progress]
}

// killNote is how an operation was killed.
type killNote struct {
	// cause is why, when not by killOp: its client disconnected, or the
	// server shuts down (Err returns it).
	cause *mongoerr.Interruption
	at    time.Time
}

var _ context.Context = (*opInfo)(nil)

func (op *opInfo) Deadline() (time.Time, bool) { return op.parent.Deadline() }

func (op *opInfo) Value(key any) any {
	switch key {
	case opKey{}:
		return op
	case exec.StatsKey{}:
		return &op.stats
	}
	return op.parent.Value(key)
}

// Done is closed when the operation is killed.
func (op *opInfo) Done() <-chan struct{} {
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
func (op *opInfo) Err() error {
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

// kill cancels the operation's context (killOp).
func (op *opInfo) kill() { op.killFor(nil) }

// killFor cancels the operation's context for cause (nil: killOp).
func (op *opInfo) killFor(cause *mongoerr.Interruption) {
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

// disconnectKill reports when the operation was killed because its client
// disconnected.
func (op *opInfo) disconnectKill() (time.Time, bool) {
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
	m  map[int64]*opInfo
	_  [48]byte
}

// Ops is the table of running operations.
type Ops struct {
	next   atomic.Int64
	shards [opShards]opShard
}

// begin registers the command and makes the operation its context; end
// must be called when the command returns.
func (o *Ops) begin(c *Ctx, name string, start time.Time) *opInfo {
	op := &opInfo{parent: c.Context, id: o.next.Add(1), db: c.DB, name: name, body: redacted(name, c.Body), start: start}
	if c.Context.Done() != nil {
		op.parent, op.cancelParent = context.WithCancel(c.Context)
	}
	if c.Conn != nil {
		op.conn, op.client = c.Conn.ID, c.Conn.Remote
	}
	c.Context = op
	sh := &o.shards[op.id%opShards]
	sh.mu.Lock()
	if sh.m == nil {
		sh.m = make(map[int64]*opInfo)
	}
	sh.m[op.id] = op
	sh.mu.Unlock()
	return op
}

// KillConn kills the operations of connection conn for cause (its client
// went away) and returns how many it killed.
func (o *Ops) KillConn(conn int64, cause *mongoerr.Interruption) int {
	n := 0
	o.each(func(op *opInfo) {
		if op.conn == conn && op.killed.Load() == nil {
			op.killFor(cause)
			n++
		}
	})
	return n
}

// KillAll kills every running operation for cause (shutdown).
func (o *Ops) KillAll(cause *mongoerr.Interruption) int {
	n := 0
	o.each(func(op *opInfo) {
		if op.killed.Load() == nil {
			op.killFor(cause)
			n++
		}
	})
	return n
}

// end removes the operation from the table.
func (o *Ops) end(op *opInfo) {
	sh := &o.shards[op.id%opShards]
	sh.mu.Lock()
	delete(sh.m, op.id)
	sh.mu.Unlock()
	if op.cancelParent != nil {
		op.cancelParent()
	}
}

// each calls fn for every running operation (under its shard's lock).
func (o *Ops) each(fn func(*opInfo)) {
	for i := range o.shards {
		sh := &o.shards[i]
		sh.mu.Lock()
		for _, op := range sh.m {
			fn(op)
		}
		sh.mu.Unlock()
	}
}

// find returns the running operation id, or nil.
func (o *Ops) find(id int64) *opInfo {
	if id <= 0 {
		return nil
	}
	sh := &o.shards[id%opShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.m[id]
}

func currentOp(c *Ctx) error {
	// Every field but the command's own options filters the operations.
	var fb bson.Builder
	it := c.Body.Iter()
	it.Next()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "$all", "$ownOps", "$truncateOps", "idleConnections", "idleCursors", "idleSessions", "localOps", "backtrace":
			continue
		}
		if genericFields[e.Key] {
			continue
		}
		fb.AppendElement(e)
	}
	filter, err := query.ParseFilter(fb.Finish(), &query.Options{})
	if err != nil {
		return err
	}
	r := c.Reply
	r.StartArray("inprog")
	i := 0
	c.Env.Ops.documents(time.Now(), func(d bson.Doc) {
		if filter.Match(d) {
			r.AppendDocument(bson.Index(i), d)
			i++
		}
	})
	r.End()
	return nil
}

// documents calls fn with each running operation as currentOp lists it.
func (o *Ops) documents(now time.Time, fn func(bson.Doc)) {
	o.each(func(op *opInfo) {
		var b bson.Builder
		b.AppendString("type", "op")
		b.AppendInt64("opid", op.id)
		b.AppendBool("active", true)
		b.AppendInt64("secs_running", int64(now.Sub(op.start).Seconds()))
		b.AppendInt64("microsecs_running", now.Sub(op.start).Microseconds())
		b.AppendString("op", opKind(op.name))
		ns := op.db + ".$cmd"
		if first := bson.Doc(op.body).Iter(); first.Next() && first.Element().Value.Type == bson.TypeString {
			ns = op.db + "." + first.Element().Value.StringValue()
		}
		b.AppendString("ns", ns)
		b.AppendDocument("command", op.body)
		if p := op.build.Load(); p != nil {
			if msg := p.Message(); msg != "" {
				_, done, total := p.State()
				b.AppendString("msg", msg)
				b.StartDocument("progress")
				b.AppendInt64("done", done)
				b.AppendInt64("total", total)
				b.End()
			}
		}
		b.AppendString("client", op.client)
		b.AppendInt64("connectionId", op.conn)
		b.AppendString("desc", "conn"+strconv.FormatInt(op.conn, 10))
		fn(b.Finish())
	})
}

// currentOpStageOptions are the $currentOp stage's options. Cairn lists
// running commands only (no idle connections, cursors or sessions) and
// has one user namespace of operations, so they are accepted and change
// nothing.
var currentOpStageOptions = map[string]bool{
	"allUsers": true, "idleConnections": true, "idleCursors": true, "idleSessions": true,
	"localOps": true, "backtrace": true, "truncateOps": true, "targetAllNodes": true,
}

// expandCurrentOp turns a pipeline that starts with $currentOp (what
// mongosh's db.currentOp() runs) into one that starts with the running
// operations as $documents.
func expandCurrentOp(c *Ctx, coll string, stages []bson.Doc) ([]bson.Doc, error) {
	for i, st := range stages {
		it := st.Iter()
		if !it.Next() || it.Element().Key != "$currentOp" {
			continue
		}
		if i > 0 {
			return nil, mongoerr.New(mongoerr.StageMustBeFirst, "$currentOp is only valid as the first stage in a pipeline")
		}
		if c.DB != "admin" || coll != "" {
			return nil, mongoerr.New(mongoerr.InvalidNamespace, "$currentOp must be run against the 'admin' database with {aggregate: 1}")
		}
		spec := it.Element().Value
		if spec.Type != bson.TypeDocument {
			return nil, mongoerr.New(mongoerr.FailedToParse, "$currentOp options must be specified in an object, but found: %s", spec.Type)
		}
		opts := spec.Document().Iter()
		for opts.Next() {
			e := opts.Element()
			if !currentOpStageOptions[e.Key] {
				return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$currentOp.%s' is an unknown field.", e.Key)
			}
			if e.Value.Type != bson.TypeBoolean {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$currentOp.%s' is the wrong type '%s', expected type 'bool'", e.Key, e.Value.Type)
			}
		}
		// {$documents: {$literal: [...]}}: the commands inside the
		// operations must not be read as expressions.
		var b bson.Builder
		b.StartDocument("$documents")
		b.StartArray("$literal")
		n := 0
		c.Env.Ops.documents(time.Now(), func(d bson.Doc) {
			b.AppendDocument(bson.Index(n), d)
			n++
		})
		b.End()
		b.End()
		return append([]bson.Doc{b.Finish()}, stages[1:]...), nil
	}
	return stages, nil
}

func opKind(name string) string {
	switch name {
	case "find":
		return "query"
	case "getMore":
		return "getmore"
	case "insert":
		return "insert"
	case "update", "findAndModify":
		return "update"
	case "delete":
		return "remove"
	}
	return "command"
}

func killOp(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("op"); err != nil {
		return err
	}
	v, ok := a.lookup("op")
	if !ok {
		return mongoerr.New(mongoerr.BadValue, `Did not provide "op" field`)
	}
	id, ok := v.AsInt64()
	if !ok || !v.IsNumber() {
		return mongoerr.New(mongoerr.BadValue, `"op" field must be a number`)
	}
	if op := c.Env.Ops.find(id); op != nil {
		op.kill()
	}
	c.Reply.AppendString("info", "attempting to kill op")
	return nil
}
