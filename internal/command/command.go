// Package command owns Cairn's database commands: one file per command
// family, all registered in one table (table.go). A command receives the
// parsed request (Ctx) and appends its reply fields to Ctx.Reply; the
// dispatcher adds "ok" and turns returned errors into MongoDB's error replies.
package command

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/changestream"
	"github.com/cairndb/cairn/internal/concern"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/failpoint"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/opctx"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/internal/serverstatus"
	"github.com/cairndb/cairn/internal/session"
)

// Env is the server state commands share. It is created once per server.
type Env struct {
	// Engine is what the executors share: the store, the spill
	// directory and the column cache.
	exec.Engine
	Cursors *exec.Cursors
	Log     *slog.Logger
	Started time.Time
	// Argv and Parsed are what getCmdLineOpts reports.
	Argv   []string
	Parsed bson.Doc
	// StartupWarnings are returned by getLog("startupWarnings").
	StartupWarnings []string
	Stats           Stats
	// MaxConns is the connection limit (serverStatus connections.available;
	// 0 means mongod's default, 1,000,000).
	MaxConns int
	// CommitInterval is the journal commit interval (for serverStatus).
	CommitInterval time.Duration
	// LogLevel is the log's level (setParameter logLevel); may be nil.
	LogLevel *slog.LevelVar
	// RotateLog rotates the log file (logRotate); may be nil.
	RotateLog func() error
	// RecentLog returns the most recent log lines and how many were
	// written in all (getLog global); may be nil.
	RecentLog func() ([]string, int)
	// ObserveLatency, if set, receives every command's duration by class
	// (0 reads, 1 writes, 2 other commands); the metrics endpoint sets it.
	ObserveLatency func(class int, d time.Duration)
	// Ops lists the operations in progress (currentOp, killOp).
	Ops opctx.Table
	// Top accumulates per-namespace usage (top).
	Top opctx.Top
	// rw holds the default read and write concerns (rwconcern.go).
	rw concern.Defaults
	// MemberTLS is the TLS configuration of the connections to the other
	// members of the set (nil: plain; server.TLSOptions.MemberConfig).
	MemberTLS *tls.Config
	// Auth is access control: users, roles and whether commands are
	// checked (nil: no checks, no user commands).
	Auth *auth.Manager
	// SlowMS is the slow-operation log's threshold in milliseconds
	// (mongod's slowms; the profile command changes it). Commands that run
	// at least this long are logged; the server sets it, 0 logs every one.
	SlowMS atomic.Int64
	// collations tells whether collections with default collations exist
	// (exec.DefaultCollations).
	collations exec.DefaultCollations
	// profiler holds the databases' profiling levels.
	profiler opctx.Profiler
	// state is the commands' other mutable state (env.go).
	state envState
	// Repl is the replica-set state in replica-set mode; nil on a
	// standalone server.
	Repl *repl.Set
	// ChangeStreams is what the change streams on Oplog share (a cache of
	// decoded entries and built events, one oplog watch); nil: each
	// stream decodes for itself and watches the oplog per getMore.
	ChangeStreams *changestream.Hub
	// Sessions are the logical sessions (nil: lsids are not tracked).
	Sessions *session.Registry
	// PreAuthMaxMessageSize is the largest message a connection may send
	// before it authenticates when access control is on (mongod's
	// preAuthMaximumMessageSizeBytes; 0 means the default, 16 KiB).
	PreAuthMaxMessageSize atomic.Int64
	// TestCommands is enableTestCommands: test-only commands
	// (configureFailPoint) exist only when it is set.
	TestCommands bool
	// FailPoints are the fail points configureFailPoint sets (failpoint.go);
	// nil: none.
	FailPoints *failpoint.Registry
	// TTLMonitorSleep is the TTL monitor's interval (getParameter
	// ttlMonitorSleepSecs; 0: the default, 60 s).
	TTLMonitorSleep time.Duration
	// NoScripting is --noscripting (security.javascriptEnabled: false):
	// $where, $function, $accumulator and mapReduce are refused (scripts.go).
	NoScripting bool
}

// DefaultPreAuthMaxMessageSize is preAuthMaximumMessageSizeBytes' default,
// as mongod's.
const DefaultPreAuthMaxMessageSize = 16 << 10

// PreAuthMaxMessageSizeBytes is the effective pre-authentication message
// size limit.
func (e *Env) PreAuthMaxMessageSizeBytes() int {
	if n := e.PreAuthMaxMessageSize.Load(); n > 0 {
		return int(n)
	}
	return DefaultPreAuthMaxMessageSize
}

// Stats are the server-wide counters serverStatus reports
// (internal/serverstatus).
type Stats = serverstatus.Stats

// Conn describes the client connection a command arrived on.
type Conn struct {
	ID         int64
	Remote     string
	Local      string
	ClientMeta bson.Doc // hello's "client" document from the handshake
	// Compressors the connection negotiated in hello.
	Compressors []string
	// OfferedCompressors is filled by the server with what it supports.
	OfferedCompressors []string
	// Auth is the connection's authentication state.
	Auth auth.Session
}

// Ctx is one command invocation.
type Ctx struct {
	context.Context
	Env  *Env
	Conn *Conn
	// Name is the command name as the client spelled it.
	Name string
	// DB is the request's $db.
	DB   string
	Body bson.Doc
	// Seqs holds OP_MSG kind-1 document sequences by identifier.
	Seqs map[string][]bson.Doc
	// Reply receives the reply's fields; "ok" is appended by Dispatch.
	Reply *bson.Builder
	// Unacknowledged is set for w:0 writes (moreToCome): no reply is sent.
	Unacknowledged bool
	// explain is set when the command runs inside explain: it describes
	// its plan (and, with executionStats, runs it) instead of answering.
	explain *explainState
	// cmd is the command being run (set by Dispatch).
	cmd *Command
	// CloseConnection is set by a failCommand fail point with
	// closeConnection: the server drops the connection instead of replying.
	CloseConnection bool
	// labelled is set when a failCommand's errorLabels gave the error its
	// labels: fail adds none of its own.
	labelled bool
	// snap is the command's read snapshot, opened by its first read and
	// ended by Dispatch (storage.go).
	snap exec.Snapshot
	// sess is the request's session (nil: none), stmt the retryable
	// statement being written (retry.go).
	sess *sessionInfo
	stmt *repl.Stmt
	// txn is the session's open transaction the command is a statement
	// of (nil: none; transactions.go).
	txn *session.Slot
	// txnStart is the transaction the command starts, begun by openTxn
	// (nil: none).
	txnStart *session.Start
	// Replica-set mode (replset_reply.go): the parsed write concern and
	// the error a one-member set reports after the write (nil: met), the
	// stamp of the write transaction in progress and of the last one
	// committed, and whether the read is linearizable.
	wc           concern.Write
	wcPending    *mongoerr.Error
	txTS, opTime repl.Timestamp
	// snapAt is a snapshot read's cluster time (replset_reply.go; 0: not
	// one), reported as atClusterTime.
	snapAt       repl.Timestamp
	linearizable bool
	// On a set of several members: the rollback epoch the command
	// started in, and whether it reads with readConcern "majority"
	// (replset_multi.go).
	raftEpoch    uint64
	majorityRead bool
	// wcTimeout: the write concern's wait ran out of wtimeout
	// (writeConcernError.errInfo.wtimeout).
	wcTimeout bool
	// applying is set on a command a member runs to apply a DDL entry of
	// the primary's (replset_multi.go): not refused as a write on a
	// secondary, and it waits for no write concern.
	applying bool
}

// Handler runs a command.
type Handler func(c *Ctx) error

// Command describes one command.
type Command struct {
	Name string
	// Aliases are other names that reach the same handler.
	Aliases []string
	Run     Handler
	Help    string
	// AdminOnly commands must be run against the admin database.
	AdminOnly bool
	// Write commands modify data (counted, refused on read-only servers).
	Write bool
	// Needs is what access control requires (authz.go): the privilege
	// actions on the request's database (cluster actions on the server),
	// auth.Open or auth.Authenticated. Zero means root only, so a command
	// added without a declaration fails closed.
	Needs auth.Action
	// TestOnly commands exist only with enableTestCommands.
	TestOnly bool
}

// Lookup finds a command by the name a client used.
func Lookup(name string) (*Command, bool) {
	c, ok := byName[name]
	if !ok {
		c, ok = byName[strings.ToLower(name)]
		if ok && !caseInsensitive[strings.ToLower(name)] {
			return nil, false
		}
	}
	return c, ok
}

// caseInsensitive lists commands MongoDB also accepts in other cases.
var caseInsensitive = map[string]bool{"ismaster": true}

// Dispatch runs the command in body (its first field names it) and returns
// the complete reply document. It never panics on bad input: a panic inside a
// command is recovered and answered as InternalError, so one bad request
// cannot take the server down.
func Dispatch(c *Ctx) (reply bson.Doc) {
	defer func() {
		if r := recover(); r != nil {
			c.Env.Log.Error("command panicked", "cmd", c.Name, "panic", fmt.Sprint(r), "request", exec.RequestShape(c.Body))
			c.Env.Stats.RegularAsserts.Add(1)
			reply = c.fail(mongoerr.New(mongoerr.InternalError, "internal error running %s: %v", c.Name, r))
		} else if isErrorReply(reply) {
			c.Env.Stats.UserAsserts.Add(1)
		}
	}()
	c.Env.Stats.Commands.Add(1)
	it := c.Body.Iter()
	if !it.Next() {
		return c.fail(mongoerr.New(mongoerr.FailedToParse, "no command name found in request"))
	}
	c.Name = it.Element().Key
	if err := gossipIn(c); err != nil {
		return c.fail(err)
	}
	if err := checkTxnFields(c); err != nil {
		return c.fail(err)
	}
	if c.Env.Repl == nil {
		// A replica set member checks its readConcern in checkReplCommand.
		if err := concern.CheckStandalone(c.Body.Lookup("readConcern")); err != nil {
			return c.fail(err)
		}
	}
	cmd, ok := Lookup(c.Name)
	if !ok || cmd.TestOnly && !c.Env.TestCommands {
		return c.fail(mongoerr.New(mongoerr.CommandNotFound, "no such command: '%s'", c.Name))
	}
	if err := checkAPIParameters(c, cmd); err != nil {
		return c.fail(err)
	}
	if err := authorize(c, cmd); err != nil {
		return c.fail(err)
	}
	c.cmd = cmd
	if cmd.AdminOnly && c.DB != "admin" {
		return c.fail(mongoerr.New(mongoerr.Unauthorized, "%s may only be run against the admin database.", cmd.Name))
	}
	defer c.releaseSession()
	if err := beginSession(c, cmd); err != nil {
		return c.fail(c.finishTxnStatement(err))
	}
	defer c.releaseSnapshot()
	if c.Env.Repl != nil {
		if err := checkReplCommand(c, cmd); err != nil {
			return c.fail(c.finishTxnStatement(err))
		}
		if err := beginRaftRead(c); err != nil {
			return c.fail(c.finishTxnStatement(err))
		}
	}
	start := time.Now()
	op := beginOp(c, cmd.Name, start)
	if c.sess != nil {
		op.SetSession(c.sess.key)
	}
	collName := commandCollection(c)
	defer func() {
		c.Env.Ops.End(op)
		if at, ok := op.DisconnectKill(); ok {
			c.Env.Stats.NoteDisconnectKill(time.Since(at))
		}
		d := time.Since(start)
		logSlowOp(c, op, collName, d, reply)
		profileOp(c, op, collName, d, reply)
		if collName != "" {
			c.Env.Top.Record(c.DB, collName, cmd.Name, d)
		}
		us := d.Microseconds()
		class := opctx.LatencyClass(cmd.Name)
		if c.Env.ObserveLatency != nil {
			c.Env.ObserveLatency(class, d)
		}
		switch class {
		case 0:
			c.Env.Stats.ReadMicros.Add(us)
			c.Env.Stats.ReadOps.Add(1)
		case 1:
			c.Env.Stats.WriteMicros.Add(us)
			c.Env.Stats.WriteOps.Add(1)
		default:
			c.Env.Stats.CmdMicros.Add(us)
			c.Env.Stats.CmdOps.Add(1)
		}
	}()
	if fp := c.Env.FailPoints; fp != nil && fp.Active() {
		if err := c.failCommandBefore(cmd); err != nil {
			// As mongod, the fail point fires before the session's
			// transaction begins or continues: it changes nothing.
			return c.fail(err)
		}
		defer func() { reply = c.failCommandAfter(cmd, reply) }()
	}
	err := c.openTxn()
	if err == nil {
		err = cmd.Run(c)
	}
	err = c.finishTxnStatement(err)
	if err == nil && (c.linearizable || c.majorityRead) {
		err = finishLinearizable(c)
	}
	if err != nil {
		e := asMongoErr(err)
		if e.Code == mongoerr.MaxTimeMSExpired {
			c.Env.Stats.MaxTimeExpired.Add(1)
		}
		return c.fail(e)
	}
	c.Reply.AppendDouble("ok", 1)
	if c.Env.Repl != nil {
		waitWriteConcern(c)
		appendReplReply(c, true)
	}
	return c.Reply.Finish()
}

// isErrorReply reports a reply built by errorReply, whose first field is
// ok: 0.
func isErrorReply(reply bson.Doc) bool {
	it := reply.Iter()
	return it.Next() && it.Element().Key == "ok" && !it.Element().Value.Truthy()
}

// errorReply discards whatever the command appended and builds
// {ok: 0, errmsg, code, codeName, ...extra}.
func errorReply(b *bson.Builder, err error) bson.Doc {
	startErrorReply(b, err)
	return b.Finish()
}

func startErrorReply(b *bson.Builder, err error) {
	e := asMongoErr(err)
	b.Reset(nil)
	b.AppendDouble("ok", 0)
	b.AppendString("errmsg", e.Message)
	b.AppendInt32("code", e.Code)
	b.AppendString("codeName", e.CodeName())
	appendExtra(b, e.Extra)
}

// fail is the command's error reply; a replica-set member adds
// $clusterTime and operationTime.
func (c *Ctx) fail(err error) bson.Doc {
	startErrorReply(c.Reply, err)
	e := asMongoErr(err)
	var labels []string
	if c.transientTxnError(e.Code, false) && !hasField(e.Extra, "errorLabels") {
		labels = append(labels, "TransientTransactionError")
	}
	if c.retryableLabel(e) {
		labels = append(labels, "RetryableWriteError")
	}
	if len(labels) > 0 {
		c.Reply.StartArray("errorLabels")
		for i, l := range labels {
			c.Reply.AppendString(bson.Index(i), l)
		}
		c.Reply.End()
	}
	if c.Env.Repl != nil {
		if code := asMongoErr(err).Code; mongoerr.InCategory(code, mongoerr.CategoryNotPrimaryError) || mongoerr.InCategory(code, mongoerr.CategoryShutdownError) {
			c.Env.member().AppendTopologyVersion(c.Reply, processID)
		}
		appendReplReply(c, false)
	}
	return c.Reply.Finish()
}

// appendExtra appends the elements of a raw document (an error's extra
// fields) to b.
func appendExtra(b *bson.Builder, extra []byte) {
	if len(extra) == 0 {
		return
	}
	it := bson.Doc(extra).Iter()
	for it.Next() {
		b.AppendElement(it.Element())
	}
}

// ErrorReply builds an error reply outside any command (e.g. for a malformed
// message).
func ErrorReply(err error) bson.Doc { return errorReply(&bson.Builder{}, err) }
