package replset

import (
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/raftrepl"
	"github.com/cairndb/cairn/internal/repl"
)

// AppendStatus is replSetGetStatus' reply for the set in status st:
// the one member as mongod's prepareStatusResponse
// does, field for field. The member's applied, durable and majority
// committed optimes are one: a write is acknowledged once committed, and
// the majority of one is the member itself.
func (m Member) AppendStatus(r *bson.Builder, st repl.Status, body bson.Doc) {
	cfg := st.Config
	if cfg.Multi() && m.Raft() != nil {
		m.appendStatusMulti(r, st, body)
		return
	}
	mb := cfg.Members[0]
	now := time.Now()
	optime := func(key string) {
		r.StartDocument(key)
		r.AppendTimestamp("ts", st.Applied.T(), st.Applied.I())
		r.AppendInt64("t", st.Term)
		r.End()
	}
	wall := st.AppliedAt.UnixMilli()
	r.AppendString("set", cfg.Name)
	r.AppendDateTime("date", now.UnixMilli())
	r.AppendInt32("myState", int32(st.State))
	r.AppendInt64("term", st.Term)
	r.AppendString("syncSourceHost", "")
	r.AppendInt32("syncSourceId", -1)
	r.AppendInt64("heartbeatIntervalMillis", cfg.Settings.HeartbeatIntervalMillis)
	r.AppendInt32("majorityVoteCount", 1)
	r.AppendInt32("writeMajorityCount", 1)
	r.AppendInt32("votingMembersCount", 1)
	r.AppendInt32("writableVotingMembersCount", 1)
	r.StartDocument("optimes")
	optime("lastCommittedOpTime")
	r.AppendDateTime("lastCommittedWallTime", wall)
	optime("readConcernMajorityOpTime")
	optime("appliedOpTime")
	optime("durableOpTime")
	r.AppendDateTime("lastAppliedWallTime", wall)
	r.AppendDateTime("lastDurableWallTime", wall)
	r.End()
	r.AppendTimestamp("lastStableRecoveryTimestamp", st.Applied.T(), st.Applied.I())
	primary := st.State == repl.StatePrimary
	if primary {
		ed := st.ElectionTS.Time().UnixMilli()
		r.StartDocument("electionCandidateMetrics")
		r.AppendString("lastElectionReason", "electionTimeout")
		r.AppendDateTime("lastElectionDate", ed)
		r.AppendInt64("electionTerm", st.Term)
		r.AppendInt32("numVotesNeeded", 1)
		r.AppendDouble("priorityAtElection", mb.Priority)
		r.AppendInt64("electionTimeoutMillis", cfg.Settings.ElectionTimeoutMillis)
		r.AppendDateTime("newTermStartDate", ed)
		r.AppendDateTime("wMajorityWriteAvailabilityDate", ed)
		r.End()
	}
	r.StartArray("members")
	r.StartDocument("0")
	r.AppendInt32("_id", int32(mb.ID))
	r.AppendString("name", mb.Host)
	r.AppendDouble("health", 1)
	r.AppendInt32("state", int32(st.State))
	r.AppendString("stateStr", st.State.String())
	r.AppendInt32("uptime", int32(m.Set.Uptime()/time.Second))
	optime("optime")
	r.AppendDateTime("optimeDate", st.Applied.Time().UnixMilli())
	r.AppendDateTime("lastAppliedWallTime", wall)
	r.AppendDateTime("lastDurableWallTime", wall)
	r.AppendString("syncSourceHost", "")
	r.AppendInt32("syncSourceId", -1)
	r.AppendString("infoMessage", "")
	if primary {
		r.AppendTimestamp("electionTime", st.ElectionTS.T(), st.ElectionTS.I())
		r.AppendDateTime("electionDate", st.ElectionTS.Time().UnixMilli())
	}
	r.AppendInt64("configVersion", cfg.Version)
	r.AppendInt64("configTerm", cfg.Term)
	r.AppendBool("self", true)
	r.AppendString("lastHeartbeatMessage", "")
	r.End()
	r.End()
}

// appendStatusMulti is replSetGetStatus on a member of a set of several
// members: the set's optimes from this member's view and every member's
// state, health, optime, heartbeat and sync source (raftrepl.Members).
func (m Member) appendStatusMulti(r *bson.Builder, st repl.Status, body bson.Doc) {
	n := m.Raft()
	ns := n.Status()
	cfg := st.Config
	now := time.Now()
	members := n.Members(st.Applied)
	voters := 0
	for _, mb := range members {
		if !mb.Learner {
			voters++
		}
	}
	syncSource := ""
	for _, mb := range members {
		if mb.Self {
			syncSource = mb.SyncSource
		}
	}
	r.AppendString("set", cfg.Name)
	r.AppendDateTime("date", now.UnixMilli())
	r.AppendInt32("myState", int32(st.State))
	r.AppendInt64("term", st.Term)
	r.AppendString("syncSourceHost", syncSource)
	r.AppendInt32("syncSourceId", -1)
	r.AppendInt64("heartbeatIntervalMillis", cfg.Settings.HeartbeatIntervalMillis)
	r.AppendInt32("majorityVoteCount", int32(voters/2+1))
	r.AppendInt32("writeMajorityCount", int32(voters/2+1))
	r.AppendInt32("votingMembersCount", int32(voters))
	r.AppendInt32("writableVotingMembersCount", int32(voters))
	r.StartDocument("optimes")
	AppendOpTime(r, "lastCommittedOpTime", ns.Commit, st.Term)
	r.AppendDateTime("lastCommittedWallTime", ns.CommitWall.UnixMilli())
	AppendOpTime(r, "readConcernMajorityOpTime", ns.Commit, st.Term)
	AppendOpTime(r, "appliedOpTime", st.Applied, st.Term)
	AppendOpTime(r, "durableOpTime", st.Applied, st.Term)
	r.AppendDateTime("lastAppliedWallTime", st.AppliedAt.UnixMilli())
	r.AppendDateTime("lastDurableWallTime", st.AppliedAt.UnixMilli())
	r.End()
	r.AppendTimestamp("lastStableRecoveryTimestamp", ns.Commit.T(), ns.Commit.I())
	appendInitialSyncStatus(r, body, n)
	r.StartArray("members")
	for i, mb := range members {
		r.StartDocument(bson.Index(i))
		r.AppendInt32("_id", int32(mb.Member.ID))
		r.AppendString("name", mb.Member.Host)
		health := 0.0
		if mb.Health {
			health = 1
		}
		r.AppendDouble("health", health)
		r.AppendInt32("state", int32(mb.State))
		r.AppendString("stateStr", mb.State.String())
		if mb.Self {
			r.AppendInt32("uptime", int32(m.Set.Uptime()/time.Second))
		}
		AppendOpTime(r, "optime", mb.OpTime, st.Term)
		r.AppendDateTime("optimeDate", mb.OpTime.Time().UnixMilli())
		if !mb.Self {
			r.AppendDateTime("lastHeartbeat", mb.LastHeartbeat.UnixMilli())
			r.AppendInt64("pingMs", mb.Ping.Milliseconds())
		}
		r.AppendString("syncSourceHost", mb.SyncSource)
		r.AppendInt32("syncSourceId", -1)
		r.AppendString("infoMessage", "")
		if mb.State == repl.StatePrimary && mb.Self {
			r.AppendTimestamp("electionTime", st.ElectionTS.T(), st.ElectionTS.I())
			r.AppendDateTime("electionDate", st.ElectionTS.Time().UnixMilli())
		}
		r.AppendInt64("configVersion", cfg.Version)
		r.AppendInt64("configTerm", cfg.Term)
		if mb.Self {
			r.AppendBool("self", true)
		}
		r.AppendString("lastHeartbeatMessage", "")
		r.End()
	}
	r.End()
}

// AppendOpTime appends {ts, t}.
func AppendOpTime(r *bson.Builder, key string, ts repl.Timestamp, term int64) {
	r.StartDocument(key)
	r.AppendTimestamp("ts", ts.T(), ts.I())
	r.AppendInt64("t", term)
	r.End()
}

// AppendServerStatus appends serverStatus' repl section on a member of a
// replica set: hello's replica set fields, as mongod's, and on a set of
// several members Cairn's raft section: the term, the leader changes this
// member saw, the leader's commit latency and each member's replication
// lag as this member knows it (raftrepl.Metrics).
func (m Member) AppendServerStatus(r *bson.Builder, processID [12]byte) {
	r.StartDocument("repl")
	m.AppendHelloFields(r, "isWritablePrimary", processID)
	if n := m.Raft(); n != nil {
		applied, _ := m.Set.Applied()
		appendRaftMetrics(r, n.Metrics(applied))
	}
	r.End()
}

func appendRaftMetrics(r *bson.Builder, mt raftrepl.Metrics) {
	r.StartDocument("raft")
	r.AppendInt64("term", int64(mt.Term))
	r.AppendInt64("leaderChanges", int64(mt.LeaderChanges))
	r.StartDocument("commitLatency")
	r.AppendInt64("count", int64(mt.Commits))
	r.AppendInt64("totalMicros", mt.CommitTotal.Microseconds())
	r.StartArray("buckets")
	for i, n := range mt.CommitCounts {
		r.StartDocument(bson.Index(i))
		if i < len(raftrepl.CommitBuckets) {
			r.AppendInt64("leMicros", raftrepl.CommitBuckets[i].Microseconds())
		} else {
			r.AppendString("leMicros", "+Inf")
		}
		r.AppendInt64("count", int64(n))
		r.End()
	}
	r.End()
	r.End()
	r.StartArray("members")
	for i, ml := range mt.Members {
		r.StartDocument(bson.Index(i))
		r.AppendString("host", ml.Host)
		r.AppendBool("self", ml.Self)
		r.AppendInt64("lagEntries", int64(ml.Entries))
		if ml.HasSeconds {
			r.AppendInt64("lagSecs", ml.Seconds)
		}
		r.End()
	}
	r.End()
	r.End()
}
