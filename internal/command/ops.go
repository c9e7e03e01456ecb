package command

import (
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/dispatch"
	"github.com/cairndb/cairn/internal/opctx"
	"github.com/cairndb/cairn/internal/session"
)

// The commands over the operation layer (internal/opctx, which parses
// their requests: commands.go): currentOp and killOp over the operation
// table, top over the per-namespace counters, profile over the profiler
// and the slow-operation threshold.

func currentOp(c *Ctx) error {
	req, err := opctx.ParseCurrentOp(c.Body, dispatch.IsGenericField)
	if err != nil {
		return err
	}
	now := time.Now()
	var idle func(func(bson.Doc))
	if s := c.Env.Sessions; s != nil {
		idle = func(add func(bson.Doc)) { s.IdleTxns(func(t session.IdleTxn) { add(t.Doc(now)) }) }
	}
	c.Env.Ops.AppendCurrentOp(c.Reply, req, now, idle)
	return nil
}

func killOp(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("op"); err != nil {
		return err
	}
	id, err := opctx.KillOpID(a.Lookup("op"))
	if err != nil {
		return err
	}
	if op := c.Env.Ops.Find(id); op != nil {
		op.Kill()
	}
	c.Reply.AppendString("info", "attempting to kill op")
	return nil
}

func top(c *Ctx) error {
	c.Env.Top.AppendTotals(c.Reply)
	return nil
}

// profile reads and sets the profiler's settings: the database's level
// (0 off, 1 operations at least slowms, 2 every operation, written to
// its system.profile: opctx.Profiler) and the slowms threshold that the
// slow-operation log and level 1 share.
func profile(c *Ctx) error {
	req, err := opctx.ParseProfile(c.Body, dispatch.IsGenericField)
	if err != nil {
		return err
	}
	c.Env.Profiler.ApplyProfile(c.Reply, req, c.DB, &c.Env.SlowMS, c.Env.Log, dispatch.ConnCtxName(c))
	return nil
}
