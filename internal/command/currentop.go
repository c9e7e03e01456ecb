package command

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// Operations in progress, for currentOp and killOp. Dispatch registers
// every command with a cancellable context; killOp cancels it, and the
// command's scan loops notice at their next check and answer Interrupted
// (11601).

type opInfo struct {
	id     int64
	conn   int64
	client string
	db     string
	name   string
	body   bson.Doc
	start  time.Time
	cancel context.CancelFunc
}

// Ops is the table of running operations.
type Ops struct {
	next atomic.Int64
	mu   sync.Mutex
	m    map[int64]*opInfo
}

// begin registers the command and gives it a cancellable context; the
// returned function ends it.
func (o *Ops) begin(c *Ctx, name string) func() {
	ctx, cancel := context.WithCancel(c.Context)
	c.Context = ctx
	op := &opInfo{id: o.next.Add(1), db: c.DB, name: name, body: c.Body, start: time.Now(), cancel: cancel}
	if c.Conn != nil {
		op.conn, op.client = c.Conn.ID, c.Conn.Remote
	}
	o.mu.Lock()
	if o.m == nil {
		o.m = make(map[int64]*opInfo)
	}
	o.m[op.id] = op
	o.mu.Unlock()
	return func() {
		o.mu.Lock()
		delete(o.m, op.id)
		o.mu.Unlock()
		cancel()
	}
}

// each calls fn for every running operation (under the table's lock).
func (o *Ops) each(fn func(*opInfo)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, op := range o.m {
		fn(op)
	}
}

// find returns the running operation id, or nil.
func (o *Ops) find(id int64) *opInfo {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.m[id]
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
	now := time.Now()
	r := c.Reply
	r.StartArray("inprog")
	i := 0
	c.Env.Ops.each(func(op *opInfo) {
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
		b.AppendString("client", op.client)
		b.AppendInt64("connectionId", op.conn)
		b.AppendString("desc", "conn"+strconv.FormatInt(op.conn, 10))
		d := b.Finish()
		if filter.Match(d) {
			r.AppendDocument(bson.Index(i), d)
			i++
		}
	})
	r.End()
	return nil
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
		op.cancel()
	}
	c.Reply.AppendString("info", "attempting to kill op")
	return nil
}
