package raftrepl

// The Ready loop: one goroutine (Node.run) drives the member's Raft node.
// It ticks Raft's logical clock and handles each Ready in this order:
//
//  1. install a snapshot Raft delivers (initial sync, snaprecv.go);
//  2. on the leader, send the appends at once, before its own log write
//     (Raft thesis §10.2.1, as etcd's server does): the followers' log
//     writes overlap the leader's, and the leader counts itself toward a
//     majority only at Advance, after its write;
//  3. write the new entries and the hard state in one kv transaction
//     committed with kv.Sync when Raft must sync (new entries, term or
//     vote; Lazy when only the commit index moved) (save, storage.go: one
//     fdatasync per Ready, shared with the writers committing at that
//     moment), then append them to the MemoryStorage Raft reads; a
//     follower whose committed entries are document changes applies them
//     in the same transaction (follow.go) and notes them at step 6;
//  4. take the soft state (leader, term); a member that accepted writes
//     and no longer leads that term rolls back what the set did not
//     commit before it applies anything of a later term (rollback.go);
//  5. on a follower or candidate, send the messages now: an append's
//     acknowledgement or a vote must not leave before the state it
//     vouches for is durable;
//  6. apply the committed entries in log order (apply.go) and answer the
//     ReadIndex requests Raft confirmed (reads.go);
//  7. publish the member's state to the Set (PRIMARY once it applied its
//     term's first entry), prune the rollback records, Advance, and then
//     make snapshots, promote learners and compact the log (compact.go).
//
// Applying inside the loop keeps one simple invariant the rest of the
// package leans on: when a Ready is handled, everything Raft committed in
// it is applied, so the applied index, the commit point and the member's
// state move together, and a configuration change is applied before Raft
// is told (Advance) — a second one is refused while one is pending.

import (
	"context"
	"time"

	"github.com/cairndb/cairn/internal/repl"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// run is the Ready loop: tick, persist, send, apply, advance.
func (n *Node) run() {
	defer n.wg.Done()
	ticker := time.NewTicker(n.opts.Tick)
	defer ticker.Stop()
	for {
		select {
		case <-n.stopc:
			return
		case <-ticker.C:
			n.node.Tick()
		case rd := <-n.node.Ready():
			if err := n.handle(rd); err != nil {
				n.opts.Log.Error("Replication stopped: cannot persist or apply the raft log", "c", "REPL", "error", err.Error())
				return
			}
			n.node.Advance()
			n.mu.Lock()
			n.advanced = n.applied
			n.mu.Unlock()
			if err := n.afterReady(); err != nil {
				n.opts.Log.Error("Replication stopped: cannot compact the raft log", "c", "REPL", "error", err.Error())
				return
			}
		}
	}
}

func (n *Node) handle(rd raft.Ready) error {
	ctx := context.Background()
	if !raft.IsEmptySnap(rd.Snapshot) {
		if err := n.installSnapshot(ctx, rd.Snapshot); err != nil {
			return err
		}
	}
	// The leader sends its appends before it writes them to its own log
	// (Raft thesis §10.2.1, as etcd's server does): the followers' log
	// writes overlap the leader's, and an entry still commits only once a
	// majority, the leader counted at Advance after its write, holds it.
	// Its term and vote were written before it campaigned. Followers and
	// candidates send after the write (a vote or an append's ack must not
	// precede the state it vouches for).
	early := raft.IsEmptySnap(rd.Snapshot) && n.leaderAfter(rd)
	if early {
		n.tr.send(n.unfrozen(rd.Messages))
	}
	// A follower persists and applies in one transaction when it can
	// (follow.go).
	var fusedNotes []fusedOps
	fused := false
	if len(rd.Entries) > 0 || (rd.HardState != nil && !raft.IsEmptyHardState(rd.HardState)) {
		var err error
		if fused = n.fusable(rd, early); fused {
			fusedNotes, err = n.saveAndApply(ctx, rd)
		} else {
			err = save(ctx, n.opts.DB, rd.HardState, rd.Entries, rd.MustSync)
		}
		if err != nil {
			return err
		}
		if err := n.mem.Append(rd.Entries); err != nil {
			return err
		}
		if rd.HardState != nil && !raft.IsEmptyHardState(rd.HardState) {
			if err := n.mem.SetHardState(rd.HardState); err != nil {
				return err
			}
		}
	}
	n.mu.Lock()
	if rd.HardState != nil && rd.HardState.GetTerm() > 0 {
		n.term = rd.HardState.GetTerm()
	}
	wasLeader := n.leader
	if rd.SoftState != nil {
		n.lead = rd.SoftState.Lead
		n.leader = rd.SoftState.RaftState == raft.StateLeader
	}
	if n.leader && (!wasLeader || n.term != n.leaderTerm) {
		last, _ := n.mem.LastIndex()
		n.termFrom, n.leaderTerm = last, n.term
		n.proposed = nil
		n.confPending = last // Raft's pendingConfIndex at becoming leader
	}
	if n.leader {
		for _, e := range rd.Entries {
			if e.GetType() == pb.EntryConfChange || e.GetType() == pb.EntryConfChangeV2 {
				n.confPending = max(n.confPending, e.GetIndex())
			}
		}
	}
	// A member that accepted writes and is no longer the leader of that
	// term takes back what the set did not commit before it applies
	// anything of a later term (rollback.go).
	lost := n.writable && (!n.leader || n.term != n.writableTerm)
	lead, leader := n.lead, n.leader
	n.mu.Unlock()
	n.met.noteLead(lead)
	n.met.appended(leader, rd.Entries)
	if lost {
		if err := n.rollBackUncommitted(ctx); err != nil {
			return err
		}
	}
	if n.isLeader() {
		n.noteProposed(rd.Entries)
	}
	if !early {
		n.tr.send(n.unfrozen(rd.Messages))
	}
	if fused {
		n.noteFused(rd.CommittedEntries, fusedNotes)
	} else if err := n.apply(ctx, rd.CommittedEntries); err != nil {
		return err
	}
	n.met.committed(rd.CommittedEntries)
	for _, rs := range rd.ReadStates {
		n.mu.Lock()
		if ch, ok := n.reads[string(rs.RequestCtx)]; ok {
			ch <- rs.Index
			delete(n.reads, string(rs.RequestCtx))
		}
		n.mu.Unlock()
	}
	n.publish()
	return n.prune(ctx)
}

// leaderAfter reports whether the member leads once rd is handled: rd's
// soft state when it has one, else the state it had.
func (n *Node) leaderAfter(rd raft.Ready) bool {
	if rd.SoftState != nil {
		return rd.SoftState.RaftState == raft.StateLeader
	}
	return n.isLeader()
}

// unfrozen drops the member's own vote requests while it is frozen or has
// priority 0 (priority.go): its campaigns fail, and it still votes for
// others and follows a leader.
func (n *Node) unfrozen(msgs []*pb.Message) []*pb.Message {
	n.mu.Lock()
	frozen := time.Now().Before(n.frozenUntil) || !n.electableLocked()
	n.mu.Unlock()
	if !frozen {
		return msgs
	}
	out := msgs[:0:0]
	for _, m := range msgs {
		if t := m.GetType(); t == pb.MsgPreVote || t == pb.MsgVote {
			continue
		}
		out = append(out, m)
	}
	return out
}

// Freeze keeps the member from running for election until until (a zero
// time unfreezes).
func (n *Node) Freeze(until time.Time) {
	n.mu.Lock()
	n.frozenUntil = until
	n.mu.Unlock()
}

// Frozen returns when the member's freeze ends (zero or past: none).
func (n *Node) Frozen() time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.frozenUntil
}

func (n *Node) isLeader() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.leader
}

// noteProposed records the last ts of the leader's new entries (w: N).
func (n *Node) noteProposed(ents []*pb.Entry) {
	for _, e := range ents {
		if e.GetType() != pb.EntryNormal || len(e.Data) == 0 || e.Data[0] != entryOps {
			continue
		}
		if ts := lastTS(e.Data); ts > 0 {
			n.mu.Lock()
			n.proposed = append(n.proposed, indexTS{e.GetIndex(), ts})
			n.mu.Unlock()
		}
	}
}

// publish tells the Set what the consensus decided.
func (n *Node) publish() {
	n.mu.Lock()
	wasPrimary := n.primary
	n.primary = n.leader && n.applied >= n.termFrom
	state := repl.StateSecondary
	if n.primary {
		state = repl.StatePrimary
	} else if n.syncing() {
		state = repl.StateStartup2
	}
	term, lead, cfg := int64(n.term), n.lead, n.cfg
	if n.primary != wasPrimary {
		close(n.commitCh) // waiting writers re-check their primary
		n.commitCh = make(chan struct{})
	}
	if n.primary && !n.writable {
		n.writable, n.writableTerm = true, n.term
		n.opts.Oplog.Fence(false)
	}
	commit := n.commitTS
	n.mu.Unlock()
	host := ""
	for _, m := range cfg.Members {
		if RaftID(m) == lead {
			host = m.Host
		}
	}
	if state == repl.StatePrimary && !wasPrimary {
		n.opts.Log.Info("Transition to PRIMARY complete; database writes are now permitted", "c", "REPL", "id", 21331, "term", term)
	} else if wasPrimary && state != repl.StatePrimary {
		n.opts.Log.Info("Transition to SECONDARY: lost the Raft leadership", "c", "REPL", "term", term, "leader", host)
	}
	n.opts.Set.Become(state, term, host, commit)
}
