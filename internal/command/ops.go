package command

import (
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/internal/session"
)

// The commands over the operation layer (internal/opctx): currentOp and
// killOp over the operation table, top over the per-namespace counters,
// profile over the profiler and the slow-operation threshold.

func currentOp(c *Ctx) error {
	// Every field but the command's own options filters the operations.
	var fb bson.Builder
	idleSessions := true
	it := c.Body.Iter()
	it.Next()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "idleSessions":
			idleSessions = e.Value.Truthy()
			continue
		case "$all", "$ownOps", "$truncateOps", "idleConnections", "idleCursors", "localOps", "backtrace":
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
	now := time.Now()
	c.Env.Ops.Documents(now, func(d bson.Doc) {
		if filter.Match(d) {
			r.AppendDocument(bson.Index(i), d)
			i++
		}
	})
	if idleSessions && c.Env.Sessions != nil {
		c.Env.Sessions.IdleTxns(func(t session.IdleTxn) {
			if d := t.Doc(now); filter.Match(d) {
				r.AppendDocument(bson.Index(i), d)
				i++
			}
		})
	}
	r.End()
	return nil
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
	first := newArgs(c).first()
	level, ok := first.AsInt64()
	if !ok {
		return mongoerr.New(mongoerr.TypeMismatch, "profile level must be a number")
	}
	if level < -1 || level > 2 {
		return mongoerr.New(mongoerr.BadValue, "Invalid profiling level: %d", level)
	}
	newSlow := int64(-1)
	it := c.Body.Iter()
	it.Next()
	for it.Next() {
		e := it.Element()
		if genericFields[e.Key] {
			continue
		}
		switch e.Key {
		case "slowms":
			n, ok := e.Value.AsInt64()
			if !ok {
				return mongoerr.New(mongoerr.TypeMismatch, "slowms must be a number")
			}
			newSlow = n
		case "sampleRate":
			if f, ok := e.Value.AsFloat64(); !ok || f != 1 {
				return mongoerr.New(mongoerr.BadValue, "Cairn profiles every qualifying operation: sampleRate must be 1")
			}
		case "filter":
			return mongoerr.New(mongoerr.BadValue, "profile filters are not supported by Cairn")
		default:
			return mongoerr.New(mongoerr.BadValue, "unknown profile option: %s", e.Key)
		}
	}
	wasSlow := c.Env.SlowMS.Load()
	wasLevel := c.Env.profiler.Level(c.DB)
	if level >= 0 {
		c.Env.profiler.SetLevel(c.DB, level)
	}
	c.Reply.AppendInt32("was", int32(wasLevel))
	c.Reply.AppendInt32("slowms", int32(wasSlow))
	c.Reply.AppendDouble("sampleRate", 1)
	toSlow := wasSlow
	if level >= 0 && newSlow >= 0 {
		toSlow = newSlow
		c.Env.SlowMS.Store(newSlow)
	}
	if level >= 0 && (toSlow != wasSlow || level != wasLevel) && c.Env.Log != nil {
		c.Env.Log.Info("Profiler settings changed", "c", "CONTROL", "id", 22800, "ctx", connCtxName(c),
			"from", map[string]any{"level": wasLevel, "slowms": wasSlow, "sampleRate": 1.0},
			"to", map[string]any{"level": level, "slowms": toSlow, "sampleRate": 1.0})
	}
	return nil
}
