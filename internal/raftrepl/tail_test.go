package raftrepl

import (
	"testing"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

func memWith(t *testing.T, from, to uint64, payload int) *raft.MemoryStorage {
	t.Helper()
	mem := raft.NewMemoryStorage()
	if from > 1 {
		term := uint64(1)
		idx := from - 1
		if err := mem.ApplySnapshot(&pb.Snapshot{Metadata: &pb.SnapshotMetadata{Index: &idx, Term: &term}}); err != nil {
			t.Fatal(err)
		}
	}
	var ents []*pb.Entry
	for i := from; i <= to; i++ {
		term, index := uint64(1), i
		ents = append(ents, &pb.Entry{Term: &term, Index: &index, Data: make([]byte, payload)})
	}
	if err := mem.Append(ents); err != nil {
		t.Fatal(err)
	}
	return mem
}

// TestTailSizes: the tracked sizes follow the applied part of the log as
// it grows, is compacted and is replaced by a snapshot, and cut keeps the
// asked bytes once the tail exceeds them by a quarter.
func TestTailSizes(t *testing.T) {
	const per = 100 + entryOverhead
	mem := memWith(t, 1, 100, 100)
	var ts tailSizes
	steps := []struct {
		name           string
		first, applied uint64
		keep           int
		wantTotal      int
		wantCut        uint64
	}{
		{"first sizing", 1, 10, 10 * per, 10 * per, 0},
		{"grows", 1, 50, 10 * per, 50 * per, 40},
		{"within a quarter", 1, 50, 45 * per, 50 * per, 0},
		{"compacted front", 41, 60, 10 * per, 20 * per, 50},
		{"applied all", 41, 100, 100 * per, 60 * per, 0},
	}
	for _, s := range steps {
		if err := ts.track(mem, s.first, s.applied); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if ts.total != s.wantTotal || ts.from != s.first || len(ts.sizes) != int(s.applied-s.first+1) {
			t.Fatalf("%s: total %d from %d len %d, want %d from %d len %d", s.name, ts.total, ts.from, len(ts.sizes),
				s.wantTotal, s.first, s.applied-s.first+1)
		}
		if got := ts.cut(s.keep); got != s.wantCut {
			t.Fatalf("%s: cut(%d) = %d, want %d", s.name, s.keep, got, s.wantCut)
		}
	}
	// A snapshot replaced the log: the sizes start over from its tail.
	mem = memWith(t, 500, 520, 10)
	if err := ts.track(mem, 500, 510); err != nil {
		t.Fatal(err)
	}
	if want := 11 * (10 + entryOverhead); ts.total != want || ts.from != 500 {
		t.Fatalf("after a snapshot: total %d from %d, want %d from 500", ts.total, ts.from, want)
	}
}
