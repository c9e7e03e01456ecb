package opctx

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// The slow-operation log: an operation that runs for at least the slowms
// threshold (mongod's --slowms, operationProfiling.slowOpThresholdMs, and
// the profile command's slowms) is logged as mongod logs it, a "Slow
// query" line (id 51803, component COMMAND) whose attr holds the command,
// its plan summary, the index keys and documents it examined, the
// documents it returned and its duration.
//
// mongod's slow write lines carry what the write matched, changed and
// inserted or removed from indexes (its OpDebug's optional figures, logged
// once set): an insert command's line has ninserted and keysInserted; each
// update or delete statement has its own line (component WRITE, type
// "update" or "remove") with its plan, the keys and documents it examined,
// nMatched, nModified and nUpserted or ndeleted, and keysInserted and
// keysDeleted; findAndModify's command line has the same figures as the
// statement it runs.

// DefaultSlowMS is mongod's default slowms.
const DefaultSlowMS = 100

// MaxLoggedCommandBytes bounds the command logged in a slow-operation line
// (mongod's maxLogSizeKB, 10 KB).
const MaxLoggedCommandBytes = 10 << 10

// Origin is the client connection an operation came from.
type Origin struct {
	ID     int64
	Remote string
	Meta   bson.Doc // hello's "client" document
}

// Request is the command an operation runs, as its log line and profile
// document describe it.
type Request struct {
	Origin *Origin // nil: not from a client connection
	DB     string
	// Name is the command's name as the client spelled it.
	Name string
	Body bson.Doc
}

// CtxName is the "ctx" of the connection's log lines, as mongod names it:
// "conn" and the connection's number.
func (o *Origin) CtxName() string {
	if o == nil {
		return "conn"
	}
	return "conn" + strconv.FormatInt(o.ID, 10)
}

// appName is the application name the client gave in its handshake.
func (o *Origin) appName() (string, bool) {
	if o == nil || len(o.Meta) == 0 {
		return "", false
	}
	if v, ok := o.Meta.LookupPath("application", "name"); ok && v.Type == bson.TypeString {
		return v.StringValue(), true
	}
	return "", false
}

// HasStatementLines reports the write commands whose statements are
// logged (and profiled) on their own lines.
func HasStatementLines(name string) bool {
	return name == "update" || name == "delete"
}

// SlowEnough reports whether an operation that took d is logged, with a
// threshold of slowMS milliseconds.
func SlowEnough(ctx context.Context, log *slog.Logger, slowMS int64, d time.Duration) bool {
	return d.Milliseconds() >= slowMS && log != nil && log.Enabled(ctx, slog.LevelInfo)
}

// LogSlowOp writes the slow-operation line of a command (on collection
// coll, "" for none) that took d and answered reply, with the figures s.
// The caller checked SlowEnough. An update or delete command's line names
// the database's $cmd namespace, as mongod's does: its statements have
// their own lines (LogStatement) with the collection's.
func LogSlowOp(log *slog.Logger, r *Request, s *Stats, coll string, d time.Duration, reply bson.Doc) {
	ns := r.DB + ".$cmd"
	if coll != "" && !HasStatementLines(r.Name) {
		ns = r.DB + "." + coll
	}
	attrs := slowAttrs(r.Origin, "COMMAND", "command", ns, LoggedCommand(r.Body), s)
	if fail := replyError(reply); fail != nil {
		attrs = appendSlowError(attrs, fail)
	}
	attrs = append(attrs, "reslen", len(reply), "protocol", "op_msg", "durationMillis", d.Milliseconds())
	log.Info("Slow query", attrs...)
}

// LogStatement writes the slow-operation line of an update or delete
// statement (typ "update" or "remove") on r's database's collection coll
// that took d, failing with err if not nil. The caller checked
// SlowEnough.
func LogStatement(log *slog.Logger, r *Request, typ, coll string, stmt bson.Doc, s *Stats, d time.Duration, err error) {
	attrs := slowAttrs(r.Origin, "WRITE", typ, r.DB+"."+coll, LoggedCommand(stmt), s)
	if err != nil {
		attrs = appendSlowError(attrs, err)
	}
	attrs = append(attrs, "durationMillis", d.Milliseconds())
	log.Info("Slow query", attrs...)
}

// replyError is the error of an error reply ({ok: 0, code, errmsg}), or
// nil.
func replyError(reply bson.Doc) error {
	v, ok := reply.Lookup("ok")
	if !ok || v.Truthy() {
		return nil
	}
	code, _ := reply.Lookup("code")
	n, _ := code.AsInt64()
	msg, _ := reply.Lookup("errmsg")
	return mongoerr.New(int32(n), "%s", msg.StringValue())
}

// slowAttrs starts a slow-operation line: its head (component c, id
// 51803, the connection), then type, ns, appName, command and the
// figures in s, in mongod's order.
func slowAttrs(o *Origin, component, typ, ns string, command json.RawMessage, s *Stats) []any {
	attrs := []any{"c", component, "id", 51803, "ctx", o.CtxName(), "type", typ, "ns", ns}
	if app, ok := o.appName(); ok {
		attrs = append(attrs, "appName", app)
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
	e := exec.AsMongoErr(err)
	return append(attrs, "ok", 0, "errMsg", e.Message, "errName", mongoerr.CodeName(e.Code), "errCode", int64(e.Code))
}

// LoggedCommand is the command as relaxed Extended JSON (secrets
// redacted), or, past MaxLoggedCommandBytes, mongod's truncation marker
// {truncated, size} with the start of it. A large command (an insert of
// wide documents) is cut as BSON first, so logging it costs about the
// bytes logged, not the command's size.
func LoggedCommand(body bson.Doc) json.RawMessage {
	name := ""
	if it := body.Iter(); it.Next() {
		name = it.Element().Key
	}
	return LoggedDoc(Redacted(name, body))
}

// LoggedDoc is a document as a log line shows it: relaxed Extended JSON,
// truncated as LoggedCommand says.
func LoggedDoc(body bson.Doc) json.RawMessage {
	if len(body) <= MaxLoggedCommandBytes {
		if j, err := body.MarshalExtJSON(false); err == nil && len(j) <= MaxLoggedCommandBytes {
			return j
		}
	}
	j, err := prefixOf(body, MaxLoggedCommandBytes).MarshalExtJSON(false)
	if err != nil {
		j = []byte(`{}`)
	}
	if len(j) > MaxLoggedCommandBytes {
		j = j[:MaxLoggedCommandBytes]
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

// Redacted returns body with secrets replaced by "xxx" (passwords of the
// user commands, SASL payloads), as MongoDB redacts them in currentOp,
// logs and error messages; other bodies are returned as they are.
func Redacted(name string, body bson.Doc) bson.Doc {
	var secret string
	switch name {
	case "createUser", "updateUser":
		secret = "pwd"
	case "saslStart", "saslContinue":
		secret = "payload"
	case "hello", "isMaster", "ismaster":
		secret = "speculativeAuthenticate"
	default:
		return body
	}
	if _, ok := body.Lookup(secret); !ok {
		return body
	}
	var b bson.Builder
	it := body.Iter()
	for it.Next() {
		if e := it.Element(); e.Key == secret {
			b.AppendString(e.Key, "xxx")
		} else {
			b.AppendElement(e)
		}
	}
	return b.Finish()
}
