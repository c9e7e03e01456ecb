package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/raftrepl"
)

// appendReplStatus appends serverStatus' repl section on a member of a
// replica set: hello's replica set fields, as mongod's, and on a set of
// several members Cairn's raft section: the term, the leader changes this
// member saw, the leader's commit latency and each member's replication
// lag as this member knows it (raftrepl.Metrics).
func appendReplStatus(c *Ctx) {
	if c.Env.Repl == nil {
		return
	}
	r := c.Reply
	r.StartDocument("repl")
	appendReplFields(c, r, "isWritablePrimary")
	if n := c.Env.Raft(); n != nil {
		applied, _ := c.Env.Repl.Applied()
		appendRaftMetrics(r, n.Metrics(applied))
	}
	r.End()
}

func appendRaftMetrics(r *bson.Builder, m raftrepl.Metrics) {
	r.StartDocument("raft")
	r.AppendInt64("term", int64(m.Term))
	r.AppendInt64("leaderChanges", int64(m.LeaderChanges))
	r.StartDocument("commitLatency")
	r.AppendInt64("count", int64(m.Commits))
	r.AppendInt64("totalMicros", m.CommitTotal.Microseconds())
	r.StartArray("buckets")
	for i, n := range m.CommitCounts {
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
	for i, ml := range m.Members {
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
