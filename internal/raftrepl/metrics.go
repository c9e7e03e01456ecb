package raftrepl

// Replication figures, for serverStatus' repl.raft section and the
// Prometheus endpoint.
//
// The term and the leader changes (the times this member saw a new leader
// elected) come from the Ready loop. The commit latency is measured on the
// leader: from the Ready that appends an oplog entry to the leader's log to
// the Ready that applies it committed, so it spans the round trip to a
// majority and their durable appends; it is kept as a histogram of fixed
// buckets (CommitBuckets). Replication lag is what the member knows of the
// others: the leader knows every member's matched index (Raft's progress),
// so it reports each member's lag behind its own last entry in entries and
// in seconds between its own last optime and the optime at the member's
// matched index, as mongod's rs.printSecondaryReplicationInfo compares
// optimeDates (second resolution); a secondary reports only its own lag in
// entries, its applied index behind the commit index the leader sent.

import (
	"sync"
	"time"

	"github.com/cairndb/cairn/internal/repl"
	pb "go.etcd.io/raft/v3/raftpb"
)

// CommitBuckets are the upper bounds of the commit latency histogram.
var CommitBuckets = []time.Duration{
	500 * time.Microsecond, time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond,
	10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond,
	200 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second,
}

// maxPending bounds the appended entries waiting for their commit (older
// ones are forgotten, not measured).
const maxPending = 4096

// Metrics are the member's replication figures.
type Metrics struct {
	Term          uint64
	Primary       bool
	LeaderChanges uint64
	// Commits counts the leader's entries measured, CommitTotal their
	// summed latency and CommitCounts[i] those within CommitBuckets[i]
	// (not cumulative; the last element counts those above every bound).
	Commits      uint64
	CommitTotal  time.Duration
	CommitCounts []uint64
	// Members: on the primary every member, elsewhere this one.
	Members []MemberLag
}

// MemberLag is one member's replication lag as this member knows it.
type MemberLag struct {
	Host string
	Self bool
	// Entries is how many log entries the member lacks.
	Entries uint64
	// Seconds is its optime's lag behind the primary's, in whole
	// seconds; HasSeconds is false where it is unknown (a secondary's
	// view, a member whose optime is unknown).
	Seconds    int64
	HasSeconds bool
}

// metrics is the state the Ready loop keeps for Metrics.
type metrics struct {
	mu            sync.Mutex
	lead          uint64
	leaderChanges uint64
	pending       []appendedAt // the leader's entries not committed yet
	commits       uint64
	commitTotal   time.Duration
	counts        []uint64
}

type appendedAt struct {
	index uint64
	at    time.Time
}

// noteLead counts a change of leader (lead 0: none known, not counted).
func (m *metrics) noteLead(lead uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if lead != 0 && lead != m.lead {
		m.leaderChanges++
	}
	if lead != 0 {
		m.lead = lead
	}
}

// appended records the leader's oplog entries appended now; a member
// that is not the leader forgets what it recorded.
func (m *metrics) appended(leader bool, ents []*pb.Entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !leader {
		m.pending = m.pending[:0]
		return
	}
	now := time.Now()
	for _, e := range ents {
		if e.GetType() == pb.EntryNormal && len(e.Data) > 0 && e.Data[0] == entryOps {
			if len(m.pending) == maxPending {
				m.pending = append(m.pending[:0], m.pending[1:]...)
			}
			m.pending = append(m.pending, appendedAt{e.GetIndex(), now})
		}
	}
}

// committed measures the pending entries up to the last of ents, applied
// committed now.
func (m *metrics) committed(ents []*pb.Entry) {
	if len(ents) == 0 {
		return
	}
	last := ents[len(ents)-1].GetIndex()
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.counts == nil {
		m.counts = make([]uint64, len(CommitBuckets)+1)
	}
	i := 0
	for ; i < len(m.pending) && m.pending[i].index <= last; i++ {
		d := now.Sub(m.pending[i].at)
		m.commits++
		m.commitTotal += d
		b := 0
		for b < len(CommitBuckets) && d > CommitBuckets[b] {
			b++
		}
		m.counts[b]++
	}
	m.pending = append(m.pending[:0], m.pending[i:]...)
}

// Metrics returns the member's replication figures; applied is its own
// last applied optime.
func (n *Node) Metrics(applied repl.Timestamp) Metrics {
	st := n.Status()
	out := Metrics{Term: st.Term, Primary: st.Primary}
	n.met.mu.Lock()
	out.LeaderChanges, out.Commits, out.CommitTotal = n.met.leaderChanges, n.met.commits, n.met.commitTotal
	out.CommitCounts = make([]uint64, len(CommitBuckets)+1)
	copy(out.CommitCounts, n.met.counts)
	n.met.mu.Unlock()
	rs := n.node.Status()
	if !st.Primary {
		behind := uint64(0)
		if c := rs.HardState.GetCommit(); c > st.Applied {
			behind = c - st.Applied
		}
		out.Members = []MemberLag{{Host: n.opts.Set.Me(), Self: true, Entries: behind}}
		return out
	}
	last, _ := n.mem.LastIndex()
	for _, ms := range n.Members(applied) {
		ml := MemberLag{Host: ms.Member.Host, Self: ms.Self}
		if ms.Self {
			ml.HasSeconds = true
			out.Members = append(out.Members, ml)
			continue
		}
		if pr, ok := rs.Progress[RaftID(ms.Member)]; ok && pr.Match < last {
			ml.Entries = last - pr.Match
		}
		if ms.OpTime > 0 || ml.Entries == 0 {
			ml.HasSeconds = true
			if ml.Entries > 0 && applied.T() > ms.OpTime.T() {
				ml.Seconds = int64(applied.T() - ms.OpTime.T())
			}
		}
		out.Members = append(out.Members, ml)
	}
	return out
}
