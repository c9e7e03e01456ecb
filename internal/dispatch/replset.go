package dispatch

// The replica-set member the server's state makes up (replset.Member, with
// Env as its replset.Host), what the server starts and stops of it, the
// waits around a command (a linearizable read's leadership, the write
// concern) and applying a DDL entry by running its command.

import (
	"context"
	"errors"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/opctx"
	"github.com/cairndb/cairn/internal/raftrepl"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/internal/replset"
)

// Member is the replica-set member made of the server's state.
func (e *Env) Member() replset.Member {
	return replset.Member{Set: e.Repl, Engine: &e.Engine, Log: e.Log, Auth: e.Auth, TLS: e.MemberTLS,
		Sessions: e.Sessions, Host: e, State: &e.State.RS}
}

// AttachRepl connects the replica-set state to storage (replset.Member's
// Attach): a set initiated before a restart is loaded, and its member
// elected.
func (e *Env) AttachRepl(adoptName bool) error {
	if e.Repl == nil {
		return nil
	}
	return e.Member().Attach(adoptName)
}

// StartRepl starts replication of a set of several members found in
// storage at start, once the member knows its address (the server calls
// it when it listens).
func (e *Env) StartRepl() error {
	if e.Repl == nil {
		return nil
	}
	return e.Member().Start()
}

// StopRepl stops the Raft node (server shutdown).
func (e *Env) StopRepl() { e.Member().Stop() }

// Raft is the member's Raft node (nil: not a member of a set of several
// members).
func (e *Env) Raft() *raftrepl.Node { return e.State.RS.Raft() }

// StreamCommitPoint is what change streams deliver up to
// (replset.Member's StreamCommitPoint).
func (e *Env) StreamCommitPoint() (repl.Timestamp, <-chan struct{}) {
	return e.Member().StreamCommitPoint()
}

// CloseSnapshots drops the snapshots retained for snapshot reads (before
// the engine closes).
func (e *Env) CloseSnapshots() { e.State.RS.Snaps.CloseAll() }

// ApplyEntryCommand runs a DDL entry's command as the member applying it
// (replset.Host): past the primary check and without waiting for a write
// concern.
func (e *Env) ApplyEntryCommand(ctx context.Context, db string, o bson.Doc) error {
	var b bson.Builder
	it := o.Iter()
	for it.Next() {
		b.AppendElement(it.Element())
	}
	b.AppendString("$db", db)
	c := &Ctx{Context: ctx, Env: e, DB: db, Body: b.Finish(), Reply: &bson.Builder{}, applying: true}
	reply := Dispatch(c)
	if isErrorReply(reply) {
		msg, _ := reply.Lookup("errmsg")
		return errors.New(msg.StringValue())
	}
	return nil
}

// RestoredSnapshot drops what the layers above derived from the data a
// snapshot replaced (replset.Host).
func (e *Env) RestoredSnapshot() {
	if e.Auth != nil {
		if err := e.Auth.Changed(); err != nil {
			e.Log.Warn("Reloading the users after an initial sync failed", "c", "ACCESS", "error", err.Error())
		}
	}
	e.Collations.Note(&e.Engine)
}

// waitWriteConcern waits, on a member of a set of several members, until
// the command's writes meet its write concern (replset.Member's
// WaitWrite); past wtimeout the reply carries WriteConcernFailed with
// errInfo.wtimeout.
func waitWriteConcern(c *Ctx) {
	if c.Env.Raft() == nil || c.applying || c.Cmd == nil || c.WCPending != nil || !takesWriteConcern(c.Cmd, c.Body) {
		return
	}
	// The operation's own context: a command's maxTimeMS context ended
	// with its handler; wtimeout bounds the wait.
	var ctx context.Context = c.Context
	if op := opctx.Of(c); op != nil {
		ctx = op
	}
	c.WCPending, c.wcTimeout = c.Env.Member().WaitWrite(ctx, c.WC, c.LastOpTime, c.raftEpoch)
}

// beginRaftRead records the rollback epoch the command starts in and
// confirms a linearizable read's leadership (replset.Member's BeginRead).
func beginRaftRead(c *Ctx) error {
	if c.applying {
		return nil
	}
	epoch, err := c.Env.Member().BeginRead(c, c.linearizable)
	c.raftEpoch = epoch
	return err
}

// noop commits an empty write transaction (replset.Noop).
func (c *Ctx) noop(d exec.Durability) error {
	return c.WriteTx(d, func(*exec.Tx) error { return nil })
}

// processID identifies this server process in topologyVersion.
var processID = exec.NewObjectID()

// ProcessID is the processId this server reports in topologyVersion.
func ProcessID() [12]byte { return processID }

// TopologyVersion is the counter of topologyVersion and a channel closed
// at the next topology change (nil on a standalone, whose topology never
// changes): the awaitable hello waits on it.
func (e *Env) TopologyVersion() (int64, <-chan struct{}) {
	if e.Repl == nil {
		return 0, nil
	}
	return e.Repl.Topology()
}
