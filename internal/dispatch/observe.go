package dispatch

import (
	"context"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/opctx"
)

// The commands' side of the operation layer (internal/opctx): what
// Dispatch and the handlers hand it of a command. The layer keeps no
// reference to a Ctx; it is given the request's parts explicitly.

// beginOp registers the command in the operation table; the operation is
// its context from then on.
func beginOp(c *Ctx, name string, start time.Time) *opctx.Op {
	var conn int64
	var client string
	if c.Conn != nil {
		conn, client = c.Conn.ID, c.Conn.Remote
	}
	op := c.Env.Ops.Begin(c.Context, conn, client, c.DB, name, c.Body, start)
	c.Context = op
	return op
}

// request is the command as the slow-operation log and the profiler
// describe it.
func (c *Ctx) request() *opctx.Request {
	r := &opctx.Request{DB: c.DB, Name: c.Name, Body: c.Body}
	if c.Conn != nil {
		r.Origin = &opctx.Origin{ID: c.Conn.ID, Remote: c.Conn.Remote, Meta: c.Conn.ClientMeta}
	}
	return r
}

// ConnCtxName is the "ctx" of the connection's log lines ("conn" and its
// number).
func ConnCtxName(c *Ctx) string {
	if c.Conn == nil {
		return "conn"
	}
	return (&opctx.Origin{ID: c.Conn.ID}).CtxName()
}

// slowEnough reports whether a command (or statement) that took d is
// logged.
func slowEnough(c *Ctx, d time.Duration) bool {
	return opctx.SlowEnough(c, c.Env.Log, c.Env.SlowMS.Load(), d)
}

// logSlowOp writes the slow-operation line of a command that took d, if d
// reaches the threshold.
func logSlowOp(c *Ctx, op *opctx.Op, coll string, d time.Duration, reply bson.Doc) {
	if slowEnough(c, d) {
		opctx.LogSlowOp(c.Env.Log, c.request(), op.Stats(), coll, d, reply)
	}
}

// profileOp writes the command's profile document, if its database's
// level asks for it.
func profileOp(c *Ctx, op *opctx.Op, coll string, d time.Duration, reply bson.Doc) {
	if !c.Env.Profiler.Active() {
		return
	}
	c.Env.Profiler.Op(&c.Env.Engine, c.Env.Log, c.Env.SlowMS.Load(), c.request(), op, coll, d, reply)
}

// commandCollection is the collection named by the command's first field,
// or "".
func commandCollection(c *Ctx) string {
	it := c.Body.Iter()
	if !it.Next() || it.Element().Value.Type != bson.TypeString {
		return ""
	}
	return it.Element().Value.StringValue()
}

// WriteFiguresOf returns the write figures ctx's writes add to, or nil.
func WriteFiguresOf(ctx context.Context) *exec.WriteFigures { return opctx.WriteFiguresOf(ctx) }

// NoteExamined adds index keys and documents a query stage examined, and
// the plan it used, to the operation's figures.
func NoteExamined(ctx context.Context, plan string, keys, docs int64) {
	exec.NoteExamined(ctx, plan, keys, docs)
}

// NoteReturned counts documents a command returned to the client.
func NoteReturned(ctx context.Context, n int64) { opctx.NoteReturned(ctx, n) }

// Statement is one update or delete statement being run: its own context
// (C) for the figures its stages add (Stats), and its start.
type Statement struct {
	C     *Ctx
	Stats opctx.Stats
	start time.Time
}

// BeginStatement returns a copy of c whose query and write stages add to
// a fresh set of figures, the statement's.
func BeginStatement(c *Ctx) *Statement {
	s := &Statement{start: time.Now()}
	sc := *c
	sc.Context = opctx.WithStats(c.Context, &s.Stats)
	s.C = &sc
	return s
}

// End profiles the statement and logs its slow-operation line (typ
// "update" or "remove") if it took at least slowms; err is the
// statement's error, if it failed.
func (s *Statement) End(typ, coll string, stmt bson.Doc, err error) {
	c := s.C
	d := time.Since(s.start)
	if c.Env.Profiler.On() {
		c.Env.Profiler.Statement(c.Env.SlowMS.Load(), c.request(), opctx.Of(c), typ, coll, stmt, &s.Stats, d, err)
	}
	if slowEnough(c, d) {
		opctx.LogStatement(c.Env.Log, c.request(), typ, coll, stmt, &s.Stats, d, err)
	}
}
