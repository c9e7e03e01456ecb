package raftrepl

// Log compaction.
//
// Every member keeps the raft log's tail behind its applied index and
// removes the rest: after each Ready, once the log holds more than
// SnapshotOptions.LogTail entries (or LogTailBytes) behind the applied
// index plus a quarter more, the head up to the tail is deleted from the
// _raft tree and from the MemoryStorage, and the compaction point (the
// last removed entry's index and term, and the commit point's ts there)
// is recorded in the same kv transaction, together with an applied index
// of at least that point (the member's data holds every entry it
// compacted: a follower applied them, the leader wrote them). The log
// never reaches back past an open snapshot source (snapshot.go): the
// member fetching it will need the entries after it.
//
// A member that needs entries the leader compacted receives a snapshot
// of the leader's data instead (snapshot.go), then the log from the
// snapshot's index. A group started by Start with bootstrap compacts its
// whole log once it leads (the "snapshot base"): the initiating member's
// data is the set's starting state, and every member added later receives
// it as a snapshot, not as a replay of an oplog that may be truncated.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// SnapshotOptions configure log compaction and snapshots. Zero fields take
// the documented defaults.
type SnapshotOptions struct {
	// LogTail is how many entries behind the applied index the raft log
	// keeps (default 10,000): a member that falls further behind gets a
	// snapshot.
	LogTail int
	// LogTailBytes bounds the tail's bytes as well (default 64 MiB).
	LogTailBytes int
	// ChunkBytes bounds one chunk of a snapshot on the wire (default 4 MiB;
	// at least one record).
	ChunkBytes int
	// SourceIdle is how long a leader keeps a snapshot nobody fetches
	// (default 30 s): then it reports the transfer failed and Raft sends a
	// new one.
	SourceIdle time.Duration
	// TempDir receives a snapshot being fetched ("" means os.TempDir()).
	TempDir string
}

func (o SnapshotOptions) withDefaults() SnapshotOptions {
	if o.LogTail <= 0 {
		o.LogTail = 10000
	}
	if o.LogTailBytes <= 0 {
		o.LogTailBytes = 64 << 20
	}
	if o.ChunkBytes <= 0 {
		o.ChunkBytes = 4 << 20
	}
	if o.SourceIdle <= 0 {
		o.SourceIdle = 30 * time.Second
	}
	return o
}

// snapState is a node's compaction, snapshot and initial-sync state. Its
// mutex is taken after Node.mu, never before.
type snapState struct {
	mu sync.Mutex
	// compacted is the log's compaction point; base: compact the whole
	// log once leading (a bootstrapped group).
	compacted uint64
	base      bool
	// synced: the member holds a copy of the set's data (it bootstrapped
	// the group, installed a snapshot or restarted with a log).
	synced bool
	// sources are the snapshots the member serves, newest last
	// (snapshot.go); want: raft asked for one, made after the next Ready.
	sources []*snapSource
	nextID  int64
	want    bool
	// fetch is the snapshot being fetched, staged the fetched ones by
	// index (snaprecv.go).
	fetch  *snapFetch
	staged map[uint64]string
	// promoting: a learner's promotion is proposed (members.go);
	// promoteCheck is when learners were last looked at.
	promoting    bool
	promoteCheck time.Time
	// priorityCheck is when the leader last looked for a member of
	// higher priority (priority.go).
	priorityCheck time.Time
	// tail: the sizes of the applied entries the log holds (the byte
	// bound of compaction), touched by the Ready loop only.
	tail tailSizes
	// counters (metrics) and the initial sync's progress.
	stats SnapshotStats
	sync  syncProgress
}

// SnapshotStats are a member's compaction and snapshot counters.
type SnapshotStats struct {
	Compactions      int64
	EntriesCompacted int64
	SnapshotsSent    int64 // sources made (a snapshot sent to one or more members)
	ChunksServed     int64
	BytesServed      int64
	SnapshotsFetched int64 // installed
	BytesFetched     int64
	FetchFailures    int64
}

// snapStart sets the node's snapshot state from the stored log at start.
func (n *Node) snapStart(st *stored, fresh bool) {
	n.opts.Snapshots = n.opts.Snapshots.withDefaults()
	n.snap.compacted = st.snapIndex()
	n.snap.base = fresh
	n.snap.synced = fresh || st.hasLog()
	n.snap.staged = map[uint64]string{}
	if !n.snap.synced {
		n.opts.Set.Become(repl.StateStartup2, 0, "", 0) // until the first snapshot is installed
	}
	if st.snapTS > 0 {
		n.commitTS = repl.Timestamp(st.snapTS) // the shipper starts there, not at the oplog's start
	}
	if fresh {
		// The initiating member's data is the set's starting state: its
		// oplog is not shipped again.
		_ = n.opts.DB.View(func(tx *kv.Tx) error {
			ts, _, ok, err := oplog.Last(tx)
			if ok {
				n.commitTS = ts
			}
			return err
		})
	}
}

// bootstrapLog writes, for a group that starts now, the log raft's
// bootstrap would make (the member's own addition as entry 1, committed),
// in term; it reports false when the member has a log already (a
// restart).
func bootstrapLog(db *kv.DB, id, term uint64) (bool, error) {
	st, err := load(db)
	if err != nil {
		return false, err
	}
	if st.hasLog() {
		return false, nil
	}
	term = max(term, 1)
	typ := pb.ConfChangeAddNode
	cc, err := proto.Marshal(&pb.ConfChange{Type: &typ, NodeId: &id})
	if err != nil {
		return false, err
	}
	one, et := uint64(1), pb.EntryConfChange
	ent := &pb.Entry{Term: &term, Index: &one, Type: &et, Data: cc}
	hs := &pb.HardState{Term: &term, Commit: &one}
	if err := save(context.Background(), db, hs, []*pb.Entry{ent}, true); err != nil {
		return false, err
	}
	err = db.Update(context.Background(), func(tx *kv.Tx) error {
		return putConf(tx, &pb.ConfState{Voters: []uint64{id}})
	})
	if err != nil {
		return false, fmt.Errorf("raftrepl: bootstrapping the raft log: %w", err)
	}
	return true, nil
}

// afterReady runs in the Ready loop after each Ready: it makes the
// snapshot raft asked for, ends an idle one and compacts the log.
func (n *Node) afterReady() error {
	n.serveSnapshots()
	n.promoteLearners()
	n.priorityTakeover()
	return n.maybeCompact()
}

// maybeCompact compacts the log when its tail is long enough.
func (n *Node) maybeCompact() error {
	n.mu.Lock()
	applied, leader := n.applied, n.primary
	n.mu.Unlock()
	first, err := n.mem.FirstIndex()
	if err != nil || applied < first {
		return nil
	}
	opts := n.opts.Snapshots
	n.snap.mu.Lock()
	base := n.snap.base && leader
	limit := applied
	for _, src := range n.snap.sources {
		limit = min(limit, src.index)
	}
	n.snap.mu.Unlock()
	var to uint64
	switch {
	case base:
		to = limit
	case applied-first+1 > uint64(opts.LogTail+opts.LogTail/4):
		to = applied - uint64(opts.LogTail)
	default:
		// The byte bound, on the sizes tracked as entries are applied.
		if err := n.snap.tail.track(n.mem, first, applied); err != nil {
			return nil
		}
		to = n.snap.tail.cut(opts.LogTailBytes)
	}
	to = min(to, limit)
	if to < first {
		if base && to > 0 {
			n.snap.mu.Lock()
			n.snap.base = false
			n.snap.mu.Unlock()
		}
		return nil
	}
	term, err := n.mem.Term(to)
	if err != nil {
		return nil
	}
	if err := n.compactTo(to, term); err != nil {
		return err
	}
	n.snap.mu.Lock()
	n.snap.base = false
	n.snap.compacted = to
	n.snap.tail.drop(to + 1)
	n.snap.stats.Compactions++
	n.snap.stats.EntriesCompacted += int64(to - first + 1)
	n.snap.mu.Unlock()
	n.opts.Log.Debug("Compacted the raft log", "c", "REPL", "through", to, "entries", to-first+1)
	return nil
}

// compactTo removes the log's entries up to index (of term), durably,
// then from the MemoryStorage. The compaction point records the current
// commit point's ts: every entry up to it is committed, so a restarted
// primary ships its oplog from there (the entries it re-ships past it
// are skipped by the members holding them).
func (n *Node) compactTo(index, term uint64) error {
	ctx := context.Background()
	tx, err := n.opts.DB.BeginWrite(ctx)
	if err != nil {
		return fmt.Errorf("raftrepl: compacting the raft log: %w", err)
	}
	defer tx.Rollback()
	t, err := tx.CreateTreeIfNotExists(raftTree)
	if err != nil {
		return err
	}
	if _, err := t.DeleteRange(entryKey(0), entryKey(index+1)); err != nil {
		return fmt.Errorf("raftrepl: compacting the raft log: %w", err)
	}
	n.mu.Lock()
	cts := uint64(n.commitTS)
	n.mu.Unlock()
	if err := putSnapMeta(t, index, term, cts); err != nil {
		return err
	}
	if a, err := storedApplied(t); err != nil {
		return err
	} else if a < index {
		if err := putApplied(tx, index); err != nil {
			return err
		}
	}
	if err := tx.CommitWith(kv.Sync); err != nil {
		return fmt.Errorf("raftrepl: compacting the raft log: %w", err)
	}
	if err := n.mem.Compact(index); err != nil {
		return fmt.Errorf("raftrepl: compacting the raft log: %w", err)
	}
	return nil
}

// SnapshotStats returns the node's compaction and snapshot counters.
func (n *Node) SnapshotStats() SnapshotStats {
	n.snap.mu.Lock()
	defer n.snap.mu.Unlock()
	return n.snap.stats
}

// entryOverhead approximates what an entry costs beyond its payload (its
// index, term and type, and its key in the _raft tree).
const entryOverhead = 24

// tailSizes tracks the sizes of the log's applied entries, from index
// from on: an applied entry is committed and never changes, so each is
// sized once, when it is first seen applied, rather than the whole tail at
// every Ready (which cost most of a member's CPU under a write load).
type tailSizes struct {
	from  uint64 // index of sizes[0]
	sizes []int
	total int
}

// track makes the sizes cover exactly the log's applied part [first,
// applied], sizing the entries applied since the last call.
func (t *tailSizes) track(mem *raft.MemoryStorage, first, applied uint64) error {
	if end := t.from + uint64(len(t.sizes)); t.from == 0 || first < t.from || first > end || applied+1 < end {
		// Not loaded yet, or the log changed under it (a snapshot
		// installed): start over.
		t.from, t.sizes, t.total = first, t.sizes[:0], 0
	}
	t.drop(first)
	end := t.from + uint64(len(t.sizes))
	if end > applied {
		return nil
	}
	ents, err := mem.Entries(end, applied+1, ^uint64(0))
	if err != nil {
		return err
	}
	for _, e := range ents {
		sz := len(e.GetData()) + entryOverhead
		t.sizes = append(t.sizes, sz)
		t.total += sz
	}
	return nil
}

// drop forgets the entries before index from (compacted).
func (t *tailSizes) drop(from uint64) {
	if from <= t.from {
		return
	}
	k := int(min(from-t.from, uint64(len(t.sizes))))
	for _, sz := range t.sizes[:k] {
		t.total -= sz
	}
	t.sizes = append(t.sizes[:0], t.sizes[k:]...)
	t.from = from
}

// cut returns the last index to compact so that keep bytes of applied
// entries remain, once the tracked tail exceeds keep plus a quarter (0:
// nothing to compact).
func (t *tailSizes) cut(keep int) uint64 {
	if t.total <= keep+keep/4 || len(t.sizes) == 0 {
		return 0
	}
	kept := 0
	j := len(t.sizes) - 1
	for ; j > 0 && kept+t.sizes[j] <= keep; j-- {
		kept += t.sizes[j]
	}
	return t.from + uint64(j)
}
