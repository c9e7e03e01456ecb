package raftrepl

// Rollback: taking back the writes a primary committed locally that the
// set did not commit.
//
// A primary commits a write to its own kv first (w: 1 is acknowledged
// then, as mongod's) and proposes its oplog entry afterwards (apply.go's
// shipper). If it loses its leadership before Raft commits that entry, the
// new leader's log may never hold it: kept, it would make the member's
// data differ from the set's forever, and since a member skips an entry
// whose ts it holds, it could even skip a different entry of the new
// primary stamped with the same ts. So a member takes back every write it
// holds that the set has not committed before it applies any entry of a
// later term:
//
//   - While the member is primary, every entry it writes has an undo
//     record written in the same kv transaction (internal/oplog/undo.go:
//     the document an update or delete replaced). The records up to the
//     commit point are dropped as Raft commits them (prune), together with
//     the applied index, so the records are the entries not known
//     committed.
//   - When the member stops being primary (it lost the leadership, or the
//     term changed under it), the Ready loop, before applying the Ready's
//     committed entries: fences the oplog (an Append after this point
//     fails NotWritablePrimary; a transaction that appended before holds
//     kv's writer, so it commits before the rollback's own transactions
//     begin), bumps the rollback epoch, and takes back every entry above
//     the commit point newest first: an insert is removed, an update or a
//     delete puts the old document back, a transaction's applyOps undoes
//     its operations in reverse, a create drops the collection, an index
//     build drops the index (the commands run with the oplog quiet); each
//     entry, its undo record, its pre-images and the retryable-write or
//     transaction record of its session (Options.OnRollback) go in the
//     same transaction. Entries the set did commit after all (the new
//     leader held them) come back as committed entries and are applied
//     like any other: the member's data is the committed log's, no more.
//   - At start, before Raft runs, a member takes back every entry that
//     still has an undo record (it crashed, or was killed, between its
//     local commit and the set's): the records never outlive the applied
//     index they were pruned with, so every one of those entries the set
//     committed is at a log index Raft delivers again.
//
// A write waiting for w: "majority" (WaitCommitted) and a majority or
// linearizable read (ReadCommitted) carry the epoch they started in: a
// commit point that passes their ts after a rollback they did not see
// proves nothing (the new primary may have stamped another write with
// the same ts), so they succeed only when their ts was at or under the
// commit point of every rollback since their epoch.
//
// What cannot be taken back: a drop, dropDatabase, renameCollection,
// collMod or dropIndexes the set did not commit (their data is gone or
// their previous options are not recorded). Such an entry is logged at
// error level, counted (Status.RollbackFailures) and left; the member's
// data then differs from the set's until it is resynced
// (docs/compatibility.md).

import (
	"context"
	"fmt"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
)

const (
	// rollbackBatch bounds the entries one rollback transaction takes
	// back.
	rollbackBatch = 512
	// pruneEvery spaces the primary's transactions that drop the undo
	// records the commit point passed.
	pruneEvery = 20 * time.Millisecond
	// keepMarks is how many rollbacks a waiter can be checked against;
	// one that started before older ones fails (it is that old).
	keepMarks = 64
)

// rollbackMark records one rollback: the epoch it ended and the commit
// point under which entries were known committed.
type rollbackMark struct {
	epoch uint64
	floor repl.Timestamp
}

// Epoch returns the member's rollback epoch: a write or read records it
// before it starts and passes it to WaitCommitted or ReadCommitted.
func (n *Node) Epoch() uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.epoch
}

// survived reports whether ts, written or read in epoch, is still known
// committed as far as the rollbacks since go (n.mu held).
func (n *Node) survived(ts repl.Timestamp, epoch uint64) bool {
	if epoch == n.epoch {
		return epoch%2 == 0
	}
	if n.epoch%2 == 1 {
		return false // a rollback is under way
	}
	if len(n.marks) == keepMarks && n.marks[0].epoch > epoch+2 {
		return false // a rollback since epoch is forgotten
	}
	for _, m := range n.marks {
		if m.epoch > epoch && ts > m.floor {
			return false
		}
	}
	return true
}

// rollBackUncommitted stops the member from accepting writes and takes
// back everything above the commit point (from the Ready loop).
func (n *Node) rollBackUncommitted(ctx context.Context) error {
	n.opts.Oplog.Fence(true)
	n.mu.Lock()
	floor := n.commitTS
	n.epoch++ // odd: rolling back
	n.writable, n.primary = false, false
	close(n.commitCh)
	n.commitCh = make(chan struct{})
	term, host := int64(n.term), n.leadHostLocked()
	n.mu.Unlock()
	n.opts.Set.Become(repl.StateSecondary, term, host, floor)
	undone, err := n.rollBack(ctx, floor)
	n.mu.Lock()
	n.epoch++
	n.marks = append(n.marks, rollbackMark{epoch: n.epoch, floor: floor})
	if len(n.marks) > keepMarks {
		n.marks = n.marks[1:]
	}
	n.proposed = nil
	n.mu.Unlock()
	if undone > 0 {
		n.opts.Log.Warn("Rolled back the writes the set did not commit", "c", "ROLLBACK", "entries", undone, "commonPoint", floor.String())
	}
	return err
}

// rollBack takes back the entries with undo records above floor, newest
// first, and drops the records up to floor; it returns how many it took
// back.
func (n *Node) rollBack(ctx context.Context, floor repl.Timestamp) (int, error) {
	var undos []oplog.Undo
	if err := n.opts.DB.View(func(tx *kv.Tx) error {
		var err error
		undos, err = oplog.Undos(tx, floor)
		return err
	}); err != nil {
		return 0, fmt.Errorf("raftrepl: reading the undo records: %w", err)
	}
	done := 0
	for len(undos) > 0 {
		// A batch of document entries in one transaction, newest first;
		// a DDL entry alone.
		i := len(undos) - 1
		if u := undos[i]; u.Entry != nil && isDDL(u.Entry) {
			if err := n.undoDDL(ctx, u); err != nil {
				return done, err
			}
			undos, done = undos[:i], done+1
			continue
		}
		lo := i
		for lo > 0 && i-lo < rollbackBatch && (undos[lo-1].Entry == nil || !isDDL(undos[lo-1].Entry)) {
			lo--
		}
		batch := undos[lo:]
		err := n.opts.DB.Update(ctx, func(tx *kv.Tx) error {
			for j := len(batch) - 1; j >= 0; j-- {
				if err := n.undoEntry(tx, batch[j]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return done, fmt.Errorf("raftrepl: rolling back: %w", err)
		}
		undos, done = undos[:lo], done+len(batch)
	}
	err := n.opts.DB.Update(ctx, func(tx *kv.Tx) error { return n.opts.Oplog.DropUndo(tx, floor) })
	if err != nil {
		return done, fmt.Errorf("raftrepl: dropping the undo records: %w", err)
	}
	var last repl.Timestamp
	var wall time.Time
	if err := n.opts.DB.View(func(tx *kv.Tx) error {
		ts, w, ok, err := oplog.Last(tx)
		if ok {
			last, wall = ts, time.UnixMilli(w)
		}
		return err
	}); err != nil {
		return done, err
	}
	n.opts.Set.RolledBack(last, wall)
	return done, nil
}

// undoEntry takes back one document entry (or a transaction) in tx and
// removes it from the oplog.
func (n *Node) undoEntry(tx *kv.Tx, u oplog.Undo) error {
	if u.Entry != nil {
		if err := undoOp(tx, u.Entry, u.Old, u.Olds); err != nil {
			return fmt.Errorf("taking back %s: %w", u.Entry, err)
		}
		if n.opts.OnRollback != nil {
			if err := n.opts.OnRollback(tx, u.Entry); err != nil {
				return err
			}
		}
	}
	return n.opts.Oplog.RollBack(tx, u.TS)
}

// undoOp takes back entry d: old is the document an update or delete
// replaced, olds a transaction's operations' ones.
func undoOp(tx *kv.Tx, d, old bson.Doc, olds []bson.Doc) error {
	op, _ := d.Lookup("op")
	ns, _ := d.Lookup("ns")
	o, _ := d.Lookup("o")
	if op.Type != bson.TypeString {
		return fmt.Errorf("no op")
	}
	switch op.StringValue() {
	case "n":
		return nil
	case "c":
		ops, ok := o.Document().Lookup("applyOps")
		if !ok || ops.Type != bson.TypeArray {
			return fmt.Errorf("unexpected command entry")
		}
		var each []bson.Doc
		it := ops.Document().Iter()
		for it.Next() {
			each = append(each, it.Element().Value.Document())
		}
		for i := len(each) - 1; i >= 0; i-- {
			var old bson.Doc
			if i < len(olds) {
				old = olds[i]
			}
			if err := undoOp(tx, each[i], old, nil); err != nil {
				return err
			}
		}
		return nil
	}
	db, coll, _ := cutDot(ns.StringValue())
	c, err := exec.CollectionForWrite(tx, db, coll, false, nil)
	if err != nil || c == nil {
		return err // dropped since: nothing to take back
	}
	w, err := exec.OpenWriter(tx, c)
	if err != nil {
		return err
	}
	w.Bypass = true
	var id bson.Value
	switch op.StringValue() {
	case "i":
		o2, ok := d.Lookup("o2")
		if ok && o2.Type == bson.TypeDocument {
			id, _ = o2.Document().Lookup("_id")
		} else {
			id, _ = o.Document().Lookup("_id")
		}
	case "u":
		o2, _ := d.Lookup("o2")
		id, _ = o2.Document().Lookup("_id")
	case "d":
		id, _ = o.Document().Lookup("_id")
	default:
		return fmt.Errorf("unknown op %q", op.StringValue())
	}
	key, cur, err := exec.LookupID(tx, c, w.Data, nil, id)
	if err != nil {
		return err
	}
	var prev bson.Doc
	if cur != nil {
		prev = bson.Doc(append([]byte(nil), cur...))
	}
	switch {
	case op.StringValue() == "i":
		if prev == nil {
			return nil
		}
		return w.Remove(key, prev)
	case old == nil:
		return fmt.Errorf("no old document recorded")
	case prev != nil:
		return w.Replace(key, prev, old)
	default:
		_, _, err := w.Insert(old)
		return err
	}
}

// undoDDL takes back a DDL entry by running its inverse with the oplog
// quiet, then removes the entry.
func (n *Node) undoDDL(ctx context.Context, u oplog.Undo) error {
	ns, _ := u.Entry.Lookup("ns")
	o, _ := u.Entry.Lookup("o")
	db, _, _ := cutDot(ns.StringValue())
	cmds, ok := inverseDDL(o.Document())
	if !ok {
		n.mu.Lock()
		n.rollbackFailures++
		n.mu.Unlock()
		n.opts.Log.Error("Cannot roll back a DDL entry the set did not commit; this member's data differs from the set's until it is resynced",
			"c", "ROLLBACK", "ns", ns.StringValue(), "o", o.Document().String())
	}
	for _, cmd := range cmds {
		done := n.opts.Oplog.Quiet()
		err := n.opts.ApplyCommand(ctx, db, cmd)
		done()
		if err != nil {
			n.opts.Log.Warn("Rolling back a DDL entry: its inverse failed", "c", "ROLLBACK", "ns", ns.StringValue(), "command", cmd.String(), "error", err.Error())
		}
	}
	return n.opts.DB.Update(ctx, func(tx *kv.Tx) error { return n.opts.Oplog.RollBack(tx, u.TS) })
}

// inverseDDL returns the commands that take back DDL entry o; false when
// it cannot be taken back.
func inverseDDL(o bson.Doc) ([]bson.Doc, bool) {
	it := o.Iter()
	if !it.Next() {
		return nil, true
	}
	first := it.Element()
	coll := ""
	if first.Value.Type == bson.TypeString {
		coll = first.Value.StringValue()
	}
	dropIndexes := func(names ...string) []bson.Doc {
		var out []bson.Doc
		for _, name := range names {
			var b bson.Builder
			b.AppendString("dropIndexes", coll)
			b.AppendString("index", name)
			out = append(out, b.Finish())
		}
		return out
	}
	switch first.Key {
	case "startIndexBuild", "abortIndexBuild":
		return nil, true
	case "create":
		var b bson.Builder
		b.AppendString("drop", coll)
		return []bson.Doc{b.Finish()}, true
	case "createIndexes":
		name, _ := o.Lookup("name")
		if name.Type != bson.TypeString {
			return nil, false
		}
		return dropIndexes(name.StringValue()), true
	case "commitIndexBuild":
		var names []string
		if v, ok := o.Lookup("indexes"); ok && v.Type == bson.TypeArray {
			it := v.Document().Iter()
			for it.Next() {
				if it.Element().Value.Type != bson.TypeDocument {
					continue
				}
				if nm, _ := it.Element().Value.Document().Lookup("name"); nm.Type == bson.TypeString {
					names = append(names, nm.StringValue())
				}
			}
		}
		return dropIndexes(names...), true
	}
	return nil, false
}

// rollBackAtStart takes back, before Raft runs, the entries a previous
// run wrote as primary that were not known committed.
func (n *Node) rollBackAtStart(ctx context.Context) error {
	n.opts.Oplog.Fence(true)
	undone, err := n.rollBack(ctx, 0)
	if undone > 0 {
		n.opts.Log.Warn("Rolled back at start the writes the set had not committed when this member stopped", "c", "ROLLBACK", "entries", undone)
	}
	return err
}

// prune drops the undo records the commit point passed, with the applied
// index (so that a restart rolls back only entries Raft delivers again).
func (n *Node) prune(ctx context.Context) error {
	n.mu.Lock()
	commit, applied := n.commitTS, n.applied
	due := n.writable && commit > n.prunedTS && time.Since(n.prunedAt) >= pruneEvery
	n.mu.Unlock()
	if !due {
		return nil
	}
	tx, err := n.opts.DB.BeginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := n.opts.Oplog.DropUndo(tx, commit); err != nil {
		return err
	}
	if err := putApplied(tx, applied); err != nil {
		return err
	}
	if err := tx.CommitWith(kv.Lazy); err != nil {
		return fmt.Errorf("raftrepl: dropping the undo records: %w", err)
	}
	n.mu.Lock()
	n.prunedTS, n.prunedAt = commit, time.Now()
	n.mu.Unlock()
	return nil
}

// leadHostLocked is the leader's host ("": none known; n.mu held).
func (n *Node) leadHostLocked() string {
	for _, m := range n.cfg.Members {
		if RaftID(m) == n.lead {
			return m.Host
		}
	}
	return ""
}
