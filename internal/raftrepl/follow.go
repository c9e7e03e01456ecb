package raftrepl

// A follower's Ready in one kv transaction.
//
// A secondary's Ready usually carries new entries (or a moved commit
// index) to persist and the entries just committed to apply. Written
// apart, that is two kv commits per Ready, each cloning the _raft tree's
// pages it touches and writing its own journal record. When every
// committed entry is document changes (no DDL, which runs through the
// command layer in transactions of its own, and no configuration change),
// and the member neither leads nor took writes it may have to roll back,
// the Ready's log entries, hard state, applied data and applied index go
// in one transaction instead, committed with kv.Sync when Raft must sync
// (MustSync) and Lazy otherwise. The order Raft asks for holds: the
// entries are durable no later than the data applied from them (one
// atomic commit), and the Ready's messages (the append's acknowledgement)
// still leave only after that commit. What applying changed becomes
// visible to the rest of the node (applied index, commit point, waits)
// only after the commit, as in the unfused path (noteFused).

import (
	"context"
	"fmt"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/kv"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// fusedOps is what applying one entryOps log entry in the fused
// transaction leaves to note once it committed.
type fusedOps struct {
	index uint64
	last  bson.Doc
	wrote bool
}

// fusable reports whether rd's persistence and apply can share one
// transaction (see the top of the file). early: the member leads after rd.
func (n *Node) fusable(rd raft.Ready, early bool) bool {
	if early || !raft.IsEmptySnap(rd.Snapshot) || len(rd.CommittedEntries) == 0 {
		return false
	}
	n.mu.Lock()
	writable := n.writable
	n.mu.Unlock()
	if writable {
		return false // it may have to roll back before it applies (ready.go)
	}
	for _, e := range rd.CommittedEntries {
		if e.GetType() != pb.EntryNormal {
			return false
		}
		if len(e.Data) == 0 || e.Data[0] != entryOps {
			continue
		}
		ddl := false
		eachDoc(e.Data[1:], func(d bson.Doc) bool { ddl = isDDL(d); return !ddl })
		if ddl {
			return false
		}
	}
	return true
}

// saveAndApply persists rd's hard state and entries and applies its
// committed entries in one transaction; the caller notes the result
// (noteFused) once it sent nothing before the commit.
func (n *Node) saveAndApply(ctx context.Context, rd raft.Ready) ([]fusedOps, error) {
	tx, err := n.opts.DB.BeginWrite(ctx)
	if err != nil {
		return nil, fmt.Errorf("raftrepl: saving and applying the raft log: %w", err)
	}
	defer tx.Rollback()
	if err := saveIn(tx, rd.HardState, rd.Entries); err != nil {
		return nil, err
	}
	var notes []fusedOps
	wrote := false
	for _, e := range rd.CommittedEntries {
		if len(e.Data) == 0 || e.Data[0] != entryOps {
			continue
		}
		docs := splitDocs(e.Data[1:])
		if len(docs) == 0 {
			continue
		}
		w, err := n.writeDocs(tx, docs)
		if err != nil {
			return nil, fmt.Errorf("applying log entry %d: %w", e.GetIndex(), err)
		}
		wrote = wrote || w
		notes = append(notes, fusedOps{index: e.GetIndex(), last: docs[len(docs)-1], wrote: w})
	}
	if wrote {
		last := rd.CommittedEntries[len(rd.CommittedEntries)-1].GetIndex()
		if err := putApplied(tx, last); err != nil {
			return nil, fmt.Errorf("recording the applied index %d: %w", last, err)
		}
	}
	d := kv.Lazy
	if rd.MustSync {
		d = kv.Sync
	}
	if err := tx.CommitWith(d); err != nil {
		return nil, fmt.Errorf("raftrepl: saving and applying the raft log: %w", err)
	}
	return notes, nil
}

// noteFused publishes to the node what saveAndApply applied: the commit
// point of each entry, then the applied index, as apply does.
func (n *Node) noteFused(ents []*pb.Entry, notes []fusedOps) {
	for _, o := range notes {
		n.noteOps(o.index, o.last, o.wrote)
	}
	if len(ents) > 0 {
		n.mu.Lock()
		n.applied = ents[len(ents)-1].GetIndex()
		n.mu.Unlock()
	}
	n.appliedAll(ents)
}
