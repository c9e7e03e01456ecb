package command

import (
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/repl"
)

// replSetGetStatusMulti is replSetGetStatus on a member of a set of several
// members: the set's optimes from this member's view and every member's
// state, health, optime, heartbeat and sync source (raftrepl.Members).
func replSetGetStatusMulti(c *Ctx, st repl.Status) error {
	n := c.Env.Raft()
	ns := n.Status()
	cfg := st.Config
	now := time.Now()
	r := c.Reply
	members := n.Members(st.Applied)
	voters := 0
	for _, m := range members {
		if !m.Learner {
			voters++
		}
	}
	syncSource := ""
	for _, m := range members {
		if m.Self {
			syncSource = m.SyncSource
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
	appendOpTime(r, "lastCommittedOpTime", ns.Commit, st.Term)
	r.AppendDateTime("lastCommittedWallTime", ns.CommitWall.UnixMilli())
	appendOpTime(r, "readConcernMajorityOpTime", ns.Commit, st.Term)
	appendOpTime(r, "appliedOpTime", st.Applied, st.Term)
	appendOpTime(r, "durableOpTime", st.Applied, st.Term)
	r.AppendDateTime("lastAppliedWallTime", st.AppliedAt.UnixMilli())
	r.AppendDateTime("lastDurableWallTime", st.AppliedAt.UnixMilli())
	r.End()
	r.AppendTimestamp("lastStableRecoveryTimestamp", ns.Commit.T(), ns.Commit.I())
	appendInitialSyncStatus(c, n)
	r.StartArray("members")
	for i, m := range members {
		r.StartDocument(bson.Index(i))
		r.AppendInt32("_id", int32(m.Member.ID))
		r.AppendString("name", m.Member.Host)
		health := 0.0
		if m.Health {
			health = 1
		}
		r.AppendDouble("health", health)
		r.AppendInt32("state", int32(m.State))
		r.AppendString("stateStr", m.State.String())
		if m.Self {
			r.AppendInt32("uptime", int32(c.Env.Repl.Uptime()/time.Second))
		}
		appendOpTime(r, "optime", m.OpTime, st.Term)
		r.AppendDateTime("optimeDate", m.OpTime.Time().UnixMilli())
		if !m.Self {
			r.AppendDateTime("lastHeartbeat", m.LastHeartbeat.UnixMilli())
			r.AppendInt64("pingMs", m.Ping.Milliseconds())
		}
		r.AppendString("syncSourceHost", m.SyncSource)
		r.AppendInt32("syncSourceId", -1)
		r.AppendString("infoMessage", "")
		if m.State == repl.StatePrimary && m.Self {
			r.AppendTimestamp("electionTime", st.ElectionTS.T(), st.ElectionTS.I())
			r.AppendDateTime("electionDate", st.ElectionTS.Time().UnixMilli())
		}
		r.AppendInt64("configVersion", cfg.Version)
		r.AppendInt64("configTerm", cfg.Term)
		if m.Self {
			r.AppendBool("self", true)
		}
		r.AppendString("lastHeartbeatMessage", "")
		r.End()
	}
	r.End()
	return nil
}
