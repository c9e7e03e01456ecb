package command

// What replica-set mode adds around every command (Dispatch calls these):
//
//   - Cluster time gossip. A client's $clusterTime advances the member's
//     clock: without access control every client may advance it, as
//     mongod lets clients holding advanceClusterTime (all of them when
//     auth is off) skip the signature check. With access control on, Cairn
//     has no keys to check a signature with and ignores the client's time
//     (it only ever gossips back a time the member handed out). Every
//     reply carries $clusterTime {clusterTime, signature {hash: 20 zero
//     bytes, keyId: 0}} (mongod's unsigned form without a keyFile) and
//     operationTime: the optime of the command's last write, else the
//     member's last applied optime (what a read reads).
//   - Writes on a member that is not primary (not yet initiated, stepped
//     down) fail NotWritablePrimary "not primary", except in the local
//     database.
//   - readConcern: local, available and majority read the latest data
//     (the majority of one member is the member; a write is acknowledged
//     once committed); linearizable also waits, after the read, for the
//     journal to hold every write before it; afterClusterTime (and
//     afterOpTime's ts) waits until every write stamped up to it is
//     committed. A primary whose last applied optime is behind takes the
//     writer (behind any write holding an earlier stamp) and commits an
//     empty stamped transaction, as mongod's primary writes a no-op, so
//     the wait ends even when the time came from gossip and no write
//     follows. snapshot outside a transaction is a snapshot read
//     (snapshot_read.go): find, aggregate and distinct, at atClusterTime
//     or the current data.
//   - Write replies carry opTime and electionId, and a write concern the
//     set cannot meet is reported in writeConcernError.
//   - Writes are stamped inside their transaction (writeTx): the oplog
//     writer reports its entries' stamps through NoteOpTime; a transaction
//     that wrote no entry gets one stamp of its own, so that the member's
//     applied optime covers every commit.

import (
	"encoding/binary"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/repl"
)

// maxClockDrift bounds how far ahead of the wall clock a gossiped cluster
// time may be (mongod's maxAcceptableLogicalClockDriftSecs: one year).
const maxClockDrift = 365 * 24 * 3600

// NoteOpTime records the timestamp of an oplog entry the command's
// current write transaction wrote (the oplog writer calls it).
func (c *Ctx) NoteOpTime(ts repl.Timestamp) {
	if ts > c.txTS {
		c.txTS = ts
	}
}

// OpTime is the optime of the command's last committed write (0: none).
func (c *Ctx) OpTime() repl.Timestamp { return c.opTime }

// stampTx gives the transaction its stamp if no oplog entry did (called
// inside the transaction, under the writer lock).
func (c *Ctx) stampTx() {
	if c.Env.Repl != nil && c.txTS == 0 {
		c.txTS = c.Env.Repl.Clock.Next()
	}
}

// committedTx records the committed transaction's stamp as applied.
func (c *Ctx) committedTx() {
	if c.Env.Repl == nil || c.txTS == 0 {
		return
	}
	c.Env.Repl.NoteApplied(c.txTS, time.Now())
	c.opTime = max(c.opTime, c.txTS)
	c.txTS = 0
}

// gossipIn advances the clock to the client's $clusterTime.
func gossipIn(c *Ctx) error {
	if c.Env.Repl == nil {
		return nil
	}
	v, ok := c.Body.Lookup("$clusterTime")
	if !ok {
		return nil
	}
	if v.Type != bson.TypeDocument {
		return mongoerr.New(mongoerr.TypeMismatch, "BSON field '$clusterTime' is the wrong type '%s', expected type 'object'", v.Type)
	}
	ct, ok := v.Document().Lookup("clusterTime")
	if !ok {
		return mongoerr.New(mongoerr.NoSuchKey, "Missing expected field \"clusterTime\"")
	}
	if ct.Type != bson.TypeTimestamp {
		return mongoerr.New(mongoerr.TypeMismatch, "\"clusterTime\" had the wrong type. Expected timestamp, found %s", ct.Type)
	}
	if c.Env.Auth != nil && c.Env.Auth.Enabled() {
		return nil // no keys to check the signature with: not trusted
	}
	t, i := ct.Timestamp()
	if now := time.Now().Unix(); int64(t) > now+maxClockDrift {
		return mongoerr.New(mongoerr.ClusterTimeFailsRateLimiter, "New cluster time, %d, is too far from this node's wall clock time, %d.", t, now)
	}
	c.Env.Repl.Clock.Observe(repl.MakeTimestamp(t, i))
	return nil
}

// checkReplCommand refuses writes on a member that is not primary and
// reads a replica-set readConcern, waiting for afterClusterTime.
func checkReplCommand(c *Ctx, cmd *Command) error {
	set := c.Env.Repl
	if cmd.Write && c.DB != "local" && !c.applying && !set.IsWritablePrimary() {
		return mongoerr.New(mongoerr.NotWritablePrimary, "not primary")
	}
	if err := checkSecondaryOk(c, cmd); err != nil {
		return err
	}
	rc, ok := c.Body.Lookup("readConcern")
	if !ok || rc.Type == bson.TypeNull {
		return nil
	}
	if rc.Type != bson.TypeDocument {
		return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'readConcern' is the wrong type '%s', expected type 'object'", rc.Type)
	}
	var after, at repl.Timestamp
	afterOpTime, snapshot, hasAt, hasAfter := false, false, false, false
	it := rc.Document().Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "level":
			if e.Value.Type != bson.TypeString {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'readConcern.level' is the wrong type '%s', expected type 'string'", e.Value.Type)
			}
			switch l := e.Value.StringValue(); l {
			case "local", "available":
			case "majority":
				c.majorityRead = c.txn == nil && c.txnStart == nil
			case "linearizable":
				if !set.IsWritablePrimary() {
					return mongoerr.New(mongoerr.NotWritablePrimary, "cannot satisfy linearizable read concern on non-primary node")
				}
				if stage := writeStage(c.Body); stage != "" && cmd.Name == "aggregate" {
					return mongoerr.New(mongoerr.InvalidOptions, "%s cannot be used with a 'linearizable' read concern level", stage)
				}
				c.linearizable = true
			case "snapshot":
				snapshot = true
			default:
				return mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field 'readConcern.level' is not a valid value.", l)
			}
		case "afterClusterTime":
			if e.Value.Type != bson.TypeTimestamp {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'readConcern.afterClusterTime' is the wrong type '%s', expected type 'timestamp'", e.Value.Type)
			}
			t, i := e.Value.Timestamp()
			if after = repl.MakeTimestamp(t, i); after == 0 {
				return mongoerr.New(mongoerr.InvalidOptions, "readConcern afterClusterTime cannot be a null timestamp")
			}
			hasAfter = true
		case "afterOpTime":
			if e.Value.Type != bson.TypeDocument {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'readConcern.afterOpTime' is the wrong type '%s', expected type 'object'", e.Value.Type)
			}
			ts, ok := e.Value.Document().Lookup("ts")
			if !ok || ts.Type != bson.TypeTimestamp {
				return mongoerr.New(mongoerr.TypeMismatch, "readConcern.afterOpTime must be an optime {ts: Timestamp, t: long}")
			}
			t, i := ts.Timestamp()
			after = max(after, repl.MakeTimestamp(t, i))
			afterOpTime = true
		case "atClusterTime":
			if e.Value.Type != bson.TypeTimestamp {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'readConcern.atClusterTime' is the wrong type '%s', expected type 'timestamp'", e.Value.Type)
			}
			t, i := e.Value.Timestamp()
			if at = repl.MakeTimestamp(t, i); at == 0 {
				return mongoerr.New(mongoerr.InvalidOptions, "readConcern atClusterTime cannot be a null timestamp")
			}
			hasAt = true
		case "provenance":
		default:
			return mongoerr.New(mongoerr.IDLUnknownField, "BSON field 'readConcern.%s' is an unknown field.", e.Key)
		}
	}
	if err := checkSnapshotConcern(c, cmd, snapshot, hasAt, hasAfter, afterOpTime); err != nil {
		return err
	}
	readAt := snapshot && c.txn == nil && c.txnStart == nil // a snapshot read
	if hasAt && readAt {
		now := set.Clock.Now()
		if at > now {
			return mongoerr.New(mongoerr.InvalidOptions, "readConcern atClusterTime value must not be greater than the current clusterTime. Requested clusterTime: %s; current clusterTime: %s", at, now)
		}
		if err := waitApplied(c, at); err != nil {
			return err
		}
		return openSnapshotRead(c, at)
	}
	if after == 0 {
		if readAt {
			return openSnapshotRead(c, 0)
		}
		return nil
	}
	if c.linearizable && afterOpTime {
		return mongoerr.New(mongoerr.FailedToParse, "afterOpTime not compatible with linearizable read concern")
	}
	now := set.Clock.Now()
	if now == 0 {
		return mongoerr.New(mongoerr.NotPrimaryOrSecondary, "Current clusterTime is uninitialized, cannot service the requested clusterTime. Requested clusterTime: %s; current clusterTime: %s", after, now)
	}
	if after > now && !afterOpTime {
		return mongoerr.New(mongoerr.InvalidOptions, "readConcern afterClusterTime value must not be greater than the current clusterTime. Requested clusterTime: %s; current clusterTime: %s", after, now)
	}
	if after > now {
		// An optime this member never wrote cannot be reached by a no-op.
		return mongoerr.New(mongoerr.InvalidOptions, "readConcern afterOpTime %s is later than this member's last optime %s", after, now)
	}
	if err := waitApplied(c, after); err != nil {
		return err
	}
	if readAt {
		return openSnapshotRead(c, 0)
	}
	return nil
}

// checkSnapshotConcern checks a readConcern's snapshot level and
// atClusterTime by mongod's rules (ReadConcernArgs and the commands'
// supportsReadConcern).
func checkSnapshotConcern(c *Ctx, cmd *Command, snapshot, hasAt, hasAfter, afterOpTime bool) error {
	if hasAfter && hasAt {
		return mongoerr.New(mongoerr.InvalidOptions, "Can not specify both afterClusterTime and atClusterTime")
	}
	if hasAt && !snapshot {
		return mongoerr.New(mongoerr.InvalidOptions, "atClusterTime field can be set only if level is equal to snapshot")
	}
	if afterOpTime && snapshot {
		return mongoerr.New(mongoerr.InvalidOptions, "afterOpTime field cannot be set if level is equal to snapshot")
	}
	if snapshot && c.txn == nil && c.txnStart == nil && !snapshotReadCommands[cmd.Name] {
		return mongoerr.New(mongoerr.InvalidOptions, "Command %s does not support { readConcern: { level: \"snapshot\" } } :: caused by :: read concern not supported", cmd.Name)
	}
	if snapshot && cmd.Name == "aggregate" {
		if p, ok := c.Body.Lookup("pipeline"); ok && p.Type == bson.TypeArray {
			it := p.Document().Iter()
			for it.Next() {
				st := it.Element().Value
				if st.Type != bson.TypeDocument {
					continue
				}
				if f := st.Document().Iter(); f.Next() && (f.Element().Key == "$out" || f.Element().Key == "$merge") {
					return mongoerr.New(mongoerr.InvalidOptions, "%s cannot be used with a 'snapshot' read concern level", f.Element().Key)
				}
			}
		}
	}
	return nil
}

// waitApplied waits until every write stamped up to ts is committed.
func waitApplied(c *Ctx, ts repl.Timestamp) error {
	set := c.Env.Repl
	for {
		done, next := set.AppliedAt(ts)
		if done {
			return nil
		}
		if set.IsWritablePrimary() {
			// The no-op write: the writer lock waits for any write holding
			// an earlier stamp; the empty transaction's own stamp is later
			// than ts (the clock has passed it) and marks it applied.
			if err := c.writeTx(exec.Lazy, func(*exec.Tx) error { return nil }); err != nil {
				return err
			}
			continue
		}
		_, topo := set.Topology()
		select {
		case <-next:
		case <-topo:
		case <-c.Done():
			return ctxErr(c.Err())
		}
	}
}

// finishLinearizable makes the read linearizable: the journal holds every
// write acknowledged before the read (mongod writes a majority no-op). On
// a set of several members, a linearizable or majority read waits for the
// commit point instead (finishRaftRead).
func finishLinearizable(c *Ctx) error {
	if c.Env.Raft() != nil {
		return finishRaftRead(c)
	}
	if !c.linearizable {
		return nil
	}
	return c.writeTx(exec.Sync, func(*exec.Tx) error { return nil })
}

// writeReplyCommands are the commands whose replies carry opTime and
// electionId (mongod's WriteCommandReplyBase).
var writeReplyCommands = map[string]bool{"insert": true, "update": true, "delete": true}

// appendReplReply appends what a replica-set member adds to a reply:
// writeConcernError, opTime and electionId on a successful write, then
// $clusterTime and operationTime.
func appendReplReply(c *Ctx, ok bool) {
	set := c.Env.Repl
	r := c.Reply
	st := set.Status()
	if ok && c.cmd != nil && (c.cmd.Write || c.wcPending != nil) {
		if c.wcPending != nil {
			r.StartDocument("writeConcernError")
			r.AppendInt32("code", c.wcPending.Code)
			r.AppendString("codeName", c.wcPending.CodeName())
			r.AppendString("errmsg", c.wcPending.Message)
			r.StartDocument("errInfo")
			if c.wcTimeout {
				r.AppendBool("wtimeout", true)
			}
			c.wc.appendDoc(r, "writeConcern")
			r.End()
			r.End()
		}
		if writeReplyCommands[c.cmd.Name] && st.State == repl.StatePrimary {
			op := c.opTime
			if op == 0 {
				op = st.Applied
			}
			appendOpTime(r, "opTime", op, st.Term)
			r.AppendObjectID("electionId", repl.ElectionID(st.Term))
		}
	}
	now := set.Clock.Now()
	if now == 0 {
		return // not initiated: no cluster time yet
	}
	appendClusterTime(r, now)
	op := c.opTime
	if op == 0 && c.snapAt != 0 {
		op = c.snapAt // a snapshot read's operationTime is its read time, as mongod's
	}
	if op == 0 {
		op = st.Applied
	}
	r.AppendTimestamp("operationTime", op.T(), op.I())
}

// clusterTimeDoc is the $clusterTime document of every reply, {clusterTime:
// Timestamp(0, 0), signature: {hash: BinData(0, 20 zero bytes), keyId:
// Long(0)}} (mongod's signature without keys), encoded once: a reply
// copies it and sets the timestamp, at clusterTimeAt.
var clusterTimeDoc = func() bson.Doc {
	var b bson.Builder
	b.AppendTimestamp("clusterTime", 0, 0)
	b.StartDocument("signature")
	b.AppendBinary("hash", 0, make([]byte, 20))
	b.AppendInt64("keyId", 0)
	b.End()
	d := b.Finish()
	if len(d) != clusterTimeLen {
		panic("command: $clusterTime template is not 88 bytes")
	}
	return d
}()

// clusterTimeLen is the size of clusterTimeDoc.
const clusterTimeLen = 88

// clusterTimeAt is the offset of clusterTime's 8 bytes in clusterTimeDoc:
// after the length, the type byte and the key "clusterTime" with its NUL.
const clusterTimeAt = 4 + 1 + len("clusterTime") + 1

// appendClusterTime appends $clusterTime {clusterTime: ts, signature} to r.
func appendClusterTime(r *bson.Builder, ts repl.Timestamp) {
	var d [clusterTimeLen]byte
	n := copy(d[:], clusterTimeDoc)
	binary.LittleEndian.PutUint32(d[clusterTimeAt:], ts.I())
	binary.LittleEndian.PutUint32(d[clusterTimeAt+4:], ts.T())
	r.AppendDocument("$clusterTime", bson.Doc(d[:n]))
}
