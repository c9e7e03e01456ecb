package command

// The command layer's side of snapshots and initial sync
// (internal/raftrepl/snapshot.go and snaprecv.go hold the mechanism): the
// internal command a member fetches a snapshot's chunks with, growing a
// one-member set into a set of several members, and initialSyncStatus in
// replSetGetStatus.

import (
	"context"
	"errors"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/raftrepl"
	"github.com/cairndb/cairn/internal/repl"
)

// raftSnapshot answers one chunk of a snapshot this member serves:
// {_raftSnapshot: <id>, setName, tree: <n>, after: BinData}.
func raftSnapshot(c *Ctx) error {
	n, err := memberNode(c, "snapshot request")
	if err != nil {
		return err
	}
	idv, _ := c.Body.Lookup(raftrepl.SnapshotCommand)
	id, ok := idv.AsInt64()
	if !ok {
		return mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s' is the wrong type '%s', expected type 'long'", raftrepl.SnapshotCommand, idv.Type)
	}
	tv, _ := c.Body.Lookup("tree")
	tree, ok := tv.AsInt64()
	if !ok || tree < 0 {
		return mongoerr.New(mongoerr.BadValue, "BSON field 'tree' must be a non-negative integer")
	}
	var after []byte
	if av, ok := c.Body.Lookup("after"); ok {
		if av.Type != bson.TypeBinary {
			return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'after' is the wrong type '%s', expected type 'binData'", av.Type)
		}
		if _, b := av.Binary(); len(b) > 0 {
			after = b
		}
	}
	ch, err := n.SnapshotChunk(id, int(tree), after)
	if errors.Is(err, raftrepl.ErrNoSnapshot) {
		return mongoerr.New(mongoerr.NoSuchKey, "%v", err)
	}
	if err != nil {
		return err
	}
	r := c.Reply
	r.StartArray("segments")
	for i, s := range ch.Segments {
		r.StartDocument(bson.Index(i))
		r.AppendString("t", s.Name)
		r.AppendBinary("d", 0, s.Data)
		r.End()
	}
	r.End()
	r.AppendInt64("records", int64(ch.Records))
	r.AppendInt32("tree", int32(ch.Tree))
	r.AppendBinary("after", 0, ch.After)
	r.AppendBool("done", ch.Done)
	return nil
}

// growRaft is replSetReconfig of a one-member set into several members:
// the member starts a Raft group of itself in a term after its own (so
// that electionIds keep growing), becomes its primary, then adds the new
// member, which receives a snapshot of its data (its initial sync).
func growRaft(c *Ctx, old, next *repl.Config) error {
	if c.Env.noMemberAuth() {
		return errNoMemberAuth()
	}
	if !c.Env.Repl.IsWritablePrimary() {
		return mongoerr.New(mongoerr.NotWritablePrimary, "replSetReconfig should only be run on a writable PRIMARY. Current state %s;", c.Env.Repl.Status().State)
	}
	added, removed := raftrepl.Diff(old, next)
	if len(added) != len(next.Members)-1 || len(removed) > 0 {
		return mongoerr.New(mongoerr.NewReplicaSetConfigurationIncompatible, "A one-member set grows by adding members: this node (%s) must stay its member", old.Members[0].Host)
	}
	if len(added) > 1 {
		return mongoerr.New(mongoerr.NewReplicaSetConfigurationIncompatible, "Only one member can be added or removed at a time (Cairn's Raft membership changes)")
	}
	// mongod's quorum check: the new member must answer before anything
	// changes here (it is told to join, and waits for the leader).
	qctx, qcancel := context.WithTimeout(c, 5*time.Second)
	err := raftrepl.SendJoin(qctx, added[0].Host, next, c.Env.memberAuth())
	qcancel()
	if err != nil {
		return mongoerr.New(mongoerr.NodeNotFound, "Quorum check failed because not enough voting nodes responded; required 2 but only the following 1 voters responded: %s; the following nodes did not respond affirmatively: %s failed with %v",
			old.Members[0].Host, added[0].Host, err)
	}
	st := c.Env.Repl.Status()
	cur := *old
	cur.Term = st.Term
	c.Env.Log.Info("Growing the one-member set: starting Raft", "c", "REPL", "term", st.Term, "adding", added[0].Host)
	c.Env.Repl.Follow(&cur, st.Term)
	n, err := c.Env.startRaftTerm(&cur, true, uint64(st.Term)+1)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c, 2*time.Minute)
	defer cancel()
	for !c.Env.Repl.IsWritablePrimary() {
		select {
		case <-ctx.Done():
			return mongoerr.New(mongoerr.NewReplicaSetConfigurationIncompatible, "reconfig failed: the member did not become primary of its Raft group")
		case <-time.After(10 * time.Millisecond):
		}
	}
	next.Term = c.Env.Repl.Status().Term
	if err = n.AddMember(ctx, next, added[0]); err != nil {
		return mongoerr.New(mongoerr.NewReplicaSetConfigurationIncompatible, "reconfig failed: %v", err)
	}
	return nil
}

// snapshotOptions are the members' snapshot settings: staged snapshots go
// to the data directory's _tmp (emptied at startup).
func (e *Env) snapshotOptions() raftrepl.SnapshotOptions {
	return raftrepl.SnapshotOptions{TempDir: e.TempDir}
}

// restored drops what the layers above derived from the data a snapshot
// replaced.
func (e *Env) restored() {
	if e.Auth != nil {
		if err := e.Auth.Changed(); err != nil {
			e.Log.Warn("Reloading the users after an initial sync failed", "c", "ACCESS", "error", err.Error())
		}
	}
	e.collations.Note(&e.Engine)
}

// appendInitialSyncStatus appends replSetGetStatus' initialSyncStatus:
// during an initial sync, and after one with {initialSync: 1}, as mongod.
func appendInitialSyncStatus(c *Ctx, n *raftrepl.Node) {
	st, ok := n.InitialSync()
	if !ok {
		return
	}
	if !st.Active {
		if v, _ := c.Body.Lookup("initialSync"); !v.Truthy() {
			return
		}
	}
	r := c.Reply
	r.StartDocument("initialSyncStatus")
	r.AppendInt32("failedInitialSyncAttempts", int32(st.Failed))
	r.AppendInt32("maxFailedInitialSyncAttempts", 10)
	r.AppendDateTime("initialSyncStart", st.Start.UnixMilli())
	if st.Active {
		r.AppendInt64("totalInitialSyncElapsedMillis", st.Elapsed.Milliseconds())
		r.AppendInt64("remainingInitialSyncEstimatedMillis", st.Remaining.Milliseconds())
	} else if k := len(st.Attempts); k > 0 {
		last := st.Attempts[k-1]
		r.AppendDateTime("initialSyncEnd", last.Start.Add(last.Duration).UnixMilli())
		r.AppendInt64("totalInitialSyncElapsedMillis", last.Duration.Milliseconds())
	}
	r.AppendInt64("approxTotalDataSize", st.ApproxTotalBytes)
	r.AppendInt64("approxTotalBytesCopied", st.BytesCopied)
	r.AppendInt64("approxTotalRecords", st.Records)
	r.AppendInt64("recordsCopied", st.RecordsCopied)
	r.AppendString("syncSource", st.Source)
	r.StartArray("initialSyncAttempts")
	for i, a := range st.Attempts {
		r.StartDocument(bson.Index(i))
		r.AppendInt64("durationMillis", a.Duration.Milliseconds())
		r.AppendString("status", a.Status)
		r.AppendString("syncSource", a.Source)
		r.AppendInt64("bytesCopied", a.Bytes)
		r.AppendInt64("recordsCopied", a.Records)
		r.End()
	}
	r.End()
	r.End()
}
