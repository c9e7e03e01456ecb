// Package dispatch is the request framework every command runs in, the
// layer around internal/command's handlers: the server's state the
// commands share (Env, env.go), the connection (Conn) and one invocation
// (Ctx, ctx.go), the table's entries (Command, registered by
// internal/command), and Dispatch, which runs a handler and answers for
// it. Around every handler Dispatch checks the request's generic fields
// and the Stable API, authorizes it (authz.go), checks the session out and
// begins or continues its transaction (session.go), applies the replica
// set's rules and stamps the reply (replset.go, replset_reply.go),
// evaluates failCommand (failpoint.go), registers the operation for
// currentOp and killOp and, when it ends, feeds the slow-operation log, the
// profiler, top and the latency counters (observe.go over internal/opctx),
// and turns a returned error or a panic into MongoDB's error reply
// (dispatch.go). What a handler calls on its Ctx is here too: typed access
// to the command's fields with MongoDB's IDL errors (args.go), the
// command's snapshot and write transactions (storage.go), its collection
// writers (writer.go) and its retryable statements (retry.go).
//
// It does not import kv, internal/command or internal/server
// (internal/lint checks it): the handlers are above it, storage is below
// exec, and only internal/command imports it.
package dispatch

import (
	"fmt"
	"strings"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/concern"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/opctx"
	"github.com/cairndb/cairn/internal/params"
)

// commands indexes the command table by every name and alias. Register
// sets it once, as internal/command initializes; nothing changes it after.
var commands map[string]*Command

// Register installs the command table, indexed by every name and alias,
// that Lookup and Dispatch read. internal/command calls it from its init,
// so any package that can reach Dispatch through it has its commands; a
// second call panics.
func Register(byName map[string]*Command) {
	if commands != nil {
		panic("dispatch: command table registered twice")
	}
	commands = byName
}

// Lookup finds a command by the name a client used.
func Lookup(name string) (*Command, bool) {
	c, ok := commands[name]
	if !ok {
		c, ok = commands[strings.ToLower(name)]
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
	c.Cmd = cmd
	if cmd.AdminOnly && c.DB != "admin" {
		return c.fail(mongoerr.New(mongoerr.Unauthorized, "%s may only be run against the admin database.", cmd.Name))
	}
	defer c.releaseSession()
	if err := beginSession(c, cmd); err != nil {
		return c.fail(c.finishTxnStatement(err))
	}
	defer c.ReleaseSnapshot()
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
	if c.Sess != nil {
		op.SetSession(c.Sess.Key)
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
	AppendExtra(b, e.Extra)
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
			c.Env.Member().AppendTopologyVersion(c.Reply, processID)
		}
		appendReplReply(c, false)
	}
	return c.Reply.Finish()
}

// AppendExtra appends the elements of a raw document (an error's extra
// fields) to b.
func AppendExtra(b *bson.Builder, extra []byte) {
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

// checkAPIParameters applies the Stable API rules to the command cmd that
// c names (internal/params).
func checkAPIParameters(c *Ctx, cmd *Command) error { return params.CheckAPI(cmd.Name, c.Body) }
