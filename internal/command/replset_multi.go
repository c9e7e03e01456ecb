package command

// The command layer's side of a set of several members (internal/raftrepl
// holds the mechanism): starting the Raft node, the internal commands
// members send each other (_raftMessages, _raftJoin), applying a DDL
// entry by running its command, waiting for a write concern, and refusing
// reads on a secondary without secondaryOk.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/opctx"
	"github.com/cairndb/cairn/internal/raftrepl"
	"github.com/cairndb/cairn/internal/repl"
	"go.etcd.io/raft/v3"
)

// Raft is the member's Raft node (nil: not a member of a set of several
// members).
func (e *Env) Raft() *raftrepl.Node { return e.state.raft.Load() }

// startRaft starts the member's Raft node for cfg.
func (e *Env) startRaft(cfg *repl.Config, bootstrap bool) (*raftrepl.Node, error) {
	return e.startRaftTerm(cfg, bootstrap, 1)
}

// startRaftTerm starts the member's Raft node for cfg; a bootstrapped group
// begins in term.
func (e *Env) startRaftTerm(cfg *repl.Config, bootstrap bool, term uint64) (*raftrepl.Node, error) {
	e.state.raftMu.Lock()
	defer e.state.raftMu.Unlock()
	if n := e.state.raft.Load(); n != nil {
		return n, nil
	}
	n, err := raftrepl.Start(raftrepl.Options{Set: e.Repl, DB: e.KV, Oplog: e.Oplog, Log: e.Log,
		ApplyCommand: e.applyCommand, StoreConfig: e.storeReplConfig, OnRollback: e.Sessions.RollBackEntry, BootstrapTerm: term, MemberKey: e.Auth.MemberKey(), MemberTLS: e.MemberTLS,
		Snapshots: e.snapshotOptions(), Restored: e.restored}, cfg, bootstrap)
	if err != nil {
		return nil, err
	}
	e.state.raft.Store(n)
	return n, nil
}

// StartRepl starts replication of a set of several members found in
// storage at start, once the member knows its address (the server calls
// it when it listens).
func (e *Env) StartRepl() error {
	if e.Repl == nil {
		return nil
	}
	cfg := e.Repl.Status().Config
	if !cfg.Multi() {
		return nil
	}
	_, err := e.startRaft(cfg, false)
	return err
}

// StopRepl stops the Raft node (server shutdown).
func (e *Env) StopRepl() {
	if n := e.Raft(); n != nil {
		n.Stop()
	}
}

// storeReplConfig writes a configuration the set committed to
// local.system.replset, durably.
func (e *Env) storeReplConfig(cfg *repl.Config) error {
	tx, err := e.KV.BeginWrite(context.Background())
	if err != nil {
		return fmt.Errorf("writing the replica set configuration: %w", err)
	}
	defer tx.Rollback()
	if err := replaceOnly(tx, replConfigColl, cfg.Doc()); err != nil {
		return err
	}
	if err := tx.CommitWith(exec.Sync); err != nil {
		return fmt.Errorf("writing the replica set configuration: %w", err)
	}
	return nil
}

// initiateRaft initiates a set of several members: this member stores the
// configuration, starts a Raft group of itself and adds the others in the
// background (raftrepl/join.go).
func (e *Env) initiateRaft(cfg *repl.Config) error {
	if e.noMemberAuth() {
		return errNoMemberAuth()
	}
	if _, err := e.persistReplConfig(cfg, 0); err != nil {
		return err
	}
	e.Repl.Follow(cfg, 0)
	n, err := e.startRaft(cfg, true)
	if err != nil {
		return err
	}
	go n.AddMembers(context.Background(), cfg)
	return nil
}

// applyCommand runs a DDL entry's command as the member applying it:
// past the primary check and without waiting for a write concern.
func (e *Env) applyCommand(ctx context.Context, db string, o bson.Doc) error {
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

// raftMessages steps a peer's Raft messages into this member's node.
func raftMessages(c *Ctx) error {
	n, err := memberNode(c, "message")
	if err != nil {
		return err
	}
	msgs, _, err := raftrepl.DecodeMessages(c.Body)
	if err != nil {
		return mongoerr.New(mongoerr.FailedToParse, "%v", err)
	}
	return n.Receive(c, msgs)
}

// raftJoin makes this member join the set whose primary sent it.
func raftJoin(c *Ctx) error {
	set := c.Env.Repl
	if set == nil {
		return errNoRepl()
	}
	if c.Env.noMemberAuth() {
		return errNoMemberAuth()
	}
	v, _ := c.Body.Lookup("config")
	if v.Type != bson.TypeDocument {
		return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'config' is the wrong type '%s', expected type 'object'", v.Type)
	}
	cfg, err := repl.ParseConfig(v.Document())
	if err != nil {
		return err
	}
	if cfg.Name != set.Name {
		return mongoerr.New(mongoerr.InvalidReplicaSetConfig, "Our replica set configuration is for %s, but the join is for %s", set.Name, cfg.Name)
	}
	if err := checkSelf(cfg, set.Me()); err != nil {
		return err
	}
	if cur := set.Status().Config; cur != nil {
		if cur.Settings.ReplicaSetID == cfg.Settings.ReplicaSetID && c.Env.Raft() != nil {
			return nil // asked again: joined already
		}
		return repl.ErrAlreadyInitialized
	}
	if err := c.Env.storeReplConfig(cfg); err != nil {
		return err
	}
	set.Follow(cfg, 0)
	c.Env.Log.Info("Joining the replica set", "c", "REPL", "set", cfg.Name, "version", cfg.Version)
	_, err = c.Env.startRaft(cfg, false)
	return err
}

// waitWriteConcern waits, on a member of a set of several members, until
// the command's writes meet its write concern: w: "majority" once Raft
// committed the entry carrying them, w: N once N members hold it; past
// wtimeout the reply carries WriteConcernFailed with errInfo.wtimeout.
func waitWriteConcern(c *Ctx) {
	n := c.Env.Raft()
	if n == nil || c.applying || c.cmd == nil || c.wcPending != nil || !takesWriteConcern(c.cmd, c.Body) {
		return
	}
	wc := c.wc
	if wc.unacknowledged() || (!wc.majority && wc.mode == "" && wc.w <= 1) {
		return
	}
	// Wait for the command's last oplog entry or, without a write, for
	// what the client may have seen: at most the last entry this member
	// appended. A write transaction without an oplog entry (a drop of a
	// missing collection, a write to an unreplicated namespace) is
	// stamped with a ts of the member's clock that no entry carries:
	// the commit point would pass it only with the next write.
	ts := c.opTime
	if ts == 0 {
		ts, _ = c.Env.Repl.Applied()
	}
	if c.Env.Oplog != nil {
		if last := c.Env.Oplog.LastAppended(); ts > last {
			ts = last
		}
	}
	// The operation's own context: a command's maxTimeMS context ended
	// with its handler; wtimeout bounds the wait.
	var ctx context.Context = c.Context
	if op := opctx.Of(c); op != nil {
		ctx = op
	}
	if wc.wtimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(wc.wtimeout)*time.Millisecond)
		defer cancel()
	}
	var err error
	if wc.majority || wc.mode != "" {
		err = n.WaitCommitted(ctx, ts, c.raftEpoch)
	} else {
		err = n.WaitReplicated(ctx, ts, int(wc.w))
	}
	switch {
	case err == nil:
	case errors.Is(err, context.DeadlineExceeded) && wc.wtimeout > 0:
		c.wcPending = mongoerr.New(mongoerr.WriteConcernTimeout, "waiting for replication timed out")
		c.wcTimeout = true
	case errors.Is(err, raftrepl.ErrNotPrimary):
		c.wcPending = mongoerr.New(mongoerr.PrimarySteppedDown, "Primary stepped down while waiting for replication")
	default:
		e := asMongoErr(ctxErr(err))
		c.wcPending = e
	}
}

// secondaryReads are the commands that read data: on a member that is not
// primary they need secondaryOk (a $readPreference other than primary).
var secondaryReads = map[string]bool{"find": true, "aggregate": true, "count": true, "distinct": true,
	"listCollections": true, "listIndexes": true, "collStats": true, "dbStats": true, "dataSize": true,
	"mapReduce": true, "geoNear": true}

// checkSecondaryOk refuses a read on a secondary of a set of several
// members without secondaryOk (NotPrimaryNoSecondaryOk, 13435).
func checkSecondaryOk(c *Ctx, cmd *Command) error {
	if c.applying || !secondaryReads[cmd.Name] || c.DB == "local" || c.Env.Raft() == nil || c.Env.Repl.IsWritablePrimary() {
		return nil
	}
	if c.Env.Repl.Status().State == repl.StateStartup2 {
		return mongoerr.New(mongoerr.NotPrimaryOrSecondary, "node is not in primary or recovering state")
	}
	if rp, ok := c.Body.Lookup("$readPreference"); ok && rp.Type == bson.TypeDocument {
		if m, _ := rp.Document().Lookup("mode"); m.Type == bson.TypeString && m.StringValue() != "primary" {
			return nil
		}
	}
	return mongoerr.New(mongoerr.NotPrimaryNoSecondaryOk, "not primary and secondaryOk=false")
}

// stepDownRaft hands the primary to the most up-to-date voter (Raft's
// leadership transfer, which waits for it to catch up) and keeps this
// member from running for election for the step-down period.
func stepDownRaft(c *Ctx, n *raftrepl.Node, period, catchUp time.Duration) error {
	c.Env.Log.Info("Attempting to step down in response to replSetStepDown command", "c", "REPL", "id", 21579)
	n.Freeze(time.Now().Add(period))
	ctx, cancel := context.WithTimeout(c, max(catchUp, 2*time.Second))
	defer cancel()
	err := n.StepDown(ctx)
	if err == nil {
		return nil
	}
	n.Freeze(time.Time{})
	if errors.Is(err, raftrepl.ErrNotPrimary) {
		return mongoerr.New(mongoerr.NotWritablePrimary, "not primary so can't step down")
	}
	return mongoerr.New(mongoerr.ExceededTimeLimit, "No electable secondaries caught up as of %s. Please use the replSetStepDown command with the argument {force: true} to force node to step down.",
		time.Now().Format("2006-01-02T15:04:05.000-07:00"))
}

// freezeRaft is replSetFreeze on a member of a set of several members.
func freezeRaft(c *Ctx, n *raftrepl.Node, secs int64) error {
	if c.Env.Repl.IsWritablePrimary() {
		return mongoerr.New(mongoerr.NotSecondary, "cannot freeze node when primary or running for election. state: Primary")
	}
	if secs <= 0 {
		n.Freeze(time.Time{})
		c.Reply.AppendString("info", "unfreezing")
		return nil
	}
	if secs == 1 {
		c.Reply.AppendString("warning", "you really want to freeze for only 1 second?")
	}
	if until := time.Now().Add(time.Duration(secs) * time.Second); until.After(n.Frozen()) {
		n.Freeze(until)
	}
	return nil
}

// memberAuth is how this member connects to the others: its key and TLS.
func (e *Env) memberAuth() raftrepl.MemberAuth {
	return raftrepl.MemberAuth{Key: e.Auth.MemberKey(), TLS: e.MemberTLS}
}

// noMemberAuth reports access control on without a key file: the members
// could not authenticate to each other.
func (e *Env) noMemberAuth() bool {
	return e.Auth != nil && e.Auth.Enabled() && !e.Auth.HasKeyFile()
}

// memberNode is the node a request from another member of the set
// (Raft messages, a snapshot's chunk) goes to, after the checks all such
// requests pass: members can authenticate, the node runs, and the body's
// setName is this set's; what names the request in the last error.
func memberNode(c *Ctx, what string) (*raftrepl.Node, error) {
	if c.Env.noMemberAuth() {
		return nil, errNoMemberAuth()
	}
	n := c.Env.Raft()
	if n == nil {
		return nil, mongoerr.New(mongoerr.NotYetInitialized, "no replset config has been received")
	}
	if v, _ := c.Body.Lookup("setName"); v.Type != bson.TypeString || v.StringValue() != c.Env.Repl.Name {
		return nil, mongoerr.New(mongoerr.InvalidReplicaSetConfig, "%s for another replica set", what)
	}
	return n, nil
}

// errNoMemberAuth: access control is on and members have no key.
func errNoMemberAuth() error {
	return mongoerr.New(mongoerr.InvalidReplicaSetConfig, "a replica set of several members with access control on needs --keyFile (security.keyFile): its members authenticate to each other with it")
}

// reconfigRaft is replSetReconfig on a set of several members: one member
// added or removed at a time (Raft's single-member changes), or the same
// members with other settings. A one-member set grows by starting Raft
// (growRaft).
func reconfigRaft(c *Ctx, old, next *repl.Config, force bool) error {
	n := c.Env.Raft()
	if n == nil && !force {
		return growRaft(c, old, next)
	}
	if force {
		return mongoerr.New(mongoerr.NotImplemented, "Cairn does not support forced reconfigs of a set of several members: Raft needs a majority for every configuration change")
	}
	if !c.Env.Repl.IsWritablePrimary() {
		return mongoerr.New(mongoerr.NotWritablePrimary, "replSetReconfig should only be run on a writable PRIMARY. Current state %s;", c.Env.Repl.Status().State)
	}
	next.Term = c.Env.Repl.Status().Term
	added, removed := raftrepl.Diff(old, next)
	if len(added)+len(removed) > 1 {
		return mongoerr.New(mongoerr.NewReplicaSetConfigurationIncompatible, "Only one member can be added or removed at a time (Cairn's Raft membership changes)")
	}
	for _, m := range next.Members {
		for _, o := range old.Members {
			if m.ID == o.ID && (m.Host != o.Host || (m.Votes == 0) != (o.Votes == 0)) {
				return mongoerr.New(mongoerr.NewReplicaSetConfigurationIncompatible, "Cairn does not change a member's host or votes in place: remove the member, then add it back")
			}
		}
	}
	ctx, cancel := context.WithTimeout(c, 2*time.Minute)
	defer cancel()
	var err error
	switch {
	case len(added) == 1:
		if err = raftrepl.SendJoin(ctx, added[0].Host, next, c.Env.memberAuth()); err == nil {
			err = n.AddMember(ctx, next, added[0])
		}
	case len(removed) == 1:
		err = n.RemoveMember(ctx, next, raftrepl.RaftID(removed[0]))
	default:
		err = n.UpdateConfig(ctx, next)
	}
	if err != nil {
		return mongoerr.New(mongoerr.NewReplicaSetConfigurationIncompatible, "reconfig failed: %v", err)
	}
	return nil
}

// beginRaftRead records the rollback epoch the command starts in and,
// for a linearizable read, confirms the leadership through Raft's
// ReadIndex before the read (internal/raftrepl/reads.go).
func beginRaftRead(c *Ctx) error {
	n := c.Env.Raft()
	if n == nil || c.applying {
		return nil
	}
	c.raftEpoch = n.Epoch()
	if !c.linearizable {
		return nil
	}
	// Raft drops a ReadIndex request of a leader that lost its
	// leadership: the wait is bounded.
	ctx, cancel := context.WithTimeout(c, readIndexWait)
	defer cancel()
	if err := n.ReadIndex(ctx); err != nil {
		if errors.Is(err, context.DeadlineExceeded) && c.Err() == nil {
			err = raftrepl.ErrNotPrimary
		}
		return raftReadErr(err)
	}
	return nil
}

// readIndexWait bounds a linearizable read's leadership confirmation.
const readIndexWait = 5 * time.Second

// finishRaftRead waits, after a majority or linearizable read, until the
// commit point covers everything the read could have seen.
func finishRaftRead(c *Ctx) error {
	if err := c.Env.Raft().ReadCommitted(c, c.raftEpoch); err != nil {
		return raftReadErr(err)
	}
	return nil
}

func raftReadErr(err error) error {
	switch {
	case errors.Is(err, raftrepl.ErrRolledBack):
		return mongoerr.New(mongoerr.InterruptedDueToReplStateChange, "operation was interrupted because the member rolled back writes while it read")
	case errors.Is(err, raftrepl.ErrNotPrimary), errors.Is(err, raft.ErrProposalDropped):
		return mongoerr.New(mongoerr.PrimarySteppedDown, "the member stopped being primary before the read was confirmed")
	}
	return ctxErr(err)
}

// StreamCommitPoint is what change streams deliver up to
// (internal/changestream/commit.go): on a member of a set of several, the
// Raft commit point; on a one-member set, the oplog's durable (journaled)
// point, the majority of one member being the member. A member of a set
// of several whose Raft node has not started yet delivers nothing: what
// its oplog holds may still be rolled back.
func (e *Env) StreamCommitPoint() (repl.Timestamp, <-chan struct{}) {
	if n := e.Raft(); n != nil {
		return n.CommitPoint()
	}
	ts, ch := e.Oplog.Durable()
	if e.Repl.IsMulti() {
		return 0, ch
	}
	return ts, ch
}
