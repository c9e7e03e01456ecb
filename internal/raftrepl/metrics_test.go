package raftrepl

import (
	"testing"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
)

func opsEntry(index uint64) *pb.Entry {
	t := pb.EntryNormal
	return &pb.Entry{Index: &index, Type: &t, Data: []byte{entryOps}}
}

func confEntry(index uint64) *pb.Entry {
	t := pb.EntryConfChange
	return &pb.Entry{Index: &index, Type: &t}
}

// TestMetricsCommitLatency: the leader's oplog entries are measured from
// their append to their commit, once each, in the bucket of their latency;
// other entries, and entries appended by a member that is not the leader,
// are not.
func TestMetricsCommitLatency(t *testing.T) {
	var m metrics
	m.appended(true, []*pb.Entry{opsEntry(1), confEntry(2), opsEntry(3)})
	// Backdate the first so that its latency falls in a later bucket.
	m.pending[0].at = time.Now().Add(-300 * time.Millisecond)
	m.committed([]*pb.Entry{opsEntry(1), confEntry(2)})
	if m.commits != 1 || len(m.pending) != 1 || m.pending[0].index != 3 {
		t.Fatalf("after committing 1-2: commits %d, pending %v", m.commits, m.pending)
	}
	if m.counts[9] != 1 { // (200ms, 500ms]
		t.Fatalf("buckets %v: a 300ms commit is not in (200ms, 500ms]", m.counts)
	}
	if m.commitTotal < 300*time.Millisecond {
		t.Fatalf("total %v", m.commitTotal)
	}
	m.pending[0].at = time.Now().Add(-3 * time.Second)
	m.committed([]*pb.Entry{opsEntry(3)})
	m.committed([]*pb.Entry{opsEntry(3)})                           // re-delivered: not measured twice
	if m.commits != 2 || len(m.pending) != 0 || m.counts[12] != 1 { // (2s, 5s]
		t.Fatalf("after committing 3: commits %d, pending %v, buckets %v", m.commits, m.pending, m.counts)
	}
	// A follower's appends are not measured, and it forgets a leader's.
	m.appended(true, []*pb.Entry{opsEntry(4)})
	m.appended(false, []*pb.Entry{opsEntry(5)})
	m.committed([]*pb.Entry{opsEntry(4), opsEntry(5)})
	if m.commits != 2 {
		t.Fatalf("a follower's entries were measured: %d", m.commits)
	}
	// The pending entries are bounded.
	for i := uint64(0); i < maxPending+10; i++ {
		m.appended(true, []*pb.Entry{opsEntry(100 + i)})
	}
	if len(m.pending) != maxPending || m.pending[0].index != 110 {
		t.Fatalf("pending %d from %d, want %d from 110", len(m.pending), m.pending[0].index, maxPending)
	}
}

// TestMetricsLeaderChanges: a change counts a new leader, not an unknown
// one (0) nor the same leader again.
func TestMetricsLeaderChanges(t *testing.T) {
	var m metrics
	for _, tc := range []struct {
		lead uint64
		want uint64
	}{{0, 0}, {1, 1}, {1, 1}, {0, 1}, {1, 1}, {2, 2}, {3, 3}, {0, 3}, {3, 3}} {
		m.noteLead(tc.lead)
		if m.leaderChanges != tc.want {
			t.Fatalf("after lead %d: %d changes, want %d", tc.lead, m.leaderChanges, tc.want)
		}
	}
}
