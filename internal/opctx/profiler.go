package opctx

// The database profiler (mongod's profile levels 1 and 2): a database's
// level is set by the profile command and kept in memory (mongod does not
// keep it across restarts either). At level 2 every command on the
// database, at level 1 every command that runs at least slowms, writes a
// document describing it to the database's system.profile collection.
//
// mongod makes system.profile a capped collection of 1 MiB; Cairn keeps it
// an ordinary collection bounded the same way: the profiler counts the
// bytes it holds (reading them once per database) and the store removes
// the oldest documents (the first _ids: ObjectIds in insertion order) past
// 1 MiB. Profiling failures are logged and never fail the command
// profiled.

import (
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

const (
	// ProfileCollection is the collection the profiler writes to.
	ProfileCollection = "system.profile"
	// profileMaxBytes is mongod's default size of system.profile.
	profileMaxBytes = 1 << 20
)

// Store is where the profiler writes (exec.Engine): AppendBounded inserts
// doc into db.coll, creating it, and removes its oldest documents while it
// holds more than max bytes; size is the bytes it holds (-1: not counted
// yet) and the new size is returned.
type Store interface {
	AppendBounded(db, coll string, doc bson.Doc, size, max int64) (int64, error)
}

// Profiler holds the databases' profiling levels and what the profiler
// keeps between commands. The zero Profiler profiles nothing.
type Profiler struct {
	on     atomic.Bool // some database has a level above 0
	mu     sync.Mutex
	levels map[string]int64 // level by database (absent: 0)
	// pending holds, by operation id, the profile documents of an update
	// or delete command's statements until the command is over (its
	// write transaction must end before the profiler writes).
	pending  map[int64][]bson.Doc
	pendingN atomic.Int64 // entries in pending
	// write serializes the profile writes and their size accounting.
	write sync.Mutex
	sizes map[string]int64 // bytes in each database's system.profile, once counted
}

// Active reports whether the profiler may have something to do at the end
// of a command: some database is profiled, or statements' documents wait.
func (p *Profiler) Active() bool { return p.on.Load() || p.pendingN.Load() > 0 }

// On reports whether some database is profiled.
func (p *Profiler) On() bool { return p.on.Load() }

// Level returns db's profiling level.
func (p *Profiler) Level(db string) int64 {
	if !p.on.Load() {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.levels[db]
}

// SetLevel sets db's level and returns the old one.
func (p *Profiler) SetLevel(db string, level int64) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.levels == nil {
		p.levels = map[string]int64{}
	}
	was := p.levels[db]
	if level == 0 {
		delete(p.levels, db)
	} else {
		p.levels[db] = level
	}
	p.on.Store(len(p.levels) > 0)
	return was
}

// profiles reports whether an operation of db that took d is profiled.
func (p *Profiler) profiles(db string, d time.Duration, slowMS int64) bool {
	level := p.Level(db)
	return level == 2 || (level == 1 && d.Milliseconds() >= slowMS)
}

// profileOpType is the profile document's op for a command.
func profileOpType(name string) string {
	switch name {
	case "find":
		return "query"
	case "insert":
		return "insert"
	case "update":
		return "update"
	case "delete":
		return "remove"
	case "getMore":
		return "getmore"
	}
	return "command"
}

// Op writes the profile document of operation op running r (on
// collection coll) that took d and answered reply, when its database's
// level asks for it. An update or delete command writes its statements'
// documents instead (Statement), as mongod does. Failures are logged on
// log (may be nil).
func (p *Profiler) Op(st Store, log *slog.Logger, slowMS int64, r *Request, op *Op, coll string, d time.Duration, reply bson.Doc) {
	var docs []bson.Doc
	if op != nil && p.pendingN.Load() > 0 && HasStatementLines(r.Name) {
		// Taken even if profiling stopped meanwhile, so none is left.
		p.mu.Lock()
		if docs = p.pending[op.id]; docs != nil {
			delete(p.pending, op.id)
			p.pendingN.Add(-1)
		}
		p.mu.Unlock()
	}
	if !p.on.Load() || coll == ProfileCollection {
		return
	}
	if HasStatementLines(r.Name) {
		// The statements' documents (above) stand for the command.
	} else if p.profiles(r.DB, d, slowMS) {
		ns := r.DB + ".$cmd"
		if coll != "" {
			ns = r.DB + "." + coll
		}
		docs = []bson.Doc{profileDoc(r.Origin, profileOpType(r.Name), ns, Redacted(r.Name, r.Body), op.Stats(), d, replyError(reply), len(reply))}
	}
	for _, doc := range docs {
		if err := p.writeDoc(st, r.DB, doc); err != nil && log != nil {
			log.Warn("Profiling failed", "c", "COMMAND", "ctx", r.Origin.CtxName(), "db", r.DB, "error", err.Error())
			return
		}
	}
}

// Statement keeps the profile document of an update or delete statement
// (op "update" or "remove") of operation op for Op to write once the
// command's transaction is over.
func (p *Profiler) Statement(slowMS int64, r *Request, op *Op, typ, coll string, stmt bson.Doc, stats *Stats, d time.Duration, err error) {
	if op == nil || !p.on.Load() || !p.profiles(r.DB, d, slowMS) {
		return
	}
	doc := profileDoc(r.Origin, typ, r.DB+"."+coll, stmt, stats, d, err, -1)
	p.mu.Lock()
	if p.pending == nil {
		p.pending = map[int64][]bson.Doc{}
	}
	if p.pending[op.id] == nil {
		p.pendingN.Add(1)
	}
	p.pending[op.id] = append(p.pending[op.id], doc)
	p.mu.Unlock()
}

// profileDoc builds a profile document, in the shape of mongod's (counts
// and millis as 32-bit integers): op, ns, command, the figures of the
// query and write stages, the error if the operation failed,
// responseLength (when there is a reply of its own), millis, ts, client,
// appName, allUsers and user.
func profileDoc(o *Origin, op, ns string, command bson.Doc, s *Stats, d time.Duration, fail error, responseLength int) bson.Doc {
	var b bson.Builder
	b.AppendString("op", op)
	b.AppendString("ns", ns)
	b.AppendDocument("command", prefixOf(command, MaxLoggedCommandBytes))
	if s != nil {
		plan := s.planSummary.Load()
		if plan != nil {
			b.AppendInt32("keysExamined", int32Of(s.keysExamined.Load()))
			b.AppendInt32("docsExamined", int32Of(s.docsExamined.Load()))
		}
		if s.hasSortStage.Load() {
			b.AppendBool("hasSortStage", true)
		}
		if s.usedDisk.Load() {
			b.AppendBool("usedDisk", true)
		}
		for _, f := range s.write.Fields() {
			if f.C.Set.Load() {
				b.AppendInt32(f.Name, int32Of(f.C.N.Load()))
			}
		}
		if n := s.nreturned.Load(); n > 0 || op == "query" || op == "getmore" || (plan != nil && !s.write.Any()) {
			b.AppendInt32("nreturned", int32Of(n))
		}
		if plan != nil {
			b.AppendString("planSummary", *plan)
		}
	}
	if fail != nil {
		e := exec.AsMongoErr(fail)
		b.AppendInt32("ok", 0)
		b.AppendString("errMsg", e.Message)
		b.AppendString("errName", mongoerr.CodeName(e.Code))
		b.AppendInt32("errCode", e.Code)
	}
	if responseLength >= 0 {
		b.AppendInt32("responseLength", int32(responseLength))
		b.AppendString("protocol", "op_msg")
	}
	b.AppendInt32("millis", int32Of(d.Milliseconds()))
	b.AppendDateTime("ts", time.Now().UnixMilli())
	if o != nil {
		b.AppendString("client", o.Remote)
		if app, ok := o.appName(); ok {
			b.AppendString("appName", app)
		}
	}
	b.StartArray("allUsers")
	b.End()
	b.AppendString("user", "")
	return b.Finish()
}

// int32Of is n as the 32-bit integer mongod's profile documents hold,
// saturated.
func int32Of(n int64) int32 { return int32(min(max(n, math.MinInt32), math.MaxInt32)) }

// writeDoc appends doc to db.system.profile, bounded to profileMaxBytes.
func (p *Profiler) writeDoc(st Store, db string, doc bson.Doc) error {
	p.write.Lock()
	defer p.write.Unlock()
	size, counted := p.sizes[db]
	if !counted {
		size = -1
	}
	size, err := st.AppendBounded(db, ProfileCollection, doc, size, profileMaxBytes)
	if err != nil {
		return err
	}
	if p.sizes == nil {
		p.sizes = map[string]int64{}
	}
	p.sizes[db] = size
	return nil
}

// ForgetSize drops the counted size of db's system.profile (after it is
// dropped or its database is).
func (p *Profiler) ForgetSize(db string) {
	p.write.Lock()
	defer p.write.Unlock()
	delete(p.sizes, db)
}
