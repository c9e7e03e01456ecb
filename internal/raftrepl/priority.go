package raftrepl

// Priorities.
//
// Raft has none: any voter may win an election. Cairn gives the
// configuration's priorities their mongod meaning in two ways. A voter of
// priority 0 never becomes primary: its own vote requests (pre-votes and
// votes) are dropped before they leave (Node.unfrozen), so its campaigns
// never gather a vote, while it still votes for others and follows the
// leader; it is a voter, not a Raft learner, since it counts in the
// majority. And a leader that sees a voter of higher priority than its own
// caught up (its log matching the leader's last index) and reachable hands
// it the leadership (Raft's leadership transfer), checked every
// priorityCheck, as mongod's priority takeover: the highest-priority
// electable member ends up primary. The transfer is not tried again while
// one runs (Raft abandons one after an election timeout).

import (
	"context"
	"time"

	"github.com/cairndb/cairn/internal/repl"
)

// priorityCheck is how often a leader looks for a member of higher
// priority to hand the leadership to.
const priorityCheck = time.Second

// electableLocked reports whether the member may become primary: its
// priority is above 0 (n.mu held).
func (n *Node) electableLocked() bool {
	if m, ok := memberOf(n.cfg, n.id); ok {
		return m.Priority > 0
	}
	return true
}

func memberOf(cfg *repl.Config, id uint64) (repl.Member, bool) {
	if cfg != nil {
		for _, m := range cfg.Members {
			if RaftID(m) == id {
				return m, true
			}
		}
	}
	return repl.Member{}, false
}

// priorityTakeover, run after each Ready, transfers the leadership to the
// caught-up voter of the highest priority above this member's.
func (n *Node) priorityTakeover() {
	n.mu.Lock()
	primary, cfg := n.primary, n.cfg
	n.mu.Unlock()
	n.snap.mu.Lock()
	due := primary && time.Since(n.snap.priorityCheck) > priorityCheck
	if due {
		n.snap.priorityCheck = time.Now()
	}
	n.snap.mu.Unlock()
	if !due {
		return
	}
	me, ok := memberOf(cfg, n.id)
	if !ok {
		return
	}
	rs := n.node.Status()
	if rs.LeadTransferee != 0 {
		return // a transfer runs
	}
	last, err := n.mem.LastIndex()
	if err != nil {
		return
	}
	var best repl.Member
	var to uint64
	for _, m := range cfg.Members {
		id := RaftID(m)
		if id == n.id || m.Priority <= me.Priority || (to != 0 && m.Priority <= best.Priority) {
			continue
		}
		if _, voter := rs.Config.Voters.IDs()[id]; !voter {
			continue
		}
		pr, ok := rs.Progress[id]
		if !ok || pr.Match < last {
			continue
		}
		if info, ok := n.tr.info(id); !ok || !info.up {
			continue
		}
		best, to = m, id
	}
	if to == 0 {
		return
	}
	n.opts.Log.Info("Handing the primary to a caught-up member of higher priority (priority takeover)", "c", "REPL",
		"to", best.Host, "priority", best.Priority, "myPriority", me.Priority)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	n.node.TransferLeadership(ctx, n.id, to)
}

// electableID reports whether the member with Raft id id may become
// primary (priority above 0).
func (n *Node) electableID(id uint64) bool {
	m, ok := memberOf(n.Config(), id)
	return !ok || m.Priority > 0
}
