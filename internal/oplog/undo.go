package oplog

// Undo records: what a member needs to take back the writes it committed
// locally but the replica set never committed.
//
// On a set of several members (internal/raftrepl), the primary commits a
// write to its own kv with its entry first and the set commits the entry
// later (Raft). A primary that loses its leadership before that keeps
// writes the set may never commit; it must take them back (roll back)
// before it applies what the new primary's log holds. With undo on
// (SetUndo), every entry Append writes in a write transaction gets, in the
// same transaction, an undo record in the tree _oplogundo keyed by the
// entry's ts: {} for an insert and a command, {old: <the document before
// the change>} for an update or a delete, and for a transaction's applyOps
// entry {olds: [...]}, one element per operation (null for inserts). The
// entry itself tells what changed; the record adds what it replaced. A
// record outlives its entry's local commit only until the set commits the
// entry: the replicator drops the records up to its commit point
// (DropUndo), so at any time the records are exactly the entries this
// member wrote as primary that are not known committed, and a restart
// after a crash finds them (Undos) as well.
//
// A rollback fences the log first (Fence): from then on Append refuses
// (NotWritablePrimary), so no write slips in between the last entry the
// rollback sees and the rollback's own transaction (kv's single writer
// orders them). It then takes the entries back newest first (the caller
// applies the records: internal/raftrepl/rollback.go) and removes each
// entry, its undo record and its pre-images (RollBack). Quiet lets the
// caller run a command (a DDL's inverse) whose own entries must not be
// written.

import (
	"errors"
	"fmt"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
)

const (
	undoTree = "_oplogundo"
	// oldField carries a buffered transaction operation's old document
	// to AppendTxn (stripped from the entry, as preImageField).
	oldField = "$old"
)

// SetUndo turns the undo records on or off (a member of a set of several
// members turns them on before it accepts writes).
func (l *Log) SetUndo(on bool) { l.undo.Store(on) }

// UndoOn reports whether Append writes undo records.
func (l *Log) UndoOn() bool { return l.undo.Load() }

// Fence makes Append refuse (on) or accept (off) new entries. Replayed
// entries (Replay) and raw ones (PutRaw) are not fenced: they are what a
// member that is not primary writes.
func (l *Log) Fence(on bool) {
	l.mu.Lock()
	l.fenced = on
	l.mu.Unlock()
}

// Quiet makes appends write nothing until the returned function is
// called: the command a rollback runs to take back a DDL entry writes no
// entry of its own.
func (l *Log) Quiet() (done func()) {
	l.mu.Lock()
	l.quiet = true
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		l.quiet = false
		l.mu.Unlock()
	}
}

func errFenced() error {
	return mongoerr.New(mongoerr.NotWritablePrimary, "not primary: the member is rolling back or stepped down")
}

// writeUndo writes the undo record of the entry at ts (l.mu held).
func (l *Log) writeUndo(tx *kv.Tx, ts repl.Timestamp, rec bson.Doc) error {
	t, err := tx.CreateTreeIfNotExists(undoTree)
	if err != nil {
		return fmt.Errorf("oplog: undo records: %w", err)
	}
	if err := t.Put(key(ts), rec); err != nil {
		return fmt.Errorf("oplog: writing an undo record: %w", err)
	}
	return nil
}

func undoRecord(old bson.Doc) bson.Doc {
	var b bson.Builder
	if old != nil {
		b.AppendDocument("old", old)
	}
	return b.Finish()
}

// takeOld returns op without its old-document field and the old document
// (nil: none).
func takeOld(op bson.Doc) (bson.Doc, bson.Doc) {
	v, ok := op.Lookup(oldField)
	if !ok {
		return op, nil
	}
	var b bson.Builder
	it := op.Iter()
	for it.Next() {
		if it.Element().Key != oldField {
			b.AppendElement(it.Element())
		}
	}
	return b.Finish(), v.Document()
}

// Undo is an entry this member wrote that the set has not committed (as
// far as the member knows) and what it replaced.
type Undo struct {
	TS    repl.Timestamp
	Entry bson.Doc // the oplog entry (nil: the entry is gone already)
	// Old is the document an update or delete replaced (nil: none).
	Old bson.Doc
	// Olds are a transaction's operations' old documents, by position
	// in its applyOps (nil elements: none).
	Olds []bson.Doc
}

// Undos returns the undo records of tx's snapshot with ts after from, in
// ts order, with their entries (copies).
func Undos(tx *kv.Tx, from repl.Timestamp) ([]Undo, error) {
	t, err := openUndo(tx)
	if err != nil || t == nil {
		return nil, err
	}
	ot, err := tree(tx)
	if err != nil {
		return nil, err
	}
	var out []Undo
	cur := t.Cursor()
	for k, v := cur.Seek(key(from + 1)); k != nil; k, v = cur.Next() {
		u := Undo{TS: repl.Timestamp(beUint64(k))}
		rec := bson.Doc(append([]byte(nil), v...))
		if err := bson.Validate(rec, bson.MaxDepth); err != nil {
			return nil, fmt.Errorf("oplog: undo record %s: %w", u.TS, err)
		}
		if o, ok := rec.Lookup("old"); ok && o.Type == bson.TypeDocument {
			u.Old = o.Document()
		}
		if o, ok := rec.Lookup("olds"); ok && o.Type == bson.TypeArray {
			it := o.Document().Iter()
			for it.Next() {
				if it.Element().Value.Type == bson.TypeDocument {
					u.Olds = append(u.Olds, it.Element().Value.Document())
				} else {
					u.Olds = append(u.Olds, nil)
				}
			}
		}
		if ot != nil {
			e, err := ot.Get(k)
			if err != nil {
				return nil, fmt.Errorf("oplog: %w", err)
			}
			if e != nil {
				u.Entry = bson.Doc(append([]byte(nil), e...))
			}
		}
		out = append(out, u)
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("oplog: reading undo records: %w", err)
	}
	return out, nil
}

func beUint64(b []byte) uint64 {
	var v uint64
	for _, c := range b[:8] {
		v = v<<8 | uint64(c)
	}
	return v
}

// DropUndo removes the undo records up to ts (the set committed their
// entries) in tx.
func (l *Log) DropUndo(tx *kv.Tx, upTo repl.Timestamp) error {
	t, err := openUndo(tx)
	if err != nil || t == nil {
		return err
	}
	if _, err := t.DeleteRange(key(0), key(upTo+1)); err != nil {
		return fmt.Errorf("oplog: dropping undo records: %w", err)
	}
	return nil
}

// RollBack removes the entry at ts (taken back by the caller in tx), its
// undo record and its pre-images, and keeps the log's figures.
func (l *Log) RollBack(tx *kv.Tx, ts repl.Timestamp) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, err := l.begin(tx)
	if err != nil {
		return err
	}
	k := key(ts)
	v, err := t.Get(k)
	if err != nil {
		return fmt.Errorf("oplog: %w", err)
	}
	if v != nil {
		size := int64(len(v))
		if _, err := t.Delete(k); err != nil {
			return fmt.Errorf("oplog: removing a rolled-back entry: %w", err)
		}
		l.pend.bytes -= size
		l.pend.count--
		// The saved figures say which entries they include: a removed
		// one must not be counted again at the next start.
		last := lastOf(t)
		if err := l.saveFigures(tx, last); err != nil {
			return err
		}
		if l.last >= ts {
			l.last = last
		}
	}
	u, err := openUndo(tx)
	if err != nil {
		return err
	}
	if u != nil {
		if _, err := u.Delete(k); err != nil {
			return fmt.Errorf("oplog: removing an undo record: %w", err)
		}
	}
	if p, err := tx.Tree(preTree); err == nil {
		if _, err := p.DeleteRange(key(ts), key(ts+1)); err != nil {
			return fmt.Errorf("oplog: removing a rolled-back pre-image: %w", err)
		}
	}
	return nil
}

// lastOf returns the last entry's ts of oplog tree t (0: empty).
func lastOf(t *kv.Tree) repl.Timestamp {
	k, _ := t.Cursor().Last()
	if k == nil {
		return 0
	}
	return repl.Timestamp(beUint64(k))
}

// openUndo opens the undo records' tree in tx (nil: there is none).
func openUndo(tx *kv.Tx) (*kv.Tree, error) {
	t, err := tx.Tree(undoTree)
	if errors.Is(err, kv.ErrTreeNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("oplog: undo records: %w", err)
	}
	return t, nil
}
