package raftrepl

// The Raft log, hard state and configuration state in kv.
//
// One kv tree, _raft, holds them: "h" the HardState (term, vote, commit),
// "c" the ConfState (voters and learners), "a" the index of the last entry
// applied to this member's data, and "e" followed by the 8-byte big-endian
// index, each log entry, all protobuf-encoded as raftpb marshals them. A
// Ready's entries and hard state are written in one transaction committed
// with kv.Sync before any of its messages leave (Raft's rule: persist, then
// send), and a later entry at an index already stored replaces it and
// every entry after it (the leader overwrote an uncommitted suffix). At
// start the tree is read into a raft.MemoryStorage, which serves the raft
// library's reads. The log is not compacted (no snapshot yet): it grows
// with the writes, as docs/compatibility.md says.

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
		cur := t.Cursor()
		for k, v := cur.Seek([]byte("e")); k != nil && k[0] == 'e'; k, v = cur.Next() {
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

// memory returns a MemoryStorage holding st.
func (st *stored) memory() (*raft.MemoryStorage, error) {
	m := raft.NewMemoryStorage()
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

// save persists a Ready's hard state and entries, durably, and creates
// the tree on the first call.
func save(ctx context.Context, db *kv.DB, hs *pb.HardState, ents []*pb.Entry) error {
	tx, err := db.BeginWrite(ctx)
	if err != nil {
		return fmt.Errorf("raftrepl: saving the raft log: %w", err)
	}
	defer tx.Rollback()
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
				return err
			}
			if err := t.Put(entryKey(ents[i].GetIndex()), b); err != nil {
				return fmt.Errorf("raftrepl: appending to the raft log: %w", err)
			}
		}
	}
	if hs != nil && !raft.IsEmptyHardState(hs) {
		b, err := proto.Marshal(hs)
		if err != nil {
			return err
		}
		if err := t.Put(keyHard, b); err != nil {
			return fmt.Errorf("raftrepl: saving the hard state: %w", err)
		}
	}
	if err := tx.CommitWith(kv.Sync); err != nil {
		return fmt.Errorf("raftrepl: saving the raft log: %w", err)
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
