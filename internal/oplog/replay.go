package oplog

// What a member that applies another member's entries needs: to write an
// entry exactly as the primary wrote it (its ts, t, wall and fields), to
// know whether it already holds one, and to run a DDL command whose own
// entry is replaced by the primary's.

import (
	"fmt"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
)

// PutRaw appends doc, an entry another member wrote at ts, as it is, in
// tx (kv's writer); the clock observes ts so that this member's own later
// stamps are larger.
func (l *Log) PutRaw(tx *kv.Tx, ts repl.Timestamp, doc bson.Doc) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.putRawLocked(tx, ts, doc)
}

func (l *Log) putRawLocked(tx *kv.Tx, ts repl.Timestamp, doc bson.Doc) error {
	t, err := l.begin(tx)
	if err != nil {
		return err
	}
	l.clock.Observe(ts)
	if err := l.put(tx, t, ts, doc); err != nil {
		return err
	}
	if ts > l.last {
		l.last = ts
	}
	return nil
}

// Has reports whether the oplog of tx's snapshot holds an entry at ts.
func Has(tx *kv.Tx, ts repl.Timestamp) (bool, error) {
	t, err := tree(tx)
	if err != nil || t == nil {
		return false, err
	}
	v, err := t.Get(key(ts))
	if err != nil {
		return false, fmt.Errorf("oplog: %w", err)
	}
	return v != nil, nil
}

// replay is an entry being replayed by a DDL command (Replay).
type replay struct {
	ts   repl.Timestamp
	doc  bson.Doc
	used bool
}

// Replay makes the entries the next appends would write stand for doc,
// the entry another member wrote at ts: the first append writes doc at
// ts instead of a new entry, later ones write nothing, until the returned
// function is called. A member applying a DDL entry runs the command
// under Replay, so that its oplog holds the primary's entry. Appends are
// serialized by kv's writer; the applier is the only writer of a member
// that is not primary.
func (l *Log) Replay(ts repl.Timestamp, doc bson.Doc) (done func()) {
	l.mu.Lock()
	l.replaying = &replay{ts: ts, doc: doc}
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		l.replaying = nil
		l.mu.Unlock()
	}
}

// replayLocked writes the replayed entry in place of a new one (l.mu
// held); false when nothing is being replayed.
func (l *Log) replayLocked(tx *kv.Tx) (repl.Timestamp, bool, error) {
	r := l.replaying
	if r == nil {
		return 0, false, nil
	}
	if r.used {
		return r.ts, true, nil
	}
	r.used = true
	return r.ts, true, l.putRawLocked(tx, r.ts, r.doc)
}

// ReplayedUUID answers, while a create entry of db.name is being replayed
// (Replay), the collection UUID the entry carries (its ui): the member
// creates the collection with the primary's UUID (catalog.UUIDSource).
func (l *Log) ReplayedUUID(db, name string) ([16]byte, bool) {
	var u [16]byte
	l.mu.Lock()
	r := l.replaying
	l.mu.Unlock()
	if r == nil {
		return u, false
	}
	ns, _ := r.doc.Lookup("ns")
	o, _ := r.doc.Lookup("o")
	ui, _ := r.doc.Lookup("ui")
	if ns.Type != bson.TypeString || ns.StringValue() != db+".$cmd" || o.Type != bson.TypeDocument || ui.Type != bson.TypeBinary {
		return u, false
	}
	it := o.Document().Iter()
	if !it.Next() {
		return u, false
	}
	if e := it.Element(); e.Key != "create" || e.Value.Type != bson.TypeString || e.Value.StringValue() != name {
		return u, false
	}
	_, data := ui.Binary()
	if len(data) != len(u) {
		return u, false
	}
	copy(u[:], data)
	return u, true
}
