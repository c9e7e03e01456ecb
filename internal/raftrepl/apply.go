package raftrepl

// Applying the committed log, and shipping the primary's oplog into it.
//
// An entry of kind entryOps holds oplog entries, BSON documents one after
// the other, in ts order. Every member applies every committed entry, in
// log order, from the Ready loop: each oplog entry whose ts its own oplog
// does not hold yet is applied to the member's data and written to its
// oplog as it is (the primary's ts, t and wall), in one kv transaction
// together with the applied index; one it holds already (the primary's
// own, or one applied before a restart) is skipped, so applying is
// idempotent. A DDL entry runs its command through the command layer
// (Options.ApplyCommand) with the oplog replaying the primary's entry in
// place of the command's own (oplog.Log.Replay).
//
// The shipper runs on the primary: it reads its oplog after the last ts
// the committed log covers and proposes what it finds, in batches of up
// to maxShip bytes, as soon as a write's commit is published (a kv watch
// of the oplog tree wakes it). kv publishes a commit before its journal
// flush, so the proposal, the leader's log write and the followers' run
// while the primary's own flush of the write is under way, rather than
// after it. That is safe: kv makes commits durable in commit order, so
// the leader's log write (kv.Sync, after the write's commit) makes the
// write durable too; an entry Raft commits with the two followers alone
// is in a majority's logs, and a primary that crashed before its flush
// gets it back from the log like any member missing an entry; and the
// writer itself still waits for its flush (w: "majority" commits with
// kv.Sync) before it waits for the commit point. A write is acknowledged
// w: 1 once it is in the primary's data (as mongod's) and w: "majority"
// once Raft commits the entry carrying it. On becoming primary a member
// reships whatever its oplog holds beyond the committed log (entries of
// an earlier term of its own that never committed); members that hold
// them already skip them.

import (
	"context"
	"fmt"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

const (
	entryOps = 'o'
	// maxShip bounds one proposal's oplog entries.
	maxShip = 512 << 10
)

// lastTS returns the ts of the last oplog entry in an entryOps payload.
func lastTS(data []byte) repl.Timestamp {
	var last repl.Timestamp
	eachDoc(data[1:], func(d bson.Doc) bool {
		last = docTS(d)
		return true
	})
	return last
}

func eachDoc(b []byte, fn func(bson.Doc) bool) {
	for len(b) >= 5 {
		n := int(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
		if n < 5 || n > len(b) {
			return
		}
		if !fn(bson.Doc(b[:n])) {
			return
		}
		b = b[n:]
	}
}

func docTS(d bson.Doc) repl.Timestamp {
	v, ok := d.Lookup("ts")
	if !ok || v.Type != bson.TypeTimestamp {
		return 0
	}
	t, i := v.Timestamp()
	return repl.MakeTimestamp(t, i)
}

func docWall(d bson.Doc) time.Time {
	if v, ok := d.Lookup("wall"); ok && v.Type == bson.TypeDateTime {
		return time.UnixMilli(v.DateTime())
	}
	return time.Now()
}

// apply applies committed entries in order.
func (n *Node) apply(ctx context.Context, ents []*pb.Entry) error {
	for _, e := range ents {
		switch e.GetType() {
		case pb.EntryNormal:
			if len(e.Data) > 0 && e.Data[0] == entryOps {
				if err := n.applyOps(ctx, e.GetIndex(), e.Data[1:]); err != nil {
					return fmt.Errorf("applying log entry %d: %w", e.GetIndex(), err)
				}
			}
		case pb.EntryConfChange:
			cc := &pb.ConfChange{}
			if err := proto.Unmarshal(e.Data, cc); err != nil {
				return fmt.Errorf("log entry %d: %w", e.GetIndex(), err)
			}
			if err := n.applyConf(ctx, cc); err != nil {
				return fmt.Errorf("applying configuration entry %d: %w", e.GetIndex(), err)
			}
		}
		n.mu.Lock()
		n.applied = e.GetIndex()
		n.mu.Unlock()
	}
	n.appliedAll(ents)
	return nil
}

// appliedAll wakes the waits on the applied index once ents are applied.
func (n *Node) appliedAll(ents []*pb.Entry) {
	if len(ents) > 0 {
		n.mu.Lock()
		close(n.commitCh) // ReadIndex waits on the applied index
		n.commitCh = make(chan struct{})
		n.mu.Unlock()
	}
}

// applyConf applies a membership change and installs the configuration
// it carries (in its Context).
func (n *Node) applyConf(ctx context.Context, cc *pb.ConfChange) error {
	cs := n.node.ApplyConfChange(cc)
	var next *repl.Config
	if len(cc.Context) > 0 {
		cfg, err := repl.ParseConfig(bson.Doc(cc.Context))
		if err != nil {
			return err
		}
		next = cfg
	}
	err := n.opts.DB.Update(ctx, func(tx *kv.Tx) error { return putConf(tx, cs) })
	if err != nil {
		return err
	}
	if next == nil {
		return nil
	}
	if n.opts.StoreConfig != nil {
		if err := n.opts.StoreConfig(next); err != nil {
			return err
		}
	}
	n.mu.Lock()
	n.cfg = next
	n.mu.Unlock()
	n.tr.setPeers(hostsOf(next))
	n.opts.Set.Install(next)
	n.opts.Log.Info("New replica set config in use", "c", "REPL", "id", 21392, "version", next.Version, "members", len(next.Members))
	return nil
}

// applyOps applies the oplog entries of log entry index.
func (n *Node) applyOps(ctx context.Context, index uint64, data []byte) error {
	docs := splitDocs(data)
	if len(docs) == 0 {
		return nil
	}
	last := docs[len(docs)-1]
	// Fast path (the primary's own entries): all held already. Only a
	// member that took writes holds entries before it applies them
	// (besides those re-delivered after a restart, which applyDocs skips
	// one by one), so a secondary does not read them twice.
	n.mu.Lock()
	writable := n.writable
	n.mu.Unlock()
	if writable {
		held, err := n.holdsAll(docs)
		if err != nil {
			return err
		}
		if held {
			n.noteOps(index, last, false)
			return nil
		}
	}
	wrote, err := n.applyDocs(ctx, index, docs)
	if err != nil {
		return err
	}
	n.noteOps(index, last, wrote)
	return nil
}

// splitDocs returns the oplog entries of an entryOps payload (after its
// kind byte).
func splitDocs(data []byte) []bson.Doc {
	var docs []bson.Doc
	eachDoc(data, func(d bson.Doc) bool { docs = append(docs, d); return true })
	return docs
}

// holdsAll reports whether the member's oplog holds every one of docs.
func (n *Node) holdsAll(docs []bson.Doc) (bool, error) {
	held := true
	err := n.opts.DB.View(func(tx *kv.Tx) error {
		for _, d := range docs {
			ok, err := oplog.Has(tx, docTS(d))
			if err != nil {
				return err
			}
			if !ok {
				held = false
				return nil
			}
		}
		return nil
	})
	return held, err
}

// noteOps moves the commit point to the last oplog entry of log entry
// index, once what applying it wrote is committed (wrote: it was not held).
func (n *Node) noteOps(index uint64, last bson.Doc, wrote bool) {
	if wrote {
		n.opts.Set.NoteApplied(docTS(last), docWall(last))
	}
	n.mu.Lock()
	if ts := docTS(last); ts > n.commitTS {
		n.commitTS, n.commitWall = ts, docWall(last)
	}
	for len(n.proposed) > 0 && n.proposed[0].index <= index {
		n.proposed = n.proposed[1:]
	}
	close(n.commitCh)
	n.commitCh = make(chan struct{})
	n.mu.Unlock()
}

// applyDocs writes the entries a member does not hold: document changes in
// one transaction per run between DDL entries, DDL through the command
// layer. It reports whether it applied any.
func (n *Node) applyDocs(ctx context.Context, index uint64, docs []bson.Doc) (bool, error) {
	wrote := false
	for len(docs) > 0 {
		if isDDL(docs[0]) {
			ok, err := n.applyDDL(ctx, docTS(docs[0]), docs[0])
			if err != nil {
				return wrote, err
			}
			wrote = wrote || ok
			docs = docs[1:]
			continue
		}
		run := 1
		for run < len(docs) && !isDDL(docs[run]) {
			run++
		}
		ok, err := n.applyRun(ctx, index, docs[:run])
		if err != nil {
			return wrote, err
		}
		wrote = wrote || ok
		docs = docs[run:]
	}
	return wrote, nil
}

// applyRun applies document entries (no DDL) of log entry index in one
// transaction with the applied index, committed Lazy (the Raft log is the
// durable copy); nothing is committed when the member held them all.
func (n *Node) applyRun(ctx context.Context, index uint64, docs []bson.Doc) (bool, error) {
	tx, err := n.opts.DB.BeginWrite(ctx)
	if err != nil {
		return false, fmt.Errorf("applying log entry %d: %w", index, err)
	}
	defer tx.Rollback()
	wrote, err := n.writeDocs(tx, docs)
	if err != nil || !wrote {
		return false, err
	}
	if err := putApplied(tx, index); err != nil {
		return false, fmt.Errorf("recording the applied index %d: %w", index, err)
	}
	if err := tx.CommitWith(kv.Lazy); err != nil {
		return false, fmt.Errorf("applying log entry %d: %w", index, err)
	}
	return true, nil
}

// writeDocs applies, in tx, the document entries (no DDL) the member does
// not hold, each with its retryable write's record and its oplog entry as
// the primary wrote it; it reports whether it wrote any.
func (n *Node) writeDocs(tx *kv.Tx, docs []bson.Doc) (bool, error) {
	wrote := false
	for _, d := range docs {
		ts := docTS(d)
		ok, err := oplog.Has(tx, ts)
		if err != nil {
			return wrote, err
		}
		if ok {
			continue
		}
		pre, post, err := applyOp(tx, d)
		if err != nil {
			return wrote, fmt.Errorf("applying %s: %w", d, err)
		}
		if err := recordStatement(tx, d, pre, post); err != nil {
			return wrote, fmt.Errorf("recording the retryable write of %s: %w", d, err)
		}
		if err := n.opts.Oplog.PutRaw(tx, ts, d); err != nil {
			return wrote, err
		}
		wrote = true
	}
	return wrote, nil
}

// isDDL reports an entry applied by running its command: op "c" other
// than a transaction's applyOps.
func isDDL(d bson.Doc) bool {
	op, _ := d.Lookup("op")
	if op.Type != bson.TypeString || op.StringValue() != "c" {
		return false
	}
	o, _ := d.Lookup("o")
	if o.Type != bson.TypeDocument {
		return false
	}
	it := o.Document().Iter()
	return it.Next() && it.Element().Key != "applyOps"
}

// applyDDL runs a DDL entry's command with the oplog replaying the entry;
// it reports false when the member held the entry already.
func (n *Node) applyDDL(ctx context.Context, ts repl.Timestamp, d bson.Doc) (bool, error) {
	held := false
	if err := n.opts.DB.View(func(tx *kv.Tx) error {
		var err error
		held, err = oplog.Has(tx, ts)
		return err
	}); err != nil || held {
		return false, err
	}
	ns, _ := d.Lookup("ns")
	o, _ := d.Lookup("o")
	db, _, _ := cutDot(ns.StringValue())
	cmd, skip := ddlCommand(o.Document())
	if !skip {
		if it := cmd.Iter(); it.Next() && it.Element().Key == "renameCollection" {
			db = "admin" // renameCollection runs on admin only
		}
	}
	if !skip {
		done := n.opts.Oplog.Replay(ts, d)
		err := n.opts.ApplyCommand(ctx, db, cmd)
		done()
		if err != nil {
			n.opts.Log.Warn("Applying a DDL entry failed", "c", "REPL", "ns", ns.StringValue(), "o", o.Document().String(), "error", err.Error())
		}
	}
	// The command may have written no entry (it failed, or wrote none):
	// the entry is written now, so that the oplog holds it.
	err := n.opts.DB.Update(ctx, func(tx *kv.Tx) error {
		ok, err := oplog.Has(tx, ts)
		if err != nil || ok {
			return err
		}
		return n.opts.Oplog.PutRaw(tx, ts, d)
	})
	return true, err
}

// ddlCommand is the command a DDL entry's o runs: the entry's own shape
// for create, drop, collMod, dropDatabase, dropIndexes and
// renameCollection; an index build's commitIndexBuild is createIndexes
// with its specs; startIndexBuild and abortIndexBuild run nothing.
func ddlCommand(o bson.Doc) (bson.Doc, bool) {
	it := o.Iter()
	if !it.Next() {
		return nil, true
	}
	first := it.Element()
	switch first.Key {
	case "startIndexBuild", "abortIndexBuild":
		return nil, true
	case "commitIndexBuild":
		var b bson.Builder
		b.AppendString("createIndexes", first.Value.StringValue())
		if v, ok := o.Lookup("indexes"); ok {
			b.AppendValue("indexes", v)
		}
		return b.Finish(), false
	case "createIndexes":
		// {createIndexes: coll, <spec>}: one index.
		var b bson.Builder
		b.AppendString("createIndexes", first.Value.StringValue())
		b.StartArray("indexes")
		b.StartDocument("0")
		for it.Next() {
			b.AppendElement(it.Element())
		}
		b.End()
		b.End()
		return b.Finish(), false
	case "renameCollection":
		var b bson.Builder
		b.AppendElement(first)
		for it.Next() {
			if e := it.Element(); e.Key == "to" || e.Key == "stayTemp" {
				b.AppendElement(e)
			}
		}
		b.AppendBool("dropTarget", true)
		return b.Finish(), false
	case "create":
		var b bson.Builder
		b.AppendElement(first)
		for it.Next() {
			if e := it.Element(); e.Key != "idIndex" {
				b.AppendElement(e)
			}
		}
		return b.Finish(), false
	}
	return o, false
}

func cutDot(ns string) (db, coll string, ok bool) {
	for i := 0; i < len(ns); i++ {
		if ns[i] == '.' {
			return ns[:i], ns[i+1:], true
		}
	}
	return ns, "", false
}

// applyOp applies one document entry (or a transaction's applyOps) in tx,
// without logging it (the caller writes the entry as it is). It returns
// the document before and after the change (nil: none), the images a
// retryable findAndModify's record keeps.
func applyOp(tx *kv.Tx, d bson.Doc) (pre, post bson.Doc, err error) {
	op, _ := d.Lookup("op")
	ns, _ := d.Lookup("ns")
	o, _ := d.Lookup("o")
	if op.Type != bson.TypeString {
		return nil, nil, fmt.Errorf("no op")
	}
	switch op.StringValue() {
	case "n":
		return nil, nil, nil
	case "c":
		ops, ok := o.Document().Lookup("applyOps")
		if !ok || ops.Type != bson.TypeArray {
			return nil, nil, fmt.Errorf("unexpected command entry")
		}
		it := ops.Document().Iter()
		for it.Next() {
			if _, _, err := applyOp(tx, it.Element().Value.Document()); err != nil {
				return nil, nil, err
			}
		}
		return nil, nil, nil
	}
	db, coll, _ := cutDot(ns.StringValue())
	c, err := exec.CollectionForWrite(tx, db, coll, op.StringValue() == "i", nil)
	if err != nil {
		return nil, nil, err
	}
	if c == nil {
		return nil, nil, nil // dropped since: nothing to change
	}
	w, err := exec.OpenWriter(tx, c)
	if err != nil {
		return nil, nil, err
	}
	w.Bypass = true
	switch op.StringValue() {
	case "i":
		doc := o.Document()
		id, _ := doc.Lookup("_id")
		key, old, err := exec.LookupID(tx, c, w.Data, nil, id)
		if err != nil {
			return nil, nil, err
		}
		if old != nil {
			return nil, doc, w.Replace(key, bson.Doc(append([]byte(nil), old...)), doc)
		}
		_, _, err = w.Insert(doc)
		return nil, doc, err
	case "u":
		o2, _ := d.Lookup("o2")
		id, _ := o2.Document().Lookup("_id")
		key, old, err := exec.LookupID(tx, c, w.Data, nil, id)
		if err != nil || old == nil {
			return nil, nil, err
		}
		prev := bson.Doc(append([]byte(nil), old...))
		next := o.Document()
		if diff, ok := next.Lookup("diff"); ok {
			if v, _ := next.Lookup("$v"); v.IsNumber() {
				if next, err = oplog.ApplyDiff(prev, diff.Document()); err != nil {
					return nil, nil, err
				}
			}
		}
		return prev, next, w.Replace(key, prev, next)
	case "d":
		id, _ := o.Document().Lookup("_id")
		key, old, err := exec.LookupID(tx, c, w.Data, nil, id)
		if err != nil || old == nil {
			return nil, nil, err
		}
		prev := bson.Doc(append([]byte(nil), old...))
		return prev, nil, w.Remove(key, prev)
	}
	return nil, nil, fmt.Errorf("unknown op %q", op.StringValue())
}

// ship proposes the primary's oplog entries (see the top of the file).
func (n *Node) ship() {
	defer n.wg.Done()
	var shipped repl.Timestamp
	wasPrimary := false
	// The oplog tree's watch wakes the shipper when a commit publishes,
	// before that commit's journal flush (see the top of the file).
	w := n.opts.DB.WatchTree(n.opts.Oplog.TreeName())
	defer w.Cancel()
	for {
		n.mu.Lock()
		primary, commit, c := n.primary, n.commitTS, n.commitCh
		n.mu.Unlock()
		if !primary {
			wasPrimary = false
			select {
			case <-c:
			case <-time.After(20 * time.Millisecond):
			case <-n.stopc:
				return
			}
			continue
		}
		if !wasPrimary {
			shipped, wasPrimary = commit, true
		}
		w.Rearm() // before the read: a commit after it closes w.C()
		next, err := n.shipFrom(shipped)
		if err != nil {
			n.opts.Log.Error("Reading the oplog to replicate it failed", "c", "REPL", "error", err.Error())
		}
		if next > shipped {
			shipped = next
			continue
		}
		select {
		case <-w.C():
		case <-c:
		case <-time.After(50 * time.Millisecond):
		case <-n.stopc:
			return
		}
	}
}

// shipFrom proposes the entries after from; it returns the last ts
// proposed (from when none).
func (n *Node) shipFrom(from repl.Timestamp) (repl.Timestamp, error) {
	buf := []byte{entryOps}
	last := from
	err := n.opts.DB.View(func(tx *kv.Tx) error {
		r, err := oplog.Entries(tx, from+1)
		if err != nil {
			return err
		}
		for r.Next() && len(buf) < maxShip {
			buf = append(buf, r.Entry()...)
			last = r.TS()
		}
		return r.Err()
	})
	if err != nil || last == from {
		return from, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n.node.Propose(ctx, buf); err != nil {
		return from, nil // not leader any more, or stopped: the loop sees it
	}
	return last, nil
}
