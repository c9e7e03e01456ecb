package command

import (
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/repl"
)

// replSetGetStatus reports the one member as mongod's prepareStatusResponse
// does, field for field. The member's applied, durable and majority
// committed optimes are one: a write is acknowledged once committed, and
// the majority of one is the member itself.
func replSetGetStatus(c *Ctx) error {
	if err := newArgs(c).check("initialSync"); err != nil {
		return err
	}
	st, err := replEnabled(c)
	if err != nil {
		return err
	}
	cfg := st.Config
	if cfg.Multi() && c.Env.Raft() != nil {
		return replSetGetStatusMulti(c, st)
	}
	m := cfg.Members[0]
	now := time.Now()
	r := c.Reply
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
		r.AppendDouble("priorityAtElection", m.Priority)
		r.AppendInt64("electionTimeoutMillis", cfg.Settings.ElectionTimeoutMillis)
		r.AppendDateTime("newTermStartDate", ed)
		r.AppendDateTime("wMajorityWriteAvailabilityDate", ed)
		r.End()
	}
	r.StartArray("members")
	r.StartDocument("0")
	r.AppendInt32("_id", int32(m.ID))
	r.AppendString("name", m.Host)
	r.AppendDouble("health", 1)
	r.AppendInt32("state", int32(st.State))
	r.AppendString("stateStr", st.State.String())
	r.AppendInt32("uptime", int32(c.Env.Repl.Uptime()/time.Second))
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
	return nil
}

// appendOpTime appends {ts, t}.
func appendOpTime(r *bson.Builder, key string, ts repl.Timestamp, term int64) {
	r.StartDocument(key)
	r.AppendTimestamp("ts", ts.T(), ts.I())
	r.AppendInt64("t", term)
	r.End()
}
