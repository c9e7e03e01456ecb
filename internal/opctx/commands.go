package opctx

// The requests of the commands over this layer, parsed as mongod parses
// them: currentOp's filter and options, killOp's op, and profile's level
// and options. The command layer hands in the body and answers.

import (
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// CurrentOpRequest is currentOp's request: every field but the command's
// own options filters the operations.
type CurrentOpRequest struct {
	Filter *query.Filter
	// IdleSessions lists sessions' idle transactions too (the default).
	IdleSessions bool
}

// ParseCurrentOp reads currentOp's body; generic reports the fields
// every command may carry.
func ParseCurrentOp(body bson.Doc, generic func(string) bool) (*CurrentOpRequest, error) {
	var fb bson.Builder
	req := &CurrentOpRequest{IdleSessions: true}
	it := body.Iter()
	it.Next()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "idleSessions":
			req.IdleSessions = e.Value.Truthy()
			continue
		case "$all", "$ownOps", "$truncateOps", "idleConnections", "idleCursors", "localOps", "backtrace":
			continue
		}
		if generic(e.Key) {
			continue
		}
		fb.AppendElement(e)
	}
	var err error
	req.Filter, err = query.ParseFilter(fb.Finish(), &query.Options{})
	return req, err
}

// AppendCurrentOp appends currentOp's inprog array: the running
// operations and then the documents more gives (sessions' idle
// transactions) that the request's filter matches.
func (t *Table) AppendCurrentOp(b *bson.Builder, req *CurrentOpRequest, now time.Time, more func(fn func(bson.Doc))) {
	b.StartArray("inprog")
	i := 0
	add := func(d bson.Doc) {
		if req.Filter.Match(d) {
			b.AppendDocument(bson.Index(i), d)
			i++
		}
	}
	t.Documents(now, add)
	if req.IdleSessions && more != nil {
		more(add)
	}
	b.End()
}

// KillOpID reads killOp's op.
func KillOpID(v bson.Value, present bool) (int64, error) {
	if !present {
		return 0, mongoerr.New(mongoerr.BadValue, `Did not provide "op" field`)
	}
	id, ok := v.AsInt64()
	if !ok || !v.IsNumber() {
		return 0, mongoerr.New(mongoerr.BadValue, `"op" field must be a number`)
	}
	return id, nil
}

// ProfileRequest is profile's request: Level (-1: read only) and SlowMS
// (-1: unchanged).
type ProfileRequest struct {
	Level, SlowMS int64
}

// ParseProfile reads profile's body (its first field is the level);
// generic reports the fields every command may carry.
func ParseProfile(body bson.Doc, generic func(string) bool) (ProfileRequest, error) {
	req := ProfileRequest{SlowMS: -1}
	it := body.Iter()
	if !it.Next() {
		return req, mongoerr.New(mongoerr.TypeMismatch, "profile level must be a number")
	}
	level, ok := it.Element().Value.AsInt64()
	if !ok {
		return req, mongoerr.New(mongoerr.TypeMismatch, "profile level must be a number")
	}
	if level < -1 || level > 2 {
		return req, mongoerr.New(mongoerr.BadValue, "Invalid profiling level: %d", level)
	}
	req.Level = level
	for it.Next() {
		e := it.Element()
		if generic(e.Key) {
			continue
		}
		switch e.Key {
		case "slowms":
			n, ok := e.Value.AsInt64()
			if !ok {
				return req, mongoerr.New(mongoerr.TypeMismatch, "slowms must be a number")
			}
			req.SlowMS = n
		case "sampleRate":
			if f, ok := e.Value.AsFloat64(); !ok || f != 1 {
				return req, mongoerr.New(mongoerr.BadValue, "Cairn profiles every qualifying operation: sampleRate must be 1")
			}
		case "filter":
			return req, mongoerr.New(mongoerr.BadValue, "profile filters are not supported by Cairn")
		default:
			return req, mongoerr.New(mongoerr.BadValue, "unknown profile option: %s", e.Key)
		}
	}
	return req, nil
}

// ApplyProfile applies req to database db's level and to slowMS (the
// threshold the slow-operation log and level 1 share), appends profile's
// answer (the previous level and slowms, sampleRate) to b, and logs the
// change of settings (ctxName: the connection's log context; log may be
// nil).
func (p *Profiler) ApplyProfile(b *bson.Builder, req ProfileRequest, db string, slowMS *atomic.Int64, log *slog.Logger, ctxName string) {
	wasSlow := slowMS.Load()
	wasLevel := p.Level(db)
	if req.Level >= 0 {
		p.SetLevel(db, req.Level)
	}
	b.AppendInt32("was", int32(wasLevel))
	b.AppendInt32("slowms", int32(wasSlow))
	b.AppendDouble("sampleRate", 1)
	toSlow := wasSlow
	if req.Level >= 0 && req.SlowMS >= 0 {
		toSlow = req.SlowMS
		slowMS.Store(req.SlowMS)
	}
	if req.Level >= 0 && (toSlow != wasSlow || req.Level != wasLevel) && log != nil {
		log.Info("Profiler settings changed", "c", "CONTROL", "id", 22800, "ctx", ctxName,
			"from", map[string]any{"level": wasLevel, "slowms": wasSlow, "sampleRate": 1.0},
			"to", map[string]any{"level": req.Level, "slowms": toSlow, "sampleRate": 1.0})
	}
}
