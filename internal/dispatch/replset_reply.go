package dispatch

// What replica-set mode adds around every command (Dispatch calls these;
// internal/replset/reply.go describes the rules and holds the mechanism):
// cluster time gossip, refusing writes on a member that is not primary,
// the readConcern's waits and snapshot reads, waiting for the write
// concern, and the replies' $clusterTime, operationTime, opTime,
// electionId and writeConcernError. Writes are stamped inside their
// transaction (WriteTx): the oplog writer reports its entries' stamps
// through NoteOpTime; a transaction that wrote no entry gets one stamp of
// its own, so that the member's applied optime covers every commit.

import (
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/concern"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/internal/replset"
)

// NoteOpTime records the timestamp of an oplog entry the command's
// current write transaction wrote (the oplog writer calls it).
func (c *Ctx) NoteOpTime(ts repl.Timestamp) {
	if ts > c.TxTS {
		c.TxTS = ts
	}
}

// OpTime is the optime of the command's last committed write (0: none).
func (c *Ctx) OpTime() repl.Timestamp { return c.LastOpTime }

// stampTx gives the transaction its stamp if no oplog entry did (called
// inside the transaction, under the writer lock).
func (c *Ctx) stampTx() {
	if c.Env.Repl != nil && c.TxTS == 0 {
		c.TxTS = c.Env.Repl.Clock.Next()
	}
}

// CommittedTx records the committed transaction's stamp as applied.
func (c *Ctx) CommittedTx() {
	if c.Env.Repl == nil || c.TxTS == 0 {
		return
	}
	c.Env.Repl.NoteApplied(c.TxTS, time.Now())
	c.LastOpTime = max(c.LastOpTime, c.TxTS)
	c.TxTS = 0
}

// gossipIn advances the clock to the client's $clusterTime.
func gossipIn(c *Ctx) error {
	if c.Env.Repl == nil {
		return nil
	}
	return c.Env.Member().Gossip(c.Body)
}

// checkReplCommand refuses writes on a member that is not primary and
// reads a replica-set readConcern, waiting for afterClusterTime.
func checkReplCommand(c *Ctx, cmd *Command) error {
	set := c.Env.Repl
	if cmd.Write && c.DB != "local" && !c.applying && !set.IsWritablePrimary() {
		return mongoerr.New(mongoerr.NotWritablePrimary, "not primary")
	}
	m := c.Env.Member()
	if !c.applying {
		if err := m.CheckSecondaryOk(cmd.Name, c.DB, c.Body); err != nil {
			return err
		}
	}
	rc, ok := c.Body.Lookup("readConcern")
	if !ok || rc.Type == bson.TypeNull {
		return nil
	}
	if rc.Type != bson.TypeDocument {
		return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'readConcern' is the wrong type '%s', expected type 'object'", rc.Type)
	}
	inTxn := c.Txn != nil || c.txnStart != nil
	rcmd := concern.ReadCommand{Name: cmd.Name, Body: c.Body, Primary: set.IsWritablePrimary(), InTxn: inTxn}
	if cmd.Name == "aggregate" {
		rcmd.WriteStage = writeStage(c.Body)
	}
	r, err := concern.ParseRead(rc.Document(), rcmd)
	if err != nil {
		return err
	}
	c.majorityRead = r.Majority && !inTxn
	c.linearizable = r.Linearizable
	open, at, err := m.WaitRead(c, r, r.Snapshot && !inTxn, c.noop)
	if err != nil || !open {
		return err
	}
	return openSnapshotRead(c, m, at)
}

// openSnapshotRead opens the command's snapshot for a snapshot read at
// atClusterTime at (0: the current data; replset.Member's OpenSnapshot).
func openSnapshotRead(c *Ctx, m replset.Member, at repl.Timestamp) error {
	tx, err := c.Snapshot()
	if err != nil {
		return err
	}
	ts, old, err := m.OpenSnapshot(tx, at)
	if err != nil {
		return err
	}
	if old != nil {
		c.Snap.Adopt(old)
	}
	c.SnapAt = ts
	return nil
}

// SnapReadTime is the cluster time a batch reports as atClusterTime (0:
// not a snapshot read).
func SnapReadTime(c *Ctx, cur *exec.Cursor) repl.Timestamp {
	if cur != nil {
		return repl.Timestamp(cur.AtClusterTime)
	}
	return c.SnapAt
}

// finishLinearizable makes a linearizable or majority read wait, after
// it read, for what it must (replset.Member's FinishRead).
func finishLinearizable(c *Ctx) error {
	return c.Env.Member().FinishRead(c, c.linearizable, c.raftEpoch, c.noop)
}

// writeReplyCommands are the commands whose replies carry opTime and
// electionId (mongod's WriteCommandReplyBase).
var writeReplyCommands = map[string]bool{"insert": true, "update": true, "delete": true}

// appendReplReply appends what a replica-set member adds to a reply
// (replset.Member's AppendReply).
func appendReplReply(c *Ctx, ok bool) {
	rp := replset.Reply{OK: ok && c.Cmd != nil, Pending: c.WCPending, Timeout: c.wcTimeout, WC: c.WC, OpTime: c.LastOpTime, SnapAt: c.SnapAt}
	if c.Cmd != nil {
		rp.Write, rp.WriteReply = c.Cmd.Write, writeReplyCommands[c.Cmd.Name]
	}
	c.Env.Member().AppendReply(c.Reply, &rp)
}
