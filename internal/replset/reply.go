package replset

// What replica-set mode adds around every command (internal/command's Dispatch calls these):
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
//     (snapshots.go): find, aggregate and distinct, at atClusterTime
//     or the current data.
//   - Write replies carry opTime and electionId, and a write concern the
//     set cannot meet is reported in writeConcernError.
//   - Writes are stamped inside their transaction (dispatch.Ctx.WriteTx): the oplog
//     writer reports its entries' stamps through NoteOpTime; a transaction
//     that wrote no entry gets one stamp of its own, so that the member's
//     applied optime covers every commit.

import (
	"encoding/binary"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/concern"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/repl"
)

// maxClockDrift bounds how far ahead of the wall clock a gossiped cluster
// time may be (mongod's maxAcceptableLogicalClockDriftSecs: one year).
const maxClockDrift = 365 * 24 * 3600

// Gossip advances the clock to the client's $clusterTime (body's).
func (m Member) Gossip(body bson.Doc) error {
	v, ok := body.Lookup("$clusterTime")
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
	if m.Auth != nil && m.Auth.Enabled() {
		return nil // no keys to check the signature with: not trusted
	}
	t, i := ct.Timestamp()
	if now := time.Now().Unix(); int64(t) > now+maxClockDrift {
		return mongoerr.New(mongoerr.ClusterTimeFailsRateLimiter, "New cluster time, %d, is too far from this node's wall clock time, %d.", t, now)
	}
	m.Set.Clock.Observe(repl.MakeTimestamp(t, i))
	return nil
}

// Reply is what a command's reply reports of the command (AppendReply).
type Reply struct {
	// OK: the command succeeded; Write: it is a write command, or it has
	// a write concern error to report (Pending); WriteReply: its reply
	// carries opTime and electionId (insert, update, delete).
	OK, Write, WriteReply bool
	// Pending is the write concern the set could not meet (nil: met),
	// Timeout whether the wait ran out of wtimeout, WC the concern.
	Pending *mongoerr.Error
	Timeout bool
	WC      concern.Write
	// OpTime is the optime of the command's last write (0: none), SnapAt
	// a snapshot read's cluster time (0: not one).
	OpTime, SnapAt repl.Timestamp
}

// AppendReply appends what a replica-set member adds to a reply:
// writeConcernError, opTime and electionId on a successful write, then
// $clusterTime and operationTime.
func (m Member) AppendReply(r *bson.Builder, rp *Reply) {
	set := m.Set
	st := set.Status()
	if rp.OK && (rp.Write || rp.Pending != nil) {
		if rp.Pending != nil {
			r.StartDocument("writeConcernError")
			r.AppendInt32("code", rp.Pending.Code)
			r.AppendString("codeName", rp.Pending.CodeName())
			r.AppendString("errmsg", rp.Pending.Message)
			r.StartDocument("errInfo")
			if rp.Timeout {
				r.AppendBool("wtimeout", true)
			}
			rp.WC.AppendDoc(r, "writeConcern")
			r.End()
			r.End()
		}
		if rp.WriteReply && st.State == repl.StatePrimary {
			op := rp.OpTime
			if op == 0 {
				op = st.Applied
			}
			AppendOpTime(r, "opTime", op, st.Term)
			r.AppendObjectID("electionId", repl.ElectionID(st.Term))
		}
	}
	now := set.Clock.Now()
	if now == 0 {
		return // not initiated: no cluster time yet
	}
	appendClusterTime(r, now)
	op := rp.OpTime
	if op == 0 && rp.SnapAt != 0 {
		op = rp.SnapAt // a snapshot read's operationTime is its read time, as mongod's
	}
	if op == 0 {
		op = st.Applied
	}
	r.AppendTimestamp("operationTime", op.T(), op.I())
}

// AppendTopologyVersion appends topologyVersion {processId, counter}: a
// driver compares it with the one it has, and ignores a state change
// error it already knows of.
func (m Member) AppendTopologyVersion(r *bson.Builder, processID [12]byte) {
	counter, _ := m.Set.Topology()
	r.StartDocument("topologyVersion")
	r.AppendObjectID("processId", processID)
	r.AppendInt64("counter", counter)
	r.End()
}

// AppendHelloFields appends the replica set fields of hello (and of
// serverStatus' repl section) to r in mongod's order
// (HelloResponse::addToBSON): topologyVersion, hosts, setName, setVersion,
// the primary flag (named primaryKey), secondary, primary, me, electionId,
// lastWrite; a member without a configuration says so instead.
func (m Member) AppendHelloFields(r *bson.Builder, primaryKey string, processID [12]byte) {
	st := m.Set.Status()
	r.StartDocument("topologyVersion")
	r.AppendObjectID("processId", processID)
	r.AppendInt64("counter", st.Counter)
	r.End()
	if st.Config == nil {
		r.AppendBool(primaryKey, false)
		r.AppendBool("secondary", false)
		r.AppendString("info", "Does not have a valid replica set config")
		r.AppendBool("isreplicaset", true)
		return
	}
	cfg := st.Config
	r.StartArray("hosts")
	for i, h := range cfg.Hosts() {
		r.AppendString(bson.Index(i), h)
	}
	r.End()
	r.AppendString("setName", cfg.Name)
	r.AppendInt32("setVersion", int32(cfg.Version))
	primary := st.State == repl.StatePrimary
	r.AppendBool(primaryKey, primary)
	r.AppendBool("secondary", st.State == repl.StateSecondary)
	me, primaryHost := cfg.Members[0].Host, cfg.Members[0].Host
	majority, majorityAt := st.Applied, st.AppliedAt
	if cfg.Multi() {
		me, primaryHost = st.Me, m.Set.Primary()
		if n := m.Raft(); n != nil {
			ns := n.Status()
			majority, majorityAt = ns.Commit, ns.CommitWall
		}
		for _, mb := range cfg.Members {
			if mb.Host == me && mb.Hidden {
				r.AppendBool("hidden", true)
			}
		}
	}
	if primaryHost != "" && (primary || cfg.Multi()) {
		r.AppendString("primary", primaryHost)
	}
	r.AppendString("me", me)
	if primary {
		r.AppendObjectID("electionId", repl.ElectionID(st.Term))
	}
	date := st.AppliedAt.Unix() * 1000 // mongod's lastWriteDate has whole seconds
	r.StartDocument("lastWrite")
	AppendOpTime(r, "opTime", st.Applied, st.Term)
	r.AppendDateTime("lastWriteDate", date)
	AppendOpTime(r, "majorityOpTime", majority, st.Term)
	r.AppendDateTime("majorityWriteDate", majorityAt.Unix()*1000)
	r.End()
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
		panic("replset: $clusterTime template is not 88 bytes")
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
