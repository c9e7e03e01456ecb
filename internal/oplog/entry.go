package oplog

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
)

// Operations.
const (
	OpInsert  = 'i'
	OpUpdate  = 'u'
	OpDelete  = 'd'
	OpCommand = 'c'
	OpNoop    = 'n'
)

// Entry is the part of an entry its writer chooses; Append adds the
// statement's session fields, ts, t, v and wall.
type Entry struct {
	Op byte
	NS string
	UI *[16]byte // the collection's UUID; nil: none
	O  bson.Doc
	O2 bson.Doc // nil: none
	// ID, when set (its Type not 0, and O2 nil), makes o2 the document
	// key {_id: ID}. (A value, not a pointer: the entry's fields leak to
	// the heap through Append, so a pointer cost an allocation a write.)
	ID bson.Value
	// Pre, when set, is the document before the change, kept as its
	// pre-image (preimage.go; UI must be set).
	Pre bson.Doc
	// Old is the document an update or a delete replaced, kept in the
	// entry's undo record while undo records are on (undo.go).
	Old bson.Doc
}

// Logged reports whether writes to db.coll are logged: not those of the
// local database (as mongod), of system.profile (each node's own), nor of
// the session machinery's records (config.transactions and
// config.image_collection, which mongod writes unreplicated: a secondary
// derives them from the entries' lsid).
func Logged(db, coll string) bool {
	switch {
	case db == DB:
		return false
	case coll == "system.profile":
		return false
	case db == "config" && (coll == "transactions" || coll == "image_collection"):
		return false
	}
	return true
}

// Append writes e, stamped with a new ts, in tx and returns the ts. A
// retryable write's statement (stmt, nil when the write is not one) gives
// the entry lsid, txnNumber, stmtId and prevOpTime, and its LastOpTime
// moves to ts.
//
// In a multi-document transaction's concurrent kv transaction, nothing is
// appended: the operation is buffered for the transaction's applyOps
// entry (txn.go) and the ts is 0.
func (l *Log) Append(tx *kv.Tx, e *Entry, stmt *repl.Stmt) (repl.Timestamp, error) {
	if tx.Concurrent() {
		return 0, l.txns.add(tx, e, l.undo.Load())
	}
	var rec bson.Doc
	if l.undo.Load() {
		rec = undoRecord(e.Old)
	}
	return l.append(tx, e, stmt, rec)
}

// append writes e and, when rec is not nil, its undo record.
func (l *Log) append(tx *kv.Tx, e *Entry, stmt *repl.Stmt, rec bson.Doc) (repl.Timestamp, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ts, ok, err := l.replayLocked(tx); ok || err != nil {
		return ts, err
	}
	if l.quiet {
		return 0, nil
	}
	if l.fenced {
		return 0, errFenced()
	}
	t, err := l.begin(tx)
	if err != nil {
		return 0, err
	}
	ts := l.clock.Next()
	term := l.term()
	b := &l.b
	b.Reset(l.buf)
	if stmt != nil {
		b.AppendDocument("lsid", stmt.LSID)
		b.AppendInt64("txnNumber", stmt.TxnNumber)
	}
	e.appendOp(b)
	if stmt != nil && stmt.StmtID >= 0 { // a transaction's entry has none
		b.AppendInt32("stmtId", stmt.StmtID)
	}
	b.AppendTimestamp("ts", ts.T(), ts.I())
	b.AppendInt64("t", term)
	b.AppendInt64("v", 2)
	b.AppendDateTime("wall", l.now().UnixMilli())
	if stmt != nil {
		b.StartDocument("prevOpTime")
		b.AppendTimestamp("ts", stmt.LastOpTime.T(), stmt.LastOpTime.I())
		if stmt.LastOpTime == 0 {
			b.AppendInt64("t", -1)
		} else {
			b.AppendInt64("t", term)
		}
		b.End()
		if stmt.RetryImage != "" && (e.Op != OpInsert || stmt.RetryImage == "postImage") {
			b.AppendString("needsRetryImage", stmt.RetryImage)
		}
	}
	entry := b.Finish()
	l.buf = entry[:0] // Put copies: the buffer serves the next entry
	if err := l.put(tx, t, ts, entry); err != nil {
		return 0, err
	}
	if e.Pre != nil && e.UI != nil {
		if err := l.writePreImage(tx, ts, 0, *e.UI, e.Pre); err != nil {
			return 0, err
		}
	}
	if rec != nil {
		if err := l.writeUndo(tx, ts, rec); err != nil {
			return 0, err
		}
	}
	if stmt != nil {
		stmt.LastOpTime = ts
	}
	l.last = ts
	return ts, nil
}

// LastAppended returns the ts of the entry appended last (0: none since
// the log was opened), committed or not. Under kv's single writer, a
// write transaction that finds it changed after its own writes appended
// that entry: the command's operationTime.
func (l *Log) LastAppended() repl.Timestamp {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// appendOp appends the fields that describe the change, as an entry and
// an applyOps operation both hold them: op, ns, ui, o and o2 (the
// document key of an insert).
func (e *Entry) appendOp(b *bson.Builder) {
	b.AppendString("op", string(rune(e.Op)))
	b.AppendString("ns", e.NS)
	if e.UI != nil {
		b.AppendBinary("ui", 4, e.UI[:])
	}
	b.AppendDocument("o", e.O)
	switch {
	case e.O2 != nil:
		b.AppendDocument("o2", e.O2)
	case e.ID.Type != 0:
		b.StartDocument("o2")
		b.AppendValue("_id", e.ID)
		b.End()
	}
}

// idDoc returns {_id: id}.
func idDoc(id bson.Value) bson.Doc {
	var b bson.Builder
	b.AppendValue("_id", id)
	return b.Finish()
}

// nsName is a cached namespace string (Log.ns).
type nsName struct{ db, coll, ns string }

// namespace returns coll's namespace, "db.coll", without building the
// string again when the previous write was to the same collection (the
// common case: a write path's entries each name their collection).
func (l *Log) namespace(coll *catalog.Collection) string {
	if c := l.ns.Load(); c != nil && c.db == coll.DB && c.coll == coll.Name {
		return c.ns
	}
	c := &nsName{db: coll.DB, coll: coll.Name, ns: coll.Namespace()}
	l.ns.Store(c)
	return c.ns
}

// Insert logs the insert of doc (as stored, _id first) into coll.
func (l *Log) Insert(tx *kv.Tx, coll *catalog.Collection, doc bson.Doc, id bson.Value, stmt *repl.Stmt) error {
	if l == nil || !CollectionLogged(coll) {
		return nil
	}
	_, err := l.Append(tx, &Entry{Op: OpInsert, NS: l.namespace(coll), UI: &coll.UUID, O: doc, ID: id}, stmt)
	return err
}

// Update logs an update with operators (or a pipeline) of old into
// updated, as mongod 5.0+ records it: o is {$v: 2, diff} (diff.go's
// ModifierObject), built in a pooled buffer (Append copies o into the
// entry, or into a transaction's buffered operation, and keeps nothing).
func (l *Log) Update(tx *kv.Tx, coll *catalog.Collection, old, updated bson.Doc, stmt *repl.Stmt) error {
	if l == nil || !CollectionLogged(coll) {
		return nil
	}
	d := getDiffBuf()
	defer putDiffBuf(d)
	o := d.modifierObject(old, updated)
	if o == nil {
		return nil // nothing changed: mongod logs nothing either
	}
	id, _ := updated.Lookup("_id")
	_, err := l.Append(tx, &Entry{Op: OpUpdate, NS: l.namespace(coll), UI: &coll.UUID, O: o, ID: id, Pre: preImageOf(coll, old), Old: old}, stmt)
	return err
}

// preImageOf returns old when coll keeps pre-images (nil otherwise).
func preImageOf(coll *catalog.Collection, old bson.Doc) bson.Doc {
	if old == nil || !PreImagesEnabled(coll) {
		return nil
	}
	return old
}

// Replace logs a replacement of old by updated.
func (l *Log) Replace(tx *kv.Tx, coll *catalog.Collection, old, updated bson.Doc, stmt *repl.Stmt) error {
	if l == nil || !CollectionLogged(coll) {
		return nil
	}
	id, _ := updated.Lookup("_id")
	_, err := l.Append(tx, &Entry{Op: OpUpdate, NS: l.namespace(coll), UI: &coll.UUID, O: updated, ID: id, Pre: preImageOf(coll, old), Old: old}, stmt)
	return err
}

// Delete logs the delete of old, the document whose _id is id.
func (l *Log) Delete(tx *kv.Tx, coll *catalog.Collection, old bson.Doc, id bson.Value, stmt *repl.Stmt) error {
	if l == nil || !CollectionLogged(coll) {
		return nil
	}
	_, err := l.Append(tx, &Entry{Op: OpDelete, NS: l.namespace(coll), UI: &coll.UUID, O: idDoc(id), Pre: preImageOf(coll, old), Old: old}, stmt)
	return err
}

// Command logs a command entry on db.$cmd: o describes it (its first
// field names it), o2 (nil: none) holds what some commands record to be
// undone; ui is the collection's UUID (nil for database commands).
func (l *Log) Command(tx *kv.Tx, db string, ui *[16]byte, o, o2 bson.Doc) error {
	_, err := l.Append(tx, &Entry{Op: OpCommand, NS: db + ".$cmd", UI: ui, O: o, O2: o2}, nil)
	return err
}

// Noop logs a no-op entry {op: "n", ns: "", o}: Initiated's, or
// appendOplogNote's.
func (l *Log) Noop(tx *kv.Tx, o bson.Doc) (repl.Timestamp, error) {
	return l.Append(tx, &Entry{Op: OpNoop, NS: "", O: o}, nil)
}

// Initiated logs the entry mongod writes when a replica set is initiated,
// {op: "n", ns: "", o: {msg: "initiating set"}}; the replica-set part
// calls it in replSetInitiate's transaction.
func (l *Log) Initiated(tx *kv.Tx) (repl.Timestamp, error) {
	var b bson.Builder
	b.AppendString("msg", "initiating set")
	return l.Noop(tx, b.Finish())
}

// CollectionLogged reports whether coll's changes are logged.
func CollectionLogged(coll *catalog.Collection) bool { return Logged(coll.DB, coll.Name) }
