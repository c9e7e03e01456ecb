package raftrepl

// The Raft log, hard state and configuration state in kv.
//
// One kv tree, _raft, holds them: "h" the HardState (term, vote, commit),
// "c" the ConfState (voters and learners), "a" the index of the last entry
// applied to this member's data, and "e" followed by the 8-byte big-endian
// index, each log entry, all protobuf-encoded as raftpb marshals them. A
// Ready's entries and hard state are written in one transaction committed
// with kv.Sync before any of its messages leave (Raft's rule: persist, then
// send) when Raft says it must be (MustSync: entries, term or vote; a
// moved commit index alone is committed Lazy), and a later entry at an index already stored replaces it and
// every entry after it (the leader overwrote an uncommitted suffix). At
// start the tree is read into a raft.MemoryStorage, which serves the raft
// library's reads.
//
// The log is compacted (compact.go): "s" holds the index and term of the
// last entry removed from its head (raftpb.SnapshotMetadata) and "t" the
// majority commit point's ts at that index; the entries after it follow.
// A member that installed a snapshot (snapshot.go) holds the snapshot's
// index there and no entry before it. "c" is the configuration state as
// of the applied index (raft's InitialState at a restart).

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cairndb/cairn/kv"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

const raftTree = "_raft"

var (
	keyHard    = []byte("h")
	keyConf    = []byte("c")
	keyApplied = []byte("a")
	keySnap    = []byte("s")
	keySnapTS  = []byte("t")
)

func entryKey(i uint64) []byte {
	k := make([]byte, 9)
	k[0] = 'e'
	binary.BigEndian.PutUint64(k[1:], i)
	return k
}

// stored is what a member finds in its _raft tree at start.
type stored struct {
	hard    *pb.HardState
	conf    *pb.ConfState
	applied uint64
	// snap is the log's compaction point (index and term of the last
	// entry removed; zero when none), snapTS the commit point's ts there.
	snap    *pb.SnapshotMetadata
	snapTS  uint64
	entries []*pb.Entry
	// exists: the member has started Raft before (restart, not bootstrap).
	exists bool
}

// load reads the _raft tree (empty when the member never ran Raft).
func load(db *kv.DB) (*stored, error) {
	st := &stored{hard: &pb.HardState{}, conf: &pb.ConfState{}}
	err := db.View(func(tx *kv.Tx) error {
		t, err := tx.Tree(raftTree)
		if errors.Is(err, kv.ErrTreeNotFound) {
			return nil // never ran Raft
		}
		if err != nil {
			return err
		}
		st.exists = true
		if v, err := t.Get(keyHard); err != nil {
			return err
		} else if v != nil {
			if err := proto.Unmarshal(v, st.hard); err != nil {
				return fmt.Errorf("hard state: %w", err)
			}
		}
		if v, err := t.Get(keyConf); err != nil {
			return err
		} else if v != nil {
			if err := proto.Unmarshal(v, st.conf); err != nil {
				return fmt.Errorf("conf state: %w", err)
			}
		}
		if v, err := t.Get(keyApplied); err != nil {
			return err
		} else if len(v) == 8 {
			st.applied = binary.BigEndian.Uint64(v)
		}
		if v, err := t.Get(keySnap); err != nil {
			return err
		} else if v != nil {
			st.snap = &pb.SnapshotMetadata{}
			if err := proto.Unmarshal(v, st.snap); err != nil {
				return fmt.Errorf("snapshot metadata: %w", err)
			}
		}
		if v, err := t.Get(keySnapTS); err != nil {
			return err
		} else if len(v) == 8 {
			st.snapTS = binary.BigEndian.Uint64(v)
		}
		cur := t.Cursor()
		for k, v := cur.Seek(entryKey(st.snapIndex() + 1)); k != nil && k[0] == 'e'; k, v = cur.Next() {
			e := &pb.Entry{}
			if err := proto.Unmarshal(v, e); err != nil {
				return fmt.Errorf("entry %x: %w", k, err)
			}
			st.entries = append(st.entries, e)
		}
		return cur.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("raftrepl: reading the raft log: %w", err)
	}
	return st, nil
}

// snapIndex is the index of the log's compaction point (0: none).
func (st *stored) snapIndex() uint64 { return st.snap.GetIndex() }

// hasLog reports whether the member ran Raft before with a log (restart).
func (st *stored) hasLog() bool {
	return st.exists && (len(st.entries) > 0 || st.snapIndex() > 0)
}

// memory returns a MemoryStorage holding st.
func (st *stored) memory() (*raft.MemoryStorage, error) {
	m := raft.NewMemoryStorage()
	if st.snapIndex() > 0 {
		if err := m.ApplySnapshot(&pb.Snapshot{Metadata: st.snap}); err != nil {
			return nil, fmt.Errorf("raftrepl: loading the raft log's compaction point: %w", err)
		}
	}
	if len(st.entries) > 0 {
		if err := m.Append(st.entries); err != nil {
			return nil, fmt.Errorf("raftrepl: loading the raft log: %w", err)
		}
	}
	if !raft.IsEmptyHardState(st.hard) {
		if err := m.SetHardState(st.hard); err != nil {
			return nil, fmt.Errorf("raftrepl: loading the hard state: %w", err)
		}
	}
	return m, nil
}

// save persists a Ready's hard state and entries, and creates the tree on
// the first call. With sync (Raft's MustSync: new entries, term or vote)
// the commit is durable before save returns; without (only the commit
// index moved) it is Lazy, as etcd writes it: a lost commit index is
// learnt again from the leader, and kv makes commits durable in commit
// order, so a later applied index is never durable without it.
func save(ctx context.Context, db *kv.DB, hs *pb.HardState, ents []*pb.Entry, sync bool) error {
	tx, err := db.BeginWrite(ctx)
	if err != nil {
		return fmt.Errorf("raftrepl: saving the raft log: %w", err)
	}
	defer tx.Rollback()
	if err := saveIn(tx, hs, ents); err != nil {
		return err
	}
	d := kv.Lazy
	if sync {
		d = kv.Sync
	}
	if err := tx.CommitWith(d); err != nil {
		return fmt.Errorf("raftrepl: saving the raft log: %w", err)
	}
	return nil
}

// saveIn writes a Ready's hard state and entries in tx.
func saveIn(tx *kv.Tx, hs *pb.HardState, ents []*pb.Entry) error {
	t, err := tx.CreateTreeIfNotExists(raftTree)
	if err != nil {
		return fmt.Errorf("raftrepl: saving the raft log: %w", err)
	}
	if len(ents) > 0 {
		// Entries from ents[0].Index on replace what was stored there.
		if _, err := t.DeleteRange(entryKey(ents[0].GetIndex()), entryKey(^uint64(0))); err != nil {
			return fmt.Errorf("raftrepl: truncating the raft log: %w", err)
		}
		for i := range ents {
			b, err := proto.Marshal(ents[i])
			if err != nil {
				return fmt.Errorf("raftrepl: encoding log entry %d: %w", ents[i].GetIndex(), err)
			}
			if err := t.Put(entryKey(ents[i].GetIndex()), b); err != nil {
				return fmt.Errorf("raftrepl: appending to the raft log: %w", err)
			}
		}
	}
	if hs != nil && !raft.IsEmptyHardState(hs) {
		b, err := proto.Marshal(hs)
		if err != nil {
			return fmt.Errorf("raftrepl: encoding the hard state: %w", err)
		}
		if err := t.Put(keyHard, b); err != nil {
			return fmt.Errorf("raftrepl: saving the hard state: %w", err)
		}
	}
	return nil
}

// putApplied records, in tx, that entries up to index are applied.
func putApplied(tx *kv.Tx, index uint64) error {
	t, err := tx.CreateTreeIfNotExists(raftTree)
	if err != nil {
		return err
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], index)
	return t.Put(keyApplied, b[:])
}

// putConf records the configuration state, in tx.
func putConf(tx *kv.Tx, cs *pb.ConfState) error {
	t, err := tx.CreateTreeIfNotExists(raftTree)
	if err != nil {
		return err
	}
	b, err := proto.Marshal(cs)
	if err != nil {
		return err
	}
	return t.Put(keyConf, b)
}

// putSnapMeta records, in tx, the log's compaction point: the index and
// term of the last entry removed from its head, and the commit point's ts
// there.
func putSnapMeta(t *kv.Tree, index, term, ts uint64) error {
	b, err := proto.Marshal(&pb.SnapshotMetadata{Index: &index, Term: &term})
	if err != nil {
		return err
	}
	if err := t.Put(keySnap, b); err != nil {
		return err
	}
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], ts)
	return t.Put(keySnapTS, v[:])
}

// storedApplied reads the applied index recorded in t (0: none).
func storedApplied(t *kv.Tree) (uint64, error) {
	v, err := t.Get(keyApplied)
	if err != nil || len(v) != 8 {
		return 0, err
	}
	return binary.BigEndian.Uint64(v), nil
}

// storedConf reads the configuration state recorded in t (nil: none).
func storedConf(t *kv.Tree) (*pb.ConfState, error) {
	v, err := t.Get(keyConf)
	if err != nil || v == nil {
		return nil, err
	}
	cs := &pb.ConfState{}
	if err := proto.Unmarshal(v, cs); err != nil {
		return nil, fmt.Errorf("conf state: %w", err)
	}
	return cs, nil
}

// logStorage is the raft library's Storage: the MemoryStorage loaded from
// kv, with the configuration state of the applied index at a restart
// (InitialState) and snapshots made on demand from a kv snapshot
// (Snapshot, snapshot.go) instead of stored ones.
type logStorage struct {
	*raft.MemoryStorage
	n    *Node
	conf *pb.ConfState
}

// InitialState returns the stored hard state and the configuration state
// as of the applied index: raft re-applies only the entries after it.
func (s *logStorage) InitialState() (*pb.HardState, *pb.ConfState, error) {
	hs, _, err := s.MemoryStorage.InitialState()
	if err != nil {
		return nil, nil, err
	}
	if s.conf == nil {
		return hs, &pb.ConfState{}, nil
	}
	return hs, proto.Clone(s.conf).(*pb.ConfState), nil
}

// Snapshot returns the snapshot the leader sends a member that needs
// entries the log no longer holds (snapshot.go).
func (s *logStorage) Snapshot() (*pb.Snapshot, error) { return s.n.sourceSnapshot() }
