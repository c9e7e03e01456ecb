package command

// The database profiler (mongod's profile levels 1 and 2): a database's
// level is set by the profile command and kept in memory (mongod does not
// keep it across restarts either). At level 2 every command on the
// database, at level 1 every command that runs at least slowms, writes a
// document describing it to the database's system.profile collection.
//
// mongod makes system.profile a capped collection of 1 MiB; Cairn keeps it
// an ordinary collection bounded the same way: the profiler counts the
// bytes it holds (reading them once per database) and removes the oldest
// documents (the first _ids: ObjectIds in insertion order) past 1 MiB.
// Profiling failures are logged and never fail the command profiled.

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

const (
	profileCollection = "system.profile"
	// profileMaxBytes is mongod's default size of system.profile.
	profileMaxBytes = 1 << 20
)

// profilerState is the profiler's per-database state.
type profilerState struct {
	on     atomic.Bool // some database has a level above 0
	mu     sync.Mutex
	levels map[string]int64 // level by database (absent: 0)
	sizes  map[string]int64 // bytes in each database's system.profile, once counted
	// pending holds, by operation id, the profile documents of an update
	// or delete command's statements until the command is over (its
	// write transaction must end before the profiler writes).
	pending  map[int64][]bson.Doc
	pendingN atomic.Int64 // entries in pending
	// write serializes the profile writes (and their size accounting).
	write sync.Mutex
}

// profileLevel returns db's profiling level.
func (e *Env) profileLevel(db string) int64 {
	if !e.profiler.on.Load() {
		return 0
	}
	e.profiler.mu.Lock()
	defer e.profiler.mu.Unlock()
	return e.profiler.levels[db]
}

// setProfileLevel sets db's level and returns the old one.
func (e *Env) setProfileLevel(db string, level int64) int64 {
	p := &e.profiler
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

// profiles reports whether an operation of db that took d is profiled.
func (e *Env) profiles(db string, d time.Duration) bool {
	level := e.profileLevel(db)
	return level == 2 || (level == 1 && d.Milliseconds() >= e.SlowMS.Load())
}

// profileOp writes the profile document of a command that took d, when
// its database's level asks for it. An update or delete command writes its
// statements' documents instead (profileStatement), as mongod does.
func profileOp(c *Ctx, op *opInfo, coll string, d time.Duration, reply bson.Doc) {
	p := &c.Env.profiler
	var docs []bson.Doc
	if op != nil && p.pendingN.Load() > 0 && hasStatementLines(c.Name) {
		// Taken even if profiling stopped meanwhile, so none is left.
		p.mu.Lock()
		if docs = p.pending[op.id]; docs != nil {
			delete(p.pending, op.id)
			p.pendingN.Add(-1)
		}
		p.mu.Unlock()
	}
	if !p.on.Load() || coll == profileCollection {
		return
	}
	if hasStatementLines(c.Name) {
		// The statements' documents (above) stand for the command.
	} else if c.Env.profiles(c.DB, d) {
		ns := c.DB + ".$cmd"
		if coll != "" {
			ns = c.DB + "." + coll
		}
		var stats *opStats
		if op != nil {
			stats = &op.stats
		}
		var fail error
		if v, ok := reply.Lookup("ok"); ok && !v.Truthy() {
			code, _ := reply.Lookup("code")
			n, _ := code.AsInt64()
			msg, _ := reply.Lookup("errmsg")
			fail = mongoerr.New(int32(n), "%s", msg.StringValue())
		}
		docs = []bson.Doc{profileDoc(c, profileOpType(c.Name), ns, redacted(c.Name, c.Body), stats, d, fail, len(reply))}
	}
	for _, doc := range docs {
		if err := c.Env.writeProfile(c.DB, doc); err != nil && c.Env.Log != nil {
			c.Env.Log.Warn("Profiling failed", "c", "COMMAND", "ctx", connCtxName(c), "db", c.DB, "error", err.Error())
			return
		}
	}
}

// profileStatement keeps the profile document of an update or delete
// statement (op "update" or "remove") for profileOp to write once the
// command's transaction is over.
func profileStatement(c *Ctx, typ, coll string, stmt bson.Doc, stats *opStats, d time.Duration, err error) {
	if !c.Env.profiler.on.Load() || !c.Env.profiles(c.DB, d) {
		return
	}
	op := opOf(c)
	if op == nil {
		return
	}
	doc := profileDoc(c, typ, c.DB+"."+coll, stmt, stats, d, err, -1)
	p := &c.Env.profiler
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
// and millis as 32-bit integers): op, ns,
// command, the figures of the query and write stages, the error if the
// operation failed, responseLength (when there is a reply of its own),
// millis, ts, client, appName, allUsers and user.
func profileDoc(c *Ctx, op, ns string, command bson.Doc, s *opStats, d time.Duration, fail error, responseLength int) bson.Doc {
	var b bson.Builder
	b.AppendString("op", op)
	b.AppendString("ns", ns)
	b.AppendDocument("command", prefixOf(command, maxLoggedCommandBytes))
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
		e := asMongoErr(fail)
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
	if c.Conn != nil {
		b.AppendString("client", c.Conn.Remote)
		if v, ok := c.Conn.ClientMeta.LookupPath("application", "name"); ok && v.Type == bson.TypeString {
			b.AppendString("appName", v.StringValue())
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

// writeProfile inserts doc into db.system.profile and trims the
// collection to profileMaxBytes.
func (e *Env) writeProfile(db string, doc bson.Doc) error {
	p := &e.profiler
	p.write.Lock()
	defer p.write.Unlock()
	tx, err := e.KV.BeginWrite(context.Background())
	if err != nil {
		return err
	}
	defer tx.Rollback()
	coll, err := exec.CollectionForWrite(tx, db, profileCollection, true)
	if err != nil {
		return err
	}
	w, err := exec.OpenWriter(tx, coll)
	if err != nil {
		return err
	}
	if p.sizes == nil {
		p.sizes = map[string]int64{}
	}
	size, counted := p.sizes[db]
	if !counted {
		cur := w.Data.Cursor()
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			size += int64(len(v))
		}
		if err := cur.Err(); err != nil {
			return err
		}
	}
	stored, _, err := w.Insert(doc)
	if err != nil {
		return err
	}
	size += int64(len(stored))
	for size > profileMaxBytes {
		cur := w.Data.Cursor()
		k, v := cur.First()
		if k == nil {
			break
		}
		size -= int64(len(v))
		old := bson.Doc(append([]byte(nil), v...))
		if err := w.Remove(append([]byte(nil), k...), old); err != nil {
			return err
		}
	}
	if err := tx.CommitWith(exec.Lazy); err != nil {
		return err
	}
	p.sizes[db] = size
	return nil
}

// forgetProfileSize drops the counted size of db's system.profile (after
// it is dropped or its database is).
func (e *Env) forgetProfileSize(db string) {
	p := &e.profiler
	p.write.Lock()
	defer p.write.Unlock()
	delete(p.sizes, db)
}
