package opctx

import (
	"strconv"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// What currentOp (the command and the $currentOp stage) shows of the
// running operations, and what serverStatus counts of them.

// Documents calls fn with each running operation as currentOp lists it.
func (t *Table) Documents(now time.Time, fn func(bson.Doc)) {
	t.Each(func(op *Op) {
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

// ExpandCurrentOp turns a pipeline run on db (collection coll, "" for
// {aggregate: 1}) that starts with $currentOp (what mongosh's
// db.currentOp() runs) into one that starts with the running operations as
// $documents; other pipelines are returned as they are.
func (t *Table) ExpandCurrentOp(db, coll string, stages []bson.Doc) ([]bson.Doc, error) {
	for i, st := range stages {
		it := st.Iter()
		if !it.Next() || it.Element().Key != "$currentOp" {
			continue
		}
		if i > 0 {
			return nil, mongoerr.New(mongoerr.StageMustBeFirst, "$currentOp is only valid as the first stage in a pipeline")
		}
		if db != "admin" || coll != "" {
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
		t.Documents(time.Now(), func(d bson.Doc) {
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

// Activity is what the running operations are doing (serverStatus's
// globalLock.activeClients).
type Activity struct {
	Readers int // read commands running
	Conns   int // connections with an operation running
}

// Activity counts the running read commands and the connections with an
// operation running.
func (t *Table) Activity() Activity {
	var a Activity
	conns := map[int64]struct{}{}
	t.Each(func(op *Op) {
		if LatencyClass(op.name) == Read {
			a.Readers++
		}
		if op.conn != 0 {
			conns[op.conn] = struct{}{}
		}
	})
	a.Conns = len(conns)
	return a
}

// The latency classes of commands, as serverStatus's opLatencies and top's
// readLock and writeLock count them.
const (
	Read  = 0
	Write = 1
	Other = 2
)

// LatencyClass is the opLatencies class of command name.
func LatencyClass(name string) int {
	switch name {
	case "find", "getMore", "count", "distinct", "aggregate":
		return Read
	case "insert", "update", "delete", "findAndModify", "findandmodify":
		return Write
	}
	return Other
}
