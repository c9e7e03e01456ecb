package raftrepl

// Receiving a snapshot: the initial sync of a new member, or of one absent
// longer than the leader's log.
//
// A MsgSnap is not stepped into raft when it arrives (Node.Receive hands
// it here): raft would restore its log to the snapshot's index at once,
// and the member must hold the data first. The member fetches the data in
// chunks from the member that made the snapshot (_raftSnapshot, see
// snapshot.go) into a staging file in SnapshotOptions.TempDir, retrying a
// failed chunk, and only then steps the MsgSnap. Raft then hands the
// snapshot to the Ready loop, which installs it (installSnapshot) in one kv
// transaction committed with kv.Sync: every tree but the member's own
// (_raft, the oplog's figures, the local database) is dropped, the
// snapshot's trees are bulk loaded, the catalog's entries are replaced but
// the local database's, the oplog's entries become the snapshot's, and the
// raft log becomes the snapshot's index with nothing before it. A crash
// before the commit leaves the member as it was (the staging directory is
// emptied at startup); raft sends the snapshot again. While it fetches and
// installs, and until its first snapshot is installed, the member reports
// STARTUP2 and serves no reads; replSetGetStatus shows initialSyncStatus.
//
// A fetch that fails (the source closed, its member gone) is dropped: the
// leader closes the idle source, reports the transfer failed, and raft
// sends a new snapshot, which starts a new attempt.

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	dbson "go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// snapFetch is a snapshot being fetched.
type snapFetch struct {
	index  uint64
	desc   *descriptor
	cancel context.CancelFunc
}

// syncProgress is the initial sync's progress (replSetGetStatus'
// initialSyncStatus).
type syncProgress struct {
	active        bool
	start         time.Time
	source        string
	records       int64
	recordsCopied int64
	bytesCopied   int64
	failed        int64
	attempts      []SyncAttempt
}

// SyncAttempt is one finished attempt of an initial sync.
type SyncAttempt struct {
	Start    time.Time
	Duration time.Duration
	Status   string // "OK" or the error
	Source   string
	Bytes    int64
	Records  int64
}

// InitialSyncStatus is what replSetGetStatus reports of the member's
// initial syncs (snapshots it fetched and installed).
type InitialSyncStatus struct {
	Active        bool
	Start         time.Time
	Elapsed       time.Duration
	Remaining     time.Duration // estimated from the records copied
	Source        string
	Records       int64 // the snapshot's records
	RecordsCopied int64
	BytesCopied   int64
	// ApproxTotalBytes is estimated from the bytes per record so far.
	ApproxTotalBytes int64
	Failed           int64
	Attempts         []SyncAttempt
}

// InitialSync returns the member's initial-sync status; false when the
// member never fetched a snapshot.
func (n *Node) InitialSync() (InitialSyncStatus, bool) {
	n.snap.mu.Lock()
	defer n.snap.mu.Unlock()
	p := n.snap.sync
	if !p.active && len(p.attempts) == 0 && p.failed == 0 {
		return InitialSyncStatus{}, false
	}
	st := InitialSyncStatus{Active: p.active, Start: p.start, Source: p.source, Records: p.records,
		RecordsCopied: p.recordsCopied, BytesCopied: p.bytesCopied, Failed: p.failed,
		Attempts: append([]SyncAttempt(nil), p.attempts...)}
	if p.active {
		st.Elapsed = time.Since(p.start)
		if p.recordsCopied > 0 && p.records > p.recordsCopied {
			per := st.Elapsed / time.Duration(p.recordsCopied)
			st.Remaining = per * time.Duration(p.records-p.recordsCopied)
		}
	}
	if p.recordsCopied > 0 {
		st.ApproxTotalBytes = p.bytesCopied * max(p.records, p.recordsCopied) / p.recordsCopied
	}
	return st, true
}

// syncing reports whether the member serves no reads: it holds no copy of
// the set's data yet, or fetches a snapshot (Node.mu may be held).
func (n *Node) syncing() bool {
	n.snap.mu.Lock()
	defer n.snap.mu.Unlock()
	return !n.snap.synced || n.snap.fetch != nil
}

// receiveSnapshot starts fetching the data of the snapshot m carries.
func (n *Node) receiveSnapshot(m *pb.Message) {
	d, err := decodeDescriptor(m.GetSnapshot().GetData())
	if err != nil {
		n.opts.Log.Warn("Ignored a malformed snapshot", "c", "REPL", "error", err.Error())
		return
	}
	select {
	case <-n.stopc:
		return
	default:
	}
	n.snap.mu.Lock()
	if f := n.snap.fetch; f != nil {
		if f.index >= d.Index {
			n.snap.mu.Unlock()
			return // fetching it, or a later one
		}
		f.cancel()
	}
	if _, ok := n.snap.staged[d.Index]; ok {
		n.snap.mu.Unlock()
		n.stepSnapshot(m) // fetched already: raft sent it again
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &snapFetch{index: d.Index, desc: d, cancel: cancel}
	n.snap.fetch = f
	n.snap.sync = syncProgress{active: true, start: time.Now(), source: d.Host, records: d.Records,
		failed: n.snap.sync.failed, attempts: n.snap.sync.attempts}
	n.snap.mu.Unlock()
	n.opts.Log.Info("Initial sync: fetching a snapshot", "c", "INITSYNC", "syncSource", d.Host,
		"index", d.Index, "records", d.Records)
	go n.fetchSnapshot(ctx, f, m)
}

func (n *Node) fetchSnapshot(ctx context.Context, f *snapFetch, m *pb.Message) {
	defer f.cancel()
	go func() {
		select {
		case <-n.stopc:
			f.cancel()
		case <-ctx.Done():
		}
	}()
	path, err := n.fetchTo(ctx, f.desc)
	n.snap.mu.Lock()
	if n.snap.fetch == f {
		n.snap.fetch = nil
	}
	if err != nil {
		n.snap.stats.FetchFailures++
		p := &n.snap.sync
		p.failed++
		p.active = false
		p.attempts = append(p.attempts, SyncAttempt{Start: p.start, Duration: time.Since(p.start), Status: err.Error(),
			Source: p.source, Bytes: p.bytesCopied, Records: p.recordsCopied})
		n.snap.mu.Unlock()
		if path != "" {
			_ = os.Remove(path)
		}
		n.opts.Log.Warn("Initial sync attempt failed", "c", "INITSYNC", "syncSource", f.desc.Host, "error", err.Error())
		return
	}
	n.snap.staged[f.index] = path
	n.snap.mu.Unlock()
	n.stepSnapshot(m)
}

func (n *Node) stepSnapshot(m *pb.Message) {
	if err := n.node.Step(context.Background(), m); err != nil && !errors.Is(err, raft.ErrStopped) {
		n.opts.Log.Warn("Cannot step a snapshot", "c", "REPL", "error", err.Error())
	}
}

// chunkReply is a _raftSnapshot reply.
type chunkReply struct {
	Segments []struct {
		T string `bson:"t"`
		D []byte `bson:"d"`
	} `bson:"segments"`
	Tree    int32  `bson:"tree"`
	After   []byte `bson:"after"`
	Done    bool   `bson:"done"`
	Records int64  `bson:"records"`
}

// fetchTo fetches snapshot d's records into a staging file and returns
// its path.
func (n *Node) fetchTo(ctx context.Context, d *descriptor) (string, error) {
	dir := n.opts.Snapshots.TempDir
	if dir == "" {
		dir = os.TempDir()
	}
	file, err := os.CreateTemp(dir, "raft-snapshot-*")
	if err != nil {
		return "", fmt.Errorf("staging the snapshot: %w", err)
	}
	path := file.Name()
	defer file.Close()
	w := bufio.NewWriterSize(file, 1<<20)
	client, err := mongo.Connect(memberClientOptions(d.Host, n.memberAuth()))
	if err != nil {
		return path, err
	}
	defer func() { _ = client.Disconnect(context.Background()) }()
	var tree int32
	var after []byte
	for {
		cmd := dbson.D{{Key: SnapshotCommand, Value: d.ID}, {Key: "setName", Value: n.Config().Name},
			{Key: "tree", Value: tree}, {Key: "after", Value: dbson.Binary{Data: after}}}
		var reply chunkReply
		for try := 0; ; try++ {
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			err = client.Database("admin").RunCommand(cctx, cmd).Decode(&reply)
			cancel()
			var ce mongo.CommandError
			if err == nil || asCommandError(err, &ce) || try >= 5 || ctx.Err() != nil {
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Duration(try+1) * 200 * time.Millisecond):
			}
		}
		if err != nil {
			return path, fmt.Errorf("fetching a snapshot chunk from %s: %w", d.Host, err)
		}
		var size int64
		for _, s := range reply.Segments {
			if err := writeSegment(w, s.T, s.D); err != nil {
				return path, fmt.Errorf("staging the snapshot: %w", err)
			}
			size += int64(len(s.D))
		}
		n.snap.mu.Lock()
		n.snap.sync.bytesCopied += size
		n.snap.sync.recordsCopied += reply.Records
		n.snap.mu.Unlock()
		if reply.Done {
			break
		}
		tree, after = reply.Tree, reply.After
	}
	if err := w.Flush(); err != nil {
		return path, fmt.Errorf("staging the snapshot: %w", err)
	}
	return path, nil
}

// writeSegment stages a segment: uvarint name length, name, uvarint data
// length, data.
func writeSegment(w *bufio.Writer, name string, data []byte) error {
	w.Write(binary.AppendUvarint(nil, uint64(len(name))))
	w.WriteString(name)
	w.Write(binary.AppendUvarint(nil, uint64(len(data))))
	_, err := w.Write(data)
	return err
}

// recordReader reads a staged snapshot's records.
type recordReader struct {
	r    *bufio.Reader
	name string
	data []byte
	// empty: the segment held is an empty tree's (no records), which the
	// installer creates and then drops (took).
	empty bool
	err   error
	eof   bool
}

// load makes the reader hold a segment with records left, or an empty
// tree's segment (false at the end, or on an error in r.err).
func (r *recordReader) load() bool {
	for len(r.data) == 0 && !r.empty {
		if r.eof || r.err != nil {
			return false
		}
		nl, err := binary.ReadUvarint(r.r)
		if err == io.EOF {
			r.eof = true
			return false
		}
		if err != nil || nl > 4096 {
			r.err = fmt.Errorf("a staged snapshot is damaged (segment name: %v)", err)
			return false
		}
		name := make([]byte, nl)
		if _, err := io.ReadFull(r.r, name); err != nil {
			r.err = fmt.Errorf("a staged snapshot is damaged: %w", err)
			return false
		}
		dl, err := binary.ReadUvarint(r.r)
		if err != nil || dl > 1<<30 {
			r.err = fmt.Errorf("a staged snapshot is damaged (segment size: %v)", err)
			return false
		}
		data := make([]byte, dl)
		if _, err := io.ReadFull(r.r, data); err != nil {
			r.err = fmt.Errorf("a staged snapshot is damaged: %w", err)
			return false
		}
		r.name, r.data, r.empty = string(name), data, dl == 0
	}
	return true
}

// took drops the empty tree's segment held (see empty).
func (r *recordReader) took() { r.empty = false }

func (r *recordReader) field() []byte {
	l, k := binary.Uvarint(r.data)
	if k <= 0 || uint64(len(r.data)-k) < l {
		r.err = errors.New("a staged snapshot is damaged (record)")
		r.data = nil
		return nil
	}
	f := r.data[k : k+int(l) : k+int(l)]
	r.data = r.data[k+int(l):]
	return f
}

// next returns the next record of tree name (false when the next record
// is another tree's, or there is none).
func (r *recordReader) next(name string) (key, value []byte, ok bool, err error) {
	if !r.load() || r.name != name || r.empty {
		return nil, nil, false, r.err
	}
	key = r.field()
	value = r.field()
	if r.err != nil {
		return nil, nil, false, r.err
	}
	return key, value, true, nil
}

// installSnapshot makes the member's data the staged snapshot's (see the
// top of the file).
func (n *Node) installSnapshot(ctx context.Context, snap *pb.Snapshot) error {
	index := snap.GetMetadata().GetIndex()
	d, err := decodeDescriptor(snap.GetData())
	if err != nil {
		return err
	}
	cfg, err := repl.ParseConfig(d.Config)
	if err != nil {
		return fmt.Errorf("the snapshot's configuration: %w", err)
	}
	n.snap.mu.Lock()
	path := n.snap.staged[index]
	n.snap.mu.Unlock()
	if path == "" {
		return fmt.Errorf("raftrepl: the data of snapshot %d was not fetched", index)
	}
	start := time.Now()
	file, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("raftrepl: reading the staged snapshot: %w", err)
	}
	defer file.Close()
	last, err := n.installData(ctx, snap, d, &recordReader{r: bufio.NewReaderSize(file, 1<<20)})
	if err != nil {
		return fmt.Errorf("raftrepl: installing snapshot %d: %w", index, err)
	}
	if err := n.mem.ApplySnapshot(snap); err != nil && !errors.Is(err, raft.ErrSnapOutOfDate) {
		return err
	}
	if n.opts.StoreConfig != nil {
		if err := n.opts.StoreConfig(cfg); err != nil {
			return err
		}
	}
	n.mu.Lock()
	n.applied, n.commitTS, n.commitWall, n.cfg = index, d.Commit, d.Wall, cfg
	close(n.commitCh)
	n.commitCh = make(chan struct{})
	n.mu.Unlock()
	n.tr.setPeers(hostsOf(cfg))
	n.opts.Set.Install(cfg)
	n.opts.Set.NoteApplied(last, d.Wall)
	_ = file.Close()
	_ = os.Remove(path)
	n.snap.mu.Lock()
	for i, p := range n.snap.staged {
		if i <= index {
			if p != path {
				_ = os.Remove(p)
			}
			delete(n.snap.staged, i)
		}
	}
	n.snap.synced = true
	n.snap.compacted = index
	n.snap.stats.SnapshotsFetched++
	p := &n.snap.sync
	n.snap.stats.BytesFetched += p.bytesCopied
	dur := time.Since(p.start)
	p.active = false
	p.attempts = append(p.attempts, SyncAttempt{Start: p.start, Duration: dur, Status: "OK", Source: p.source,
		Bytes: p.bytesCopied, Records: p.recordsCopied})
	bytesCopied, records := p.bytesCopied, p.recordsCopied
	n.snap.mu.Unlock()
	if n.opts.Restored != nil {
		n.opts.Restored()
	}
	mbps := 0.0
	if s := dur.Seconds(); s > 0 {
		mbps = float64(bytesCopied) / (1 << 20) / s
	}
	n.opts.Log.Info("Initial sync done", "c", "INITSYNC", "syncSource", d.Host, "index", index, "records", records,
		"bytes", bytesCopied, "durationMillis", dur.Milliseconds(), "installMillis", time.Since(start).Milliseconds(),
		"MBps", fmt.Sprintf("%.1f", mbps))
	return nil
}

// installData writes the snapshot's records in one transaction and
// returns the last ts of the oplog it installed.
func (n *Node) installData(ctx context.Context, snap *pb.Snapshot, d *descriptor, r *recordReader) (repl.Timestamp, error) {
	tx, err := n.opts.DB.BeginWrite(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	locals, _, err := localTrees(tx)
	if err != nil {
		return 0, err
	}
	var drop []string
	err = tx.ForEachTree(func(name string) error {
		if name != raftTree && name != oplog.MetaTreeName && name != catalog.TreeName && !isLocalTree(name, locals) {
			drop = append(drop, name)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, name := range drop {
		if err := tx.DropTree(name); err != nil {
			return 0, fmt.Errorf("dropping %q: %w", name, err)
		}
	}
	cat, err := tx.CreateTreeIfNotExists(catalog.TreeName)
	if err != nil {
		return 0, err
	}
	var stale [][]byte
	cur := cat.Cursor()
	for k, _ := cur.First(); k != nil; k, _ = cur.Next() {
		if !strings.HasPrefix(string(k), "local.") {
			stale = append(stale, append([]byte(nil), k...))
		}
	}
	if err := cur.Err(); err != nil {
		return 0, err
	}
	for _, k := range stale {
		if _, err := cat.Delete(k); err != nil {
			return 0, err
		}
	}
	oplogDone := false
	for r.load() {
		name := r.name
		if r.empty {
			// A tree with no records (a collection not written to yet).
			r.took()
			if name == catalog.TreeName || name == oplogSegment {
				continue
			}
			if _, err := tx.CreateTreeIfNotExists(name); err != nil {
				return 0, fmt.Errorf("creating %q: %w", name, err)
			}
			continue
		}
		switch name {
		case catalog.TreeName:
			for {
				k, v, ok, err := r.next(name)
				if err != nil {
					return 0, err
				}
				if !ok {
					break
				}
				if err := cat.Put(k, v); err != nil {
					return 0, err
				}
			}
		case oplogSegment:
			err := n.opts.Oplog.ReplaceEntries(tx, func() (repl.Timestamp, bson.Doc, bool, error) {
				k, v, ok, err := r.next(name)
				if !ok || err != nil {
					return 0, nil, false, err
				}
				if len(k) != 8 {
					return 0, nil, false, errors.New("an oplog key is not 8 bytes")
				}
				return repl.Timestamp(binary.BigEndian.Uint64(k)), bson.Doc(v), true, nil
			})
			if err != nil {
				return 0, err
			}
			oplogDone = true
		default:
			if _, err := tx.BulkLoad(name, func() ([]byte, []byte, bool, error) { return r.next(name) }, 0); err != nil {
				return 0, err
			}
		}
	}
	if r.err != nil {
		return 0, r.err
	}
	if !oplogDone {
		err := n.opts.Oplog.ReplaceEntries(tx, func() (repl.Timestamp, bson.Doc, bool, error) { return 0, nil, false, nil })
		if err != nil {
			return 0, err
		}
	}
	last, _, _, err := oplog.Last(tx)
	if err != nil {
		return 0, err
	}
	rt, err := tx.CreateTreeIfNotExists(raftTree)
	if err != nil {
		return 0, err
	}
	if _, err := rt.DeleteRange(entryKey(0), entryKey(^uint64(0))); err != nil {
		return 0, err
	}
	md := snap.GetMetadata()
	if err := putSnapMeta(rt, md.GetIndex(), md.GetTerm(), uint64(d.Commit)); err != nil {
		return 0, err
	}
	if err := putConf(tx, md.GetConfState()); err != nil {
		return 0, err
	}
	if err := putApplied(tx, md.GetIndex()); err != nil {
		return 0, err
	}
	if err := tx.CommitWith(kv.Sync); err != nil {
		return 0, err
	}
	return last, nil
}
