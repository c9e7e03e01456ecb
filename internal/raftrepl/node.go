package raftrepl

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// Options configure a Node. Zero fields take the documented defaults.
type Options struct {
	// Set is the member's replica-set state (required).
	Set *repl.Set
	// DB is the member's store (required): the raft log lives in it and
	// entries are applied to it.
	DB *kv.DB
	// Oplog is the member's oplog (required).
	Oplog *oplog.Log
	// Log receives the replication log lines (required).
	Log *slog.Logger
	// ApplyCommand runs the command o of a DDL entry (op "c") on database
	// db, as a member that is not primary applies it (required).
	ApplyCommand func(ctx context.Context, db string, o bson.Doc) error
	// StoreConfig stores a configuration the set committed where the
	// member reads it at start (local.system.replset); required.
	StoreConfig func(cfg *repl.Config) error
	// OnRollback takes back, in the rollback's transaction tx, what the
	// member recorded of entry's session (a retryable write's statement,
	// a transaction's commit); nil: nothing (rollback.go).
	OnRollback func(tx *kv.Tx, entry bson.Doc) error
	// Tick is Raft's logical clock period (default 50ms); the heartbeat
	// is two ticks and the election timeout is the configuration's
	// settings.electionTimeoutMillis in ticks.
	Tick time.Duration
	// MemberKey is the key members authenticate to each other with
	// (--keyFile; "": none).
	MemberKey string
	// MemberTLS is the TLS configuration of the connections to the other
	// members (nil: plain).
	MemberTLS *tls.Config
	// BootstrapTerm is the term a group started by Start with bootstrap
	// begins in (default 1): a one-member set that grows into several
	// keeps its terms growing, as drivers expect of electionId.
	BootstrapTerm uint64
	// Log compaction, snapshots and initial sync (compact.go,
	// snapshot.go): their documented defaults apply to zero fields.
	Snapshots SnapshotOptions
	// Restored, if set, runs after the member installed a snapshot of
	// another member's data, so that the layers above drop what they
	// derived from the data it replaced.
	Restored func()
}

// RaftID is a member's Raft id: its _id plus one (Raft's ids are non-zero).
func RaftID(m repl.Member) uint64 { return uint64(m.ID) + 1 }

// Node is a member's Raft node.
type Node struct {
	opts Options
	id   uint64
	node raft.Node
	mem  *raft.MemoryStorage
	tr   *transport

	mu       sync.Mutex
	cfg      *repl.Config
	lead     uint64
	term     uint64
	leader   bool   // Raft leader
	primary  bool   // applied its term's first entry: accepts writes
	termFrom uint64 // index of the leader's first entry of its term
	// leaderTerm is the term the member last became leader in.
	leaderTerm uint64
	applied    uint64
	// advanced is applied once Raft was told (Advance): a configuration
	// change proposed before would be refused as a second pending one.
	advanced uint64
	// confPending is the leader's last configuration entry (or its
	// term's first index, as Raft counts it): a configuration change is
	// pending while it is beyond advanced (confChange).
	confPending uint64
	// commitTS is the majority commit point: the last ts of the
	// entries applied from the committed log; raftTS the same (kept
	// apart for clarity of the shipper's start).
	commitTS   repl.Timestamp
	commitWall time.Time
	commitCh   chan struct{}
	// proposed maps the leader's log index to the last ts it carries
	// (w: N); pruned as the commit point passes them.
	proposed []indexTS
	// reads are pending ReadIndex requests by context.
	reads map[string]chan uint64
	seq   uint64
	// frozenUntil: the member does not run for election before
	// (replSetFreeze, replSetStepDown): its vote requests are dropped.
	frozenUntil time.Time
	// Rollback (rollback.go): writable is set while the member accepts
	// writes, in writableTerm; epoch counts rollbacks (odd: one is under
	// way) and marks record the last ones; prunedTS is the commit point
	// up to which the undo records are dropped.
	writable         bool
	writableTerm     uint64
	epoch            uint64
	marks            []rollbackMark
	rollbackFailures int
	prunedTS         repl.Timestamp
	prunedAt         time.Time

	// snap is the state of compaction, snapshots and initial sync
	// (compact.go, snapshot.go, snaprecv.go).
	snap snapState
	// met holds the replication figures (metrics.go).
	met metrics

	stopc chan struct{}
	wg    sync.WaitGroup
}

type indexTS struct {
	index uint64
	ts    repl.Timestamp
}

var (
	errBadMessages = errors.New("raftrepl: malformed _raftMessages")
	// ErrStopped is returned by waits on a stopped node.
	ErrStopped = errors.New("raftrepl: the node is stopped")
)

// Start starts the member's Raft node for configuration cfg. bootstrap:
// the member initiates the set (a one-voter group of itself, which adds
// the other members one at a time); otherwise the member restarts from
// its stored log or, with none, waits for the leader to send it the log
// (a member being added).
func Start(opts Options, cfg *repl.Config, bootstrap bool) (*Node, error) {
	if opts.Tick <= 0 {
		opts.Tick = 50 * time.Millisecond
	}
	me := opts.Set.Me()
	var id uint64
	for _, m := range cfg.Members {
		if m.Host == me {
			id = RaftID(m)
		}
	}
	if id == 0 {
		return nil, fmt.Errorf("raftrepl: %s is not a member of the configuration", me)
	}
	fresh := false
	if bootstrap {
		var err error
		if fresh, err = bootstrapLog(opts.DB, id, opts.BootstrapTerm); err != nil {
			return nil, err
		}
	}
	st, err := load(opts.DB)
	if err != nil {
		return nil, err
	}
	mem, err := st.memory()
	if err != nil {
		return nil, err
	}
	n := &Node{opts: opts, id: id, mem: mem, cfg: cfg, commitCh: make(chan struct{}),
		reads: map[string]chan uint64{}, stopc: make(chan struct{}), applied: st.applied}
	// Writes taken locally before the set commits them are rolled back
	// when it does not (rollback.go): the records first, then what a
	// previous run left.
	opts.Oplog.SetUndo(true)
	if err := n.rollBackAtStart(context.Background()); err != nil {
		return nil, err
	}
	n.snapStart(st, fresh)
	n.tr = newTransport(cfg.Name, id, n.memberAuth(), opts.Log, func(to uint64) { n.node.ReportUnreachable(to) })
	n.tr.setPeers(hostsOf(cfg))
	election := int(time.Duration(electionMillis(cfg)) * time.Millisecond / opts.Tick)
	rc := &raft.Config{
		ID:                        id,
		ElectionTick:              max(election, 4),
		HeartbeatTick:             2,
		Storage:                   &logStorage{MemoryStorage: mem, n: n, conf: st.conf},
		Applied:                   st.applied,
		MaxSizePerMsg:             1 << 20,
		MaxInflightMsgs:           256,
		CheckQuorum:               true,
		PreVote:                   true,
		ReadOnlyOption:            raft.ReadOnlySafe,
		DisableProposalForwarding: true,
		StepDownOnRemoval:         true,
		Logger:                    &raftLogger{opts.Log},
	}
	// A member that joins starts with no log: the leader sends it a
	// snapshot, then the log.
	n.node = raft.RestartNode(rc)
	// Collections created by applying the primary's create entries take
	// its UUIDs.
	catalog.SetUUIDSource(opts.DB, opts.Oplog.ReplayedUUID)
	n.wg.Add(2)
	go n.run()
	go n.ship()
	if fresh {
		// A one-voter group: the member wins its election at once.
		go func() { _ = n.node.Campaign(context.Background()) }()
	}
	return n, nil
}

// electionMillis is the configuration's election timeout: its
// settings.electionTimeoutMillis.
func electionMillis(cfg *repl.Config) int64 {
	if ms := cfg.Settings.ElectionTimeoutMillis; ms > 0 {
		return ms
	}
	return repl.DefaultElectionTimeoutMillis
}

func hostsOf(cfg *repl.Config) map[uint64]string {
	out := map[uint64]string{}
	for _, m := range cfg.Members {
		out[RaftID(m)] = m.Host
	}
	return out
}

// Stop stops the node (server shutdown).
func (n *Node) Stop() {
	select {
	case <-n.stopc:
		return
	default:
	}
	close(n.stopc)
	n.node.Stop()
	n.wg.Wait()
	catalog.SetUUIDSource(n.opts.DB, nil)
	n.tr.stop()
	n.mu.Lock()
	close(n.commitCh)
	n.commitCh = make(chan struct{})
	n.mu.Unlock()
}

// Receive steps messages a peer sent (the _raftMessages command).
func (n *Node) Receive(ctx context.Context, msgs []*pb.Message) error {
	for _, m := range msgs {
		if m.GetTo() != n.id {
			continue
		}
		if m.GetType() == pb.MsgSnap {
			n.receiveSnapshot(m) // stepped once its data is here
			continue
		}
		if err := n.node.Step(ctx, m); err != nil && !errors.Is(err, raft.ErrStopped) {
			return err
		}
	}
	return nil
}

// Status is the node's view of the set, for hello and replSetGetStatus.
type Status struct {
	ID, Lead    uint64
	Term        uint64
	Primary     bool
	Commit      repl.Timestamp
	CommitWall  time.Time
	Applied     uint64
	Progress    map[uint64]uint64 // leader only: each member's matched index
	PeerInfo    map[uint64]PeerStatus
	LeaderIndex uint64
}

// PeerStatus is what the member knows of a peer's health.
type PeerStatus struct {
	LastHeartbeat time.Time
	Ping          time.Duration
	Up            bool
}

// Status returns the node's state.
func (n *Node) Status() Status {
	rs := n.node.Status()
	n.mu.Lock()
	st := Status{ID: n.id, Lead: n.lead, Term: n.term, Primary: n.primary, Commit: n.commitTS,
		CommitWall: n.commitWall, Applied: n.applied, PeerInfo: map[uint64]PeerStatus{}}
	cfg := n.cfg
	n.mu.Unlock()
	if rs.Progress != nil {
		st.Progress = map[uint64]uint64{}
		for id, p := range rs.Progress {
			st.Progress[id] = p.Match
		}
	}
	for _, m := range cfg.Members {
		if info, ok := n.tr.info(RaftID(m)); ok {
			st.PeerInfo[RaftID(m)] = PeerStatus{LastHeartbeat: info.lastOK, Ping: info.rtt, Up: info.up}
		}
	}
	return st
}

// Config is the configuration the node runs.
func (n *Node) Config() *repl.Config {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cfg
}

// CommitPoint returns the majority commit point (every entry at or
// before it is committed by a majority and applied here, so never rolled
// back) and a channel closed when it may have advanced (also on other
// changes of the node's state: a spurious wake-up at worst). Change
// streams deliver events up to it.
func (n *Node) CommitPoint() (repl.Timestamp, <-chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.commitTS, n.commitCh
}

// WaitCommitted waits until the majority commit point reaches ts, the
// write having been taken in epoch (Epoch), the member stops being
// primary (ErrNotPrimary) or ctx ends. A write a rollback took back is
// ErrNotPrimary even when the commit point passes its ts (rollback.go).
func (n *Node) WaitCommitted(ctx context.Context, ts repl.Timestamp, epoch uint64) error {
	return n.waitCommitPoint(ctx, func() (bool, error) {
		if !n.survived(ts, epoch) {
			return true, ErrNotPrimary
		}
		if n.commitTS >= ts {
			return true, nil
		}
		if !n.primary {
			return true, ErrNotPrimary
		}
		return false, nil
	})
}

// ErrNoElectable: no voter took the leadership over (step down).
var ErrNoElectable = errors.New("raftrepl: no electable secondary caught up")

// ErrNotPrimary: the member stopped being primary while a write waited.
var ErrNotPrimary = errors.New("raftrepl: not primary")

// WaitReplicated waits until w members (this one included) hold the
// entry carrying ts in their logs (w: N), polling the leader's progress.
func (n *Node) WaitReplicated(ctx context.Context, ts repl.Timestamp, w int) error {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for {
		n.mu.Lock()
		var index uint64
		for _, p := range n.proposed {
			if p.ts >= ts {
				index = p.index
				break
			}
		}
		commit, primary := n.commitTS, n.primary
		n.mu.Unlock()
		if !primary {
			return ErrNotPrimary
		}
		if index == 0 && commit >= ts {
			return nil // committed and pruned: a majority holds it; w ≤ voters checked by the caller
		}
		if index > 0 {
			have := 0
			for _, match := range n.node.Status().Progress {
				if match.Match >= index {
					have++
				}
			}
			if have >= w {
				return nil
			}
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		case <-n.stopc:
			return ErrStopped
		}
	}
}

// ReadIndex confirms the member's leadership with a majority (Raft's
// ReadIndex) and waits until the member has applied up to the index the
// read must see: a read after it is linearizable.
func (n *Node) ReadIndex(ctx context.Context) error {
	n.mu.Lock()
	n.seq++
	key := fmt.Sprintf("%d-%d", n.id, n.seq)
	ch := make(chan uint64, 1)
	n.reads[key] = ch
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		delete(n.reads, key)
		n.mu.Unlock()
	}()
	if err := n.node.ReadIndex(ctx, []byte(key)); err != nil {
		return err
	}
	var index uint64
	select {
	case index = <-ch:
	case <-ctx.Done():
		return ctx.Err()
	case <-n.stopc:
		return ErrStopped
	}
	for {
		n.mu.Lock()
		applied, c := n.applied, n.commitCh
		n.mu.Unlock()
		if applied >= index {
			return nil
		}
		select {
		case <-c:
		case <-ctx.Done():
			return ctx.Err()
		case <-n.stopc:
			return ErrStopped
		}
	}
}

// StepDown hands the leadership to the most up-to-date other voter and
// waits (up to ctx) until the member is no longer primary.
func (n *Node) StepDown(ctx context.Context) error {
	rs := n.node.Status()
	if rs.RaftState != raft.StateLeader {
		return ErrNotPrimary
	}
	var best uint64
	var bestMatch uint64
	ids := make([]uint64, 0, len(rs.Progress))
	for id := range rs.Progress {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		p := rs.Progress[id]
		if id == n.id || p.IsLearner || !n.electableID(id) {
			continue
		}
		if best == 0 || p.Match > bestMatch {
			best, bestMatch = id, p.Match
		}
	}
	if best == 0 {
		return ErrNoElectable
	}
	n.node.TransferLeadership(ctx, n.id, best)
	deadline := time.Now().Add(time.Duration(electionMillis(n.Config())) * time.Millisecond * 2)
	for {
		if time.Now().After(deadline) {
			return ErrNoElectable // Raft abandons a transfer after an election timeout
		}
		n.mu.Lock()
		primary, c := n.primary, n.commitCh
		n.mu.Unlock()
		if !primary {
			return nil
		}
		select {
		case <-c:
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// AddMember adds m with the configuration next: a member that does not
// vote as a Raft learner; a voter first as a learner, promoted once it
// caught up (members.go). It returns once m is in the group.
func (n *Node) AddMember(ctx context.Context, next *repl.Config, m repl.Member) error {
	if m.Votes == 0 {
		return n.confChange(ctx, next, pb.ConfChangeAddLearnerNode, RaftID(m))
	}
	return n.addVoter(ctx, next, RaftID(m))
}

// RemoveMember proposes the removal of the member with Raft id id.
func (n *Node) RemoveMember(ctx context.Context, next *repl.Config, id uint64) error {
	return n.confChange(ctx, next, pb.ConfChangeRemoveNode, id)
}

// UpdateConfig proposes next without a membership change (settings,
// tags, priorities of the same voters) and waits until it is applied.
func (n *Node) UpdateConfig(ctx context.Context, next *repl.Config) error {
	return n.confChange(ctx, next, pb.ConfChangeUpdateNode, n.id)
}

func (n *Node) confChange(ctx context.Context, next *repl.Config, t pb.ConfChangeType, id uint64) error {
	cc := &pb.ConfChange{Type: &t, NodeId: &id, Context: next.Doc()}
	if !n.isLeader() {
		return ErrNotPrimary
	}
	// Raft ignores a configuration change proposed while another is
	// pending (it logs an empty entry in its place): a learner's
	// promotion (members.go) or the previous change, proposed but not
	// yet applied and advanced. So the change is proposed once none is
	// pending, and again when it was ignored (still not applied, nothing
	// pending); applying one twice changes nothing the second time. A
	// proposal Raft dropped (leadership lost) is never applied: the
	// caller proposes again after the deadline.
	deadline := time.Now().Add(5 * time.Second)
	var proposed time.Time
	for {
		if time.Now().After(deadline) {
			return errors.New("raftrepl: the configuration change was not applied in time")
		}
		n.mu.Lock()
		cur, c := n.cfg, n.commitCh
		settled := n.advanced >= n.applied
		idle := n.confPending <= n.advanced
		n.mu.Unlock()
		in := n.inGroup(id)
		done := settled && bytes.Equal(cur.Doc(), next.Doc())
		switch t {
		case pb.ConfChangeAddNode, pb.ConfChangeAddLearnerNode:
			done = done && in
		case pb.ConfChangeRemoveNode:
			done = done && !in
		}
		if done {
			return nil
		}
		n.snap.mu.Lock()
		promoting := n.snap.promoting
		n.snap.mu.Unlock()
		if idle && !promoting && time.Since(proposed) > confRetry {
			if err := n.node.ProposeConfChange(ctx, cc); err != nil {
				return err
			}
			proposed = time.Now()
		}
		select {
		case <-c:
		case <-time.After(5 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		case <-n.stopc:
			return ErrStopped
		}
	}
}

// confRetry is how long a configuration change's proposal may stay
// unapplied, with no other pending, before it is proposed again.
const confRetry = 500 * time.Millisecond
