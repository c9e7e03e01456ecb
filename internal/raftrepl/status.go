package raftrepl

import (
	"time"

	"github.com/cairndb/cairn/internal/repl"
	pb "go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
)

// MemberStatus is what this member knows of one member of the set
// (replSetGetStatus' members).
type MemberStatus struct {
	Member repl.Member
	Self   bool
	State  repl.State
	// Health is false when the member is unreachable from this one.
	Health bool
	// OpTime is the last ts the member is known to hold: this member's
	// own applied optime; on the primary, the last ts of the entries a
	// peer has matched; elsewhere the majority commit point for a
	// reachable peer (0: unknown).
	OpTime        repl.Timestamp
	LastHeartbeat time.Time
	Ping          time.Duration
	// SyncSource is the host the member receives the log from (the
	// primary's, for a secondary).
	SyncSource string
	Learner    bool
}

// Members reports every member of the configuration.
func (n *Node) Members(applied repl.Timestamp) []MemberStatus {
	st := n.Status()
	rs := n.node.Status()
	cfg := n.Config()
	leadHost := ""
	for _, m := range cfg.Members {
		if RaftID(m) == st.Lead {
			leadHost = m.Host
		}
	}
	var out []MemberStatus
	for _, m := range cfg.Members {
		id := RaftID(m)
		ms := MemberStatus{Member: m, Self: id == n.id, State: repl.StateSecondary}
		_, ms.Learner = rs.Config.Learners[id]
		if id == st.Lead && st.Lead != 0 {
			ms.State = repl.StatePrimary
		} else if leadHost != "" {
			ms.SyncSource = leadHost
		}
		if !ms.Self && rs.Progress != nil {
			if pr, ok := rs.Progress[id]; ok && pr.State == tracker.StateSnapshot {
				ms.State = repl.StateStartup2 // fetching a snapshot
			}
		}
		if ms.Self {
			ms.Health, ms.OpTime = true, applied
			if n.syncing() {
				ms.State = repl.StateStartup2
			}
			if ms.State == repl.StatePrimary && !st.Primary {
				ms.State = repl.StateSecondary // elected, not yet caught up
			}
		} else if p, ok := st.PeerInfo[id]; ok {
			ms.Health, ms.LastHeartbeat, ms.Ping = p.Up, p.LastHeartbeat, p.Ping
			if !p.Up {
				ms.State = repl.StateDown
			}
			if match, ok := st.Progress[id]; ok {
				ms.OpTime = n.tsAt(match)
			} else if p.Up {
				ms.OpTime = st.Commit
			}
		}
		out = append(out, ms)
	}
	return out
}

// tsAt returns the last oplog ts carried by the log up to index (0: none
// in the last entries before it).
func (n *Node) tsAt(index uint64) repl.Timestamp {
	first, _ := n.mem.FirstIndex()
	for i, tries := index, 0; i >= first && i > 0 && tries < 64; i, tries = i-1, tries+1 {
		ents, err := n.mem.Entries(i, i+1, 1<<30)
		if err != nil || len(ents) == 0 {
			return 0
		}
		if e := ents[0]; e.GetType() == pb.EntryNormal && len(e.Data) > 0 && e.Data[0] == entryOps {
			return lastTS(e.Data)
		}
	}
	return 0
}
