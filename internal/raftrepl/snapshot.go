package raftrepl

// Snapshots: what the leader sends a member that needs entries its log no
// longer holds (a new member, one absent longer than the log's tail).
//
// Raft's own mechanism carries the decision: when the leader's raft asks
// its Storage for a snapshot (logStorage.Snapshot), the member makes a
// snapshot source after the current Ready (serveSnapshots): a kv read
// transaction begun at the applied index, which pins that state for as
// long as the transfer runs, and a raftpb.Snapshot whose metadata is the
// applied index, its term and the configuration state there, and whose
// Data is only a small descriptor (the source's id, the member's host,
// the commit point, the replica set configuration and the record count).
// Raft's next attempt sends that MsgSnap, a few hundred bytes, with the
// other messages.
//
// The data travels apart from the Raft messages, in chunks the receiving
// member pulls over the members' ordinary port with the internal command
//
//	{_raftSnapshot: <source id>, setName, tree: <n>, after: BinData}
//
// whose reply holds at most SnapshotOptions.ChunkBytes of records and the
// position to continue from: a chunk is asked for again after a failure,
// and no message ever holds the whole data. The records are every kv
// tree's entries but those of the member itself: the _raft tree, the
// oplog's figures and undo records, and the trees and catalog entries of the local
// database; the oplog's entries from the commit point on travel as one
// more segment, which the receiver writes into its own oplog (as mongod's
// initial sync copies the databases but local, then the oplog). The kv
// snapshot holds at least the applied index's state; on the leader it also
// holds the writes committed locally whose entries Raft has not committed
// yet (w: 1), as mongod's initial sync from a primary copies them. The
// receiver replays the log after the snapshot's index and skips every
// oplog entry it holds (apply.go), so that overlap is applied once.
//
// A source nobody fetches for SnapshotOptions.SourceIdle is closed, and the
// members raft still shows waiting for it are reported as failed
// transfers (ReportSnapshot), so that raft probes them and sends a new
// snapshot. The log is not compacted past an open source's index.

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
	"google.golang.org/protobuf/proto"
)

// SnapshotCommand is the internal command that reads a chunk of a snapshot.
const SnapshotCommand = "_raftSnapshot"

// oplogSegment names the oplog's entries in a snapshot's records.
const oplogSegment = "\x00oplog"

// ErrNoSnapshot: the member serves no snapshot of that id (closed, or made
// by another member).
var ErrNoSnapshot = errors.New("raftrepl: no such snapshot (closed or expired)")

// snapSource is a snapshot a member serves.
type snapSource struct {
	id    int64
	index uint64
	snap  *pb.Snapshot
	// mu guards tx against its end while a chunk is read.
	mu     sync.RWMutex
	tx     *kv.Tx
	closed bool
	// trees are the trees sent, in order; oplogTree, among them, is the
	// oplog's, sent from oplogFrom on.
	trees     []string
	oplogTree string
	oplogFrom repl.Timestamp
	lastUsed  time.Time
	done      bool
	// current: the group's configuration is the snapshot's.
	current bool
}

// descriptor is a snapshot's Data: what the receiver needs to fetch it.
type descriptor struct {
	ID      int64
	Host    string
	Index   uint64
	Commit  repl.Timestamp
	Wall    time.Time
	Config  bson.Doc
	Records int64
}

func (d *descriptor) encode() []byte {
	var b bson.Builder
	b.AppendInt64("id", d.ID)
	b.AppendString("host", d.Host)
	b.AppendInt64("index", int64(d.Index))
	b.AppendTimestamp("commit", d.Commit.T(), d.Commit.I())
	b.AppendDateTime("wall", d.Wall.UnixMilli())
	b.AppendDocument("config", d.Config)
	b.AppendInt64("records", d.Records)
	return b.Finish()
}

func decodeDescriptor(data []byte) (*descriptor, error) {
	doc := bson.Doc(data)
	if err := bson.Validate(data, 16); err != nil {
		return nil, fmt.Errorf("raftrepl: a snapshot's descriptor: %w", err)
	}
	d := &descriptor{}
	get := func(k string, t bson.Type) (bson.Value, error) {
		v, ok := doc.Lookup(k)
		if !ok || v.Type != t {
			return v, fmt.Errorf("raftrepl: a snapshot's descriptor has no %s", k)
		}
		return v, nil
	}
	var err error
	var v bson.Value
	if v, err = get("id", bson.TypeInt64); err != nil {
		return nil, err
	}
	d.ID = v.Int64()
	if v, err = get("host", bson.TypeString); err != nil {
		return nil, err
	}
	d.Host = v.StringValue()
	if v, err = get("index", bson.TypeInt64); err != nil {
		return nil, err
	}
	d.Index = uint64(v.Int64())
	if v, err = get("commit", bson.TypeTimestamp); err != nil {
		return nil, err
	}
	d.Commit = repl.MakeTimestamp(v.Timestamp())
	if v, err = get("wall", bson.TypeDateTime); err != nil {
		return nil, err
	}
	d.Wall = time.UnixMilli(v.DateTime())
	if v, err = get("config", bson.TypeDocument); err != nil {
		return nil, err
	}
	d.Config = v.Document()
	if v, err = get("records", bson.TypeInt64); err != nil {
		return nil, err
	}
	d.Records = v.Int64()
	return d, nil
}

// sourceSnapshot is logStorage.Snapshot: the newest source's snapshot
// while the configuration is the one it carries, else
// ErrSnapshotTemporarilyUnavailable while a new one is made after this
// Ready (raft asks again at the next heartbeat's response).
func (n *Node) sourceSnapshot() (*pb.Snapshot, error) {
	n.snap.mu.Lock()
	defer n.snap.mu.Unlock()
	if k := len(n.snap.sources); k > 0 && n.snap.sources[k-1].current {
		src := n.snap.sources[k-1]
		src.lastUsed = time.Now()
		return proto.Clone(src.snap).(*pb.Snapshot), nil
	}
	n.snap.want = true
	return nil, raft.ErrSnapshotTemporarilyUnavailable
}

// serveSnapshots makes the snapshot raft asked for and closes the idle
// ones (the Ready loop, between Readys: the applied index and the data
// agree). A source whose configuration is not the group's any more is
// served to whoever fetches it but sent to no one else: a member added
// since must find itself in the snapshot's configuration.
func (n *Node) serveSnapshots() {
	idle := n.opts.Snapshots.SourceIdle
	n.snap.mu.Lock()
	want := n.snap.want
	n.snap.want = false
	var expired []*snapSource
	kept := n.snap.sources[:0]
	for _, src := range n.snap.sources {
		if time.Since(src.lastUsed) > idle {
			expired = append(expired, src)
		} else {
			kept = append(kept, src)
		}
	}
	n.snap.sources = kept
	var newest *snapSource
	if k := len(kept); k > 0 {
		newest = kept[k-1]
	}
	n.snap.mu.Unlock()
	for _, src := range expired {
		src.close()
		n.reportStalled(src.index)
		if !src.done {
			n.opts.Log.Info("Closed a snapshot nobody fetched", "c", "REPL", "index", src.index)
		}
	}
	if newest != nil {
		cur := n.node.Status().Config
		if !sameConf(newest.snap.GetMetadata().GetConfState(), cur.Voters.IDs(), cur.Learners) {
			n.snap.mu.Lock()
			newest.current = false
			n.snap.mu.Unlock()
		}
	}
	if !want || (newest != nil && newest.current) {
		return
	}
	src, err := n.newSource()
	if err != nil {
		n.opts.Log.Error("Cannot make a snapshot for a member that needs one", "c", "REPL", "error", err.Error())
		return
	}
	n.snap.mu.Lock()
	n.snap.sources = append(n.snap.sources, src)
	n.snap.stats.SnapshotsSent++
	n.snap.mu.Unlock()
	n.opts.Log.Info("Made a snapshot for a member that needs entries the log no longer holds", "c", "REPL",
		"index", src.index, "trees", len(src.trees))
}

// sameConf reports whether cs has exactly the voters and learners given.
func sameConf(cs *pb.ConfState, voters, learners map[uint64]struct{}) bool {
	if len(cs.GetVoters()) != len(voters) || len(cs.GetLearners()) != len(learners) {
		return false
	}
	for _, id := range cs.GetVoters() {
		if _, ok := voters[id]; !ok {
			return false
		}
	}
	for _, id := range cs.GetLearners() {
		if _, ok := learners[id]; !ok {
			return false
		}
	}
	return true
}

// reportStalled reports a failed transfer for every member raft shows
// waiting for the snapshot at index.
func (n *Node) reportStalled(index uint64) {
	for id, pr := range n.node.Status().Progress {
		if pr.State == tracker.StateSnapshot && pr.PendingSnapshot == index {
			n.node.ReportSnapshot(id, raft.SnapshotFailure)
		}
	}
}

func (s *snapSource) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		_ = s.tx.Rollback()
	}
}

// newSource begins a snapshot of the member's data at its applied index.
func (n *Node) newSource() (*snapSource, error) {
	tx, err := n.opts.DB.BeginRead()
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	applied, commit, wall, cfg := n.applied, n.commitTS, n.commitWall, n.cfg
	n.mu.Unlock()
	fail := func(err error) (*snapSource, error) {
		_ = tx.Rollback()
		return nil, err
	}
	term, err := n.mem.Term(applied)
	if err != nil {
		return fail(fmt.Errorf("the term of the applied index %d: %w", applied, err))
	}
	var cs *pb.ConfState
	if rt, err := tx.Tree(raftTree); err == nil {
		if cs, err = storedConf(rt); err != nil {
			return fail(err)
		}
	}
	if cs == nil {
		return fail(errors.New("no configuration state is stored"))
	}
	src := &snapSource{index: applied, tx: tx, oplogFrom: commit, lastUsed: time.Now(), current: true}
	records, err := src.listTrees()
	if err != nil {
		return fail(err)
	}
	n.snap.mu.Lock()
	n.snap.nextID++
	src.id = n.snap.nextID<<20 | time.Now().UnixNano()&(1<<20-1)
	n.snap.mu.Unlock()
	d := descriptor{ID: src.id, Host: n.opts.Set.Me(), Index: applied, Commit: commit, Wall: wall,
		Config: cfg.Doc(), Records: records}
	src.snap = &pb.Snapshot{Data: d.encode(), Metadata: &pb.SnapshotMetadata{Index: &applied, Term: &term, ConfState: cs}}
	return src, nil
}

// listTrees lists the trees a snapshot copies and counts their records.
func (s *snapSource) listTrees() (int64, error) {
	locals, oplogTree, err := localTrees(s.tx)
	if err != nil {
		return 0, err
	}
	s.oplogTree = oplogTree
	var records int64
	err = s.tx.ForEachTree(func(name string) error {
		if name == raftTree || name == oplog.MetaTreeName || name == undoTree || isLocalTree(name, locals) {
			return nil
		}
		s.trees = append(s.trees, name)
		if t, err := s.tx.Tree(name); err == nil {
			records += t.Len()
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if oplogTree != "" {
		s.trees = append(s.trees, oplogTree)
		if t, err := s.tx.Tree(oplogTree); err == nil {
			records += t.Len()
		}
	}
	return records, nil
}

// undoTree is the oplog's undo records (internal/oplog's _oplogundo): the
// member's own bookkeeping of its writes Raft has not committed, which a
// rollback reads. They describe the source's oplog, not the receiver's,
// so a snapshot leaves them out, and the receiver drops its own
// (installData): the oplog it installs holds no entry of its own.
const undoTree = "_oplogundo"

// localTrees returns the UUIDs (hex) of tx's local collections and the
// oplog's data tree.
func localTrees(tx *kv.Tx) (map[string]bool, string, error) {
	colls, err := catalog.List(tx, "local")
	if err != nil {
		return nil, "", err
	}
	locals := map[string]bool{}
	oplogTree := ""
	for _, c := range colls {
		locals[hex.EncodeToString(c.UUID[:])] = true
		if c.IsOplog() {
			oplogTree = c.DataTree()
		}
	}
	return locals, oplogTree, nil
}

// isLocalTree reports a tree of a local collection: its name is a kind
// letter, a colon and the collection's UUID in hex (internal/catalog).
func isLocalTree(name string, locals map[string]bool) bool {
	return len(name) >= 34 && name[1] == ':' && locals[name[2:34]]
}

// Chunk is one reply of _raftSnapshot: segments of records, and where the
// next chunk starts (Done: none).
type Chunk struct {
	Segments []Segment
	Records  int
	Tree     int
	After    []byte
	Done     bool
}

// Segment is records of one tree: uvarint key length, key, uvarint value
// length, value, repeated.
type Segment struct {
	Name string
	Data []byte
}

// SnapshotChunk reads the chunk of snapshot id that starts after key after
// of its tree'th tree (after nil: at the tree's start).
func (n *Node) SnapshotChunk(id int64, tree int, after []byte) (*Chunk, error) {
	n.snap.mu.Lock()
	var src *snapSource
	for _, s := range n.snap.sources {
		if s.id == id {
			src = s
		}
	}
	if src == nil {
		n.snap.mu.Unlock()
		return nil, ErrNoSnapshot
	}
	src.lastUsed = time.Now()
	n.snap.mu.Unlock()
	c, err := src.chunk(tree, after, n.opts.Snapshots.ChunkBytes)
	if err != nil {
		return nil, err
	}
	n.snap.mu.Lock()
	n.snap.stats.ChunksServed++
	for _, s := range c.Segments {
		n.snap.stats.BytesServed += int64(len(s.Data))
	}
	if c.Done {
		src.done = true
	}
	n.snap.mu.Unlock()
	return c, nil
}

func (s *snapSource) chunk(tree int, after []byte, limit int) (*Chunk, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrNoSnapshot
	}
	if tree < 0 {
		return nil, fmt.Errorf("raftrepl: snapshot position %d", tree)
	}
	c := &Chunk{}
	size := 0
	for tree < len(s.trees) && size < limit {
		name := s.trees[tree]
		t, err := s.tx.Tree(name)
		if err != nil {
			return nil, fmt.Errorf("raftrepl: snapshot of %q: %w", name, err)
		}
		seg := name
		// A tree empty from its start is sent as an empty segment, so
		// that the member creates it: a collection created and not yet
		// written to has empty data and index trees its catalog entry
		// names (the oplog and the catalog always have records).
		whole := after == nil && name != s.oplogTree && name != catalog.TreeName
		cur := t.Cursor()
		var k, v []byte
		switch {
		case name == s.oplogTree && (after == nil || bytes.Compare(after, tsKey(s.oplogFrom)) < 0):
			seg = oplogSegment
			k, v = cur.Seek(tsKey(s.oplogFrom))
		case after == nil:
			k, v = cur.First()
		default:
			if k, v = cur.Seek(after); k != nil && bytes.Equal(k, after) {
				k, v = cur.Next()
			}
		}
		if name == s.oplogTree {
			seg = oplogSegment
		}
		var data []byte
		for ; k != nil && size+len(data) < limit; k, v = cur.Next() {
			if name == catalog.TreeName && strings.HasPrefix(string(k), "local.") {
				continue
			}
			data = binary.AppendUvarint(data, uint64(len(k)))
			data = append(data, k...)
			data = binary.AppendUvarint(data, uint64(len(v)))
			data = append(data, v...)
			after = append(after[:0:0], k...)
			c.Records++
		}
		if err := cur.Err(); err != nil {
			return nil, fmt.Errorf("raftrepl: snapshot of %q: %w", name, err)
		}
		if len(data) > 0 || (whole && k == nil) {
			c.Segments = append(c.Segments, Segment{Name: seg, Data: data})
			size += len(data)
		}
		if k != nil {
			break // the chunk is full within this tree
		}
		tree, after = tree+1, nil
	}
	c.Tree, c.After, c.Done = tree, after, tree >= len(s.trees)
	return c, nil
}

// tsKey is an oplog entry's key (internal/oplog): its ts, big-endian.
func tsKey(ts repl.Timestamp) []byte { return binary.BigEndian.AppendUint64(nil, uint64(ts)) }
