package command

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// The slow-operation log: an operation that runs for at least the slowms
// threshold (Env.SlowMS; mongod's --slowms, operationProfiling.
// slowOpThresholdMs, and the profile command's slowms) is logged as mongod
// logs it, a "Slow query" line (id 51803, component COMMAND) whose attr
// holds the command, its plan summary, the index keys and documents it
// examined, the documents it returned and its duration.

// DefaultSlowMS is mongod's default slowms.
const DefaultSlowMS = 100

// maxLoggedCommandBytes bounds the command logged in a slow-operation line
// (mongod's maxLogSizeKB, 10 KB).
const maxLoggedCommandBytes = 10 << 10

// opStats are the figures a running operation accumulates for its
// slow-operation line (atomics: a pipeline's stages may run concurrently).
// A write command's statements (update, delete) each have their own, as
// mongod gives each statement its own line.
type opStats struct {
	planSummary  atomic.Pointer[string] // the first query stage's plan
	keysExamined atomic.Int64
	docsExamined atomic.Int64
	nreturned    atomic.Int64
	// hasSortStage and usedDisk: the query sorted in memory (spilling to
	// disk).
	hasSortStage, usedDisk atomic.Bool
	write                  exec.WriteFigures // slowwrite.go
}

// opKey finds the running operation among a context's values, however the
// command wrapped its context (maxTimeMS adds a deadline, for one).
type opKey struct{}

// opOf returns the operation ctx belongs to, or nil outside a command.
func opOf(ctx context.Context) *opInfo {
	op, _ := ctx.Value(opKey{}).(*opInfo)
	return op
}

// statsOf returns the figures ctx's stages add to, or nil outside a
// command.
func statsOf(ctx context.Context) *opStats {
	s, _ := ctx.Value(exec.StatsKey{}).(*opStats)
	return s
}

// noteExamined adds index keys and documents a query stage examined, and
// the plan it used, to the operation's slow-operation figures.
func noteExamined(ctx context.Context, plan string, keys, docs int64) {
	exec.NoteExamined(ctx, plan, keys, docs)
}

// Examined implements exec.Observer: the figures of the operation (or of
// a write statement, withStats) that a stage's context finds under
// exec.StatsKey.
func (s *opStats) Examined(plan string, keys, docs int64) {
	s.planSummary.CompareAndSwap(nil, &plan)
	s.keysExamined.Add(keys)
	s.docsExamined.Add(docs)
}

// noteReturned counts documents a command returned to the client.
func noteReturned(ctx context.Context, n int64) {
	if s := statsOf(ctx); s != nil {
		s.nreturned.Add(n)
	}
}

// noteSorted records a blocking (in-memory) sort, as mongod's
// hasSortStage and usedDisk, and counts it in
// metrics.operation.scanAndOrder.
func noteSorted(c *Ctx, spilled bool) { c.Env.NoteSorted(c, spilled) }

// Sorted implements exec.Observer.
func (s *opStats) Sorted(spilled bool) {
	s.hasSortStage.Store(true)
	if spilled {
		s.usedDisk.Store(true)
	}
}

// logSlowOp writes the slow-operation line of a command that took d, if d
// reaches the threshold. An update or delete command's line names the
// database's $cmd namespace, as mongod's does: its statements have their
// own lines (logSlowStatement) with the collection's.
func logSlowOp(c *Ctx, op *opInfo, coll string, d time.Duration, reply bson.Doc) {
	if !slowEnough(c, d) {
		return
	}
	ns := c.DB + ".$cmd"
	if coll != "" && !hasStatementLines(c.Name) {
		ns = c.DB + "." + coll
	}
	var stats *opStats
	if op != nil {
		stats = &op.stats
	}
	attrs := slowAttrs(c, "COMMAND", "command", ns, loggedCommand(c.Body), stats)
	if v, ok := reply.Lookup("ok"); ok && !v.Truthy() {
		code, _ := reply.Lookup("code")
		n, _ := code.AsInt64()
		msg, _ := reply.Lookup("errmsg")
		attrs = appendSlowError(attrs, mongoerr.New(int32(n), "%s", msg.StringValue()))
	}
	attrs = append(attrs, "reslen", len(reply), "protocol", "op_msg", "durationMillis", d.Milliseconds())
	c.Env.Log.Info("Slow query", attrs...)
}

// connCtxName is the "ctx" of the connection's log lines, as mongod
// names it: "conn" and the connection's number.
func connCtxName(c *Ctx) string {
	if c.Conn == nil {
		return "conn"
	}
	return "conn" + strconv.FormatInt(c.Conn.ID, 10)
}

// slowEnough reports whether an operation that took d is logged.
func slowEnough(c *Ctx, d time.Duration) bool {
	return d.Milliseconds() >= c.Env.SlowMS.Load() && c.Env.Log != nil && c.Env.Log.Enabled(c, slog.LevelInfo)
}

// slowAttrs starts a slow-operation line: its head (component c, id
// 51803, the connection), then type, ns, appName, command and the
// figures in s, in mongod's order.
func slowAttrs(c *Ctx, component, typ, ns string, command json.RawMessage, s *opStats) []any {
	attrs := []any{"c", component, "id", 51803, "ctx", connCtxName(c), "type", typ, "ns", ns}
	if c.Conn != nil && len(c.Conn.ClientMeta) > 0 {
		if v, ok := c.Conn.ClientMeta.LookupPath("application", "name"); ok && v.Type == bson.TypeString {
			attrs = append(attrs, "appName", v.StringValue())
		}
	}
	attrs = append(attrs, "command", command)
	if s == nil {
		return attrs
	}
	plan := s.planSummary.Load()
	if plan != nil {
		attrs = append(attrs, "planSummary", *plan,
			"keysExamined", s.keysExamined.Load(), "docsExamined", s.docsExamined.Load())
	}
	if s.hasSortStage.Load() {
		attrs = append(attrs, "hasSortStage", true)
	}
	if s.usedDisk.Load() {
		attrs = append(attrs, "usedDisk", true)
	}
	attrs = s.write.AppendAttrs(attrs)
	if n := s.nreturned.Load(); plan != nil && !s.write.Any() || n > 0 {
		attrs = append(attrs, "nreturned", n)
	}
	return attrs
}

// appendSlowError adds a failed operation's error to its line.
func appendSlowError(attrs []any, err error) []any {
	e := asMongoErr(err)
	return append(attrs, "ok", 0, "errMsg", e.Message, "errName", mongoerr.CodeName(e.Code), "errCode", int64(e.Code))
}

// loggedCommand is the command as relaxed Extended JSON (secrets
// redacted), or, past maxLoggedCommandBytes, mongod's truncation marker
// {truncated, size} with the start of it. A large command (an insert of
// wide documents) is cut as BSON first, so logging it costs about the
// bytes logged, not the command's size.
func loggedCommand(body bson.Doc) json.RawMessage {
	name := ""
	if it := body.Iter(); it.Next() {
		name = it.Element().Key
	}
	return loggedDoc(redacted(name, body))
}

// loggedDoc is a document as a log line shows it: relaxed Extended JSON,
// truncated as loggedCommand says.
func loggedDoc(body bson.Doc) json.RawMessage {
	if len(body) <= maxLoggedCommandBytes {
		if j, err := body.MarshalExtJSON(false); err == nil && len(j) <= maxLoggedCommandBytes {
			return j
		}
	}
	j, err := prefixOf(body, maxLoggedCommandBytes).MarshalExtJSON(false)
	if err != nil {
		j = []byte(`{}`)
	}
	if len(j) > maxLoggedCommandBytes {
		j = j[:maxLoggedCommandBytes]
	}
	out, _ := json.Marshal(map[string]any{"truncated": string(j), "size": len(body)})
	return out
}

// prefixOf returns the first elements of d that fit in about budget bytes;
// an array that does not fit keeps its first items that do.
func prefixOf(d bson.Doc, budget int) bson.Doc {
	var b bson.Builder
	it := d.Iter()
	for it.Next() && b.Len() < budget {
		e := it.Element()
		if e.Value.Type != bson.TypeArray || b.Len()+len(e.Value.Data) <= budget {
			if b.Len()+len(e.Value.Data) > budget && b.Len() > 0 {
				break
			}
			b.AppendElement(e)
			continue
		}
		b.StartArray(e.Key)
		items := e.Value.Document().Iter()
		for i := 0; items.Next() && b.Len() < budget; i++ {
			b.AppendValue(bson.Index(i), items.Element().Value)
		}
		b.End()
	}
	return b.Finish()
}

// profile reads and sets the profiler's settings: the database's level
// (0 off, 1 operations at least slowms, 2 every operation, written to
// its system.profile: profiler.go) and the slowms threshold that the
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
	wasLevel := c.Env.profileLevel(c.DB)
	if level >= 0 {
		c.Env.setProfileLevel(c.DB, level)
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
