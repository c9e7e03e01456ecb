package session

// The state of retryable writes.
//
// A retryable write is a write command carrying lsid and txnNumber; each
// document of an insert and each statement of an update or delete is a
// statement numbered by its position (or the command's stmtId/stmtIds),
// a findAndModify is one statement. A statement already executed for the
// session's current txnNumber is not run again: the command answers what
// it answered the first time. What that takes is written in the SAME kv
// write transaction as the statement's own writes, so that a crash (kill
// -9, power loss) keeps both or neither:
//
//   - config.transactions, one document per session, as mongod's session
//     transaction table: {_id: {id, uid}, txnNum, lastWriteOpTime: {ts, t},
//     lastWriteDate}. A lower txnNumber than txnNum is TransactionTooOld.
//   - the statement history (the kv tree _txnstmts, not a collection):
//     per session and txnNumber a header entry, then one entry per
//     executed statement holding what a retry must answer (n, nModified,
//     the upserted _id, findAndModify's updatedExisting and which image).
//     mongod reads this from the oplog chain of the transaction; Cairn
//     keeps its own table so that a retry never depends on the oplog's
//     size. A new txnNumber replaces the session's history.
//   - config.image_collection, as mongod 5.1+: the pre- or post-image of
//     the session's last retryable findAndModify ({_id: lsid, txnNum, ts,
//     imageKind, image, invalidated}), from which a retry rebuilds value.
//
// Only statements that wrote are recorded (as mongod, whose record is the
// statement's oplog entry): a statement that failed (writeErrors) or
// changed nothing runs again when retried. A retried statement is not
// compared with the original (mongod does not detect a retry with
// different content either). When config.transactions holds the current
// txnNumber but the history has no header for it (a config.transactions
// document restored or written by hand), the history is incomplete: a
// statement not found in it is IncompleteTransactionHistory, as mongod
// answers when the oplog chain was truncated.
//
// These writes bypass exec.CollWriter: mongod does not log
// config.transactions and config.image_collection writes of retryable
// writes in the oplog (a secondary derives them from the statement's own
// entry), and neither collection has a secondary index in Cairn.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
)

// Where the state lives.
const (
	ConfigDB         = "config"
	TransactionsColl = "transactions"
	ImagesColl       = "image_collection"
	SessionsColl     = "system.sessions"
	stmtTree         = "_txnstmts"
)

// Image kinds of a findAndModify statement.
const (
	PreImage  = "preImage"
	PostImage = "postImage"
)

// StmtResult is what a retry of an executed statement answers.
type StmtResult struct {
	N, NModified int32
	// Upserted is the _id an upsert inserted (zero: none).
	Upserted bson.Value
	// UpdatedExisting and Image are findAndModify's: whether it updated a
	// document and which image its value is ("": value null).
	UpdatedExisting bool
	Image           string
	// TS is the statement's timestamp.
	TS repl.Timestamp
}

func (r StmtResult) encode() []byte {
	var b bson.Builder
	b.AppendInt32("n", r.N)
	b.AppendInt32("m", r.NModified)
	if r.Upserted.Type != 0 {
		b.AppendValue("u", r.Upserted)
	}
	b.AppendBool("e", r.UpdatedExisting)
	b.AppendString("i", r.Image)
	b.AppendInt64("ts", int64(r.TS))
	return b.Finish()
}

func decodeResult(raw []byte) (StmtResult, error) {
	d := bson.Doc(append([]byte(nil), raw...))
	if err := bson.Validate(d, bson.MaxDepth); err != nil {
		return StmtResult{}, fmt.Errorf("statement history: %w", err)
	}
	var r StmtResult
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "n":
			r.N = e.Value.Int32()
		case "m":
			r.NModified = e.Value.Int32()
		case "u":
			r.Upserted = e.Value
		case "e":
			r.UpdatedExisting = e.Value.Boolean()
		case "i":
			r.Image = e.Value.StringValue()
		case "ts":
			r.TS = repl.Timestamp(e.Value.Int64())
		}
	}
	return r, nil
}

// Txn is a retryable write command's view of its session's state, inside
// the command's write transaction.
type Txn struct {
	tx     *kv.Tx
	Key    Key
	Number int64
	// LastOpTime is the timestamp of the session's last statement of this
	// txnNumber (0: none): the prevOpTime of the next.
	LastOpTime repl.Timestamp
	// fresh: no statement of Number recorded yet (the history holds an
	// older txnNumber's, to be replaced).
	fresh      bool
	incomplete bool
	wrote      bool
}

// Begin reads session k's state for a retryable write with txnNumber in
// the write transaction tx. A txnNumber lower than the recorded one is
// TransactionTooOld.
func Begin(tx *kv.Tx, k Key, txnNumber int64) (*Txn, error) {
	t := &Txn{tx: tx, Key: k, Number: txnNumber, fresh: true}
	rec, err := readTxnRecord(tx, k)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return t, nil
	}
	num, ts := txnRecordFields(rec)
	switch {
	case num > txnNumber:
		return nil, TooOld(k, txnNumber, num)
	case num == txnNumber:
		t.fresh = false
		t.LastOpTime = ts
		h, err := stmtTreeOf(tx, false)
		if err != nil {
			return nil, err
		}
		var v []byte
		if h != nil {
			if v, err = h.Get(stmtKey(k, txnNumber, nil)); err != nil {
				return nil, fmt.Errorf("statement history: %w", err)
			}
		}
		t.incomplete = v == nil
	}
	return t, nil
}

// Executed returns the result of statement stmtID if it was executed.
func (t *Txn) Executed(stmtID int32) (StmtResult, bool, error) {
	if t.fresh {
		return StmtResult{}, false, nil
	}
	h, err := stmtTreeOf(t.tx, false)
	if err != nil {
		return StmtResult{}, false, err
	}
	var v []byte
	if h != nil {
		if v, err = h.Get(stmtKey(t.Key, t.Number, &stmtID)); err != nil {
			return StmtResult{}, false, fmt.Errorf("statement history: %w", err)
		}
	}
	if v == nil {
		if t.incomplete {
			return StmtResult{}, false, mongoerr.New(mongoerr.IncompleteTransactionHistory, "Incomplete history detected for transaction %d on session %s", t.Number, t.Key)
		}
		return StmtResult{}, false, nil
	}
	r, err := decodeResult(v)
	return r, err == nil, err
}

// Record notes statement stmtID as executed with result r, whose TS
// becomes LastOpTime.
func (t *Txn) Record(stmtID int32, r StmtResult) error {
	h, err := stmtTreeOf(t.tx, true)
	if err != nil {
		return err
	}
	if t.fresh {
		// A new txnNumber: the session's older history is no longer needed.
		prefix := stmtKey(t.Key, 0, nil)[:48]
		if _, err := h.DeleteRange(prefix, prefixEnd(prefix)); err != nil {
			return fmt.Errorf("statement history: %w", err)
		}
		if err := h.Put(stmtKey(t.Key, t.Number, nil), []byte{1}); err != nil {
			return fmt.Errorf("statement history: %w", err)
		}
		t.fresh, t.incomplete = false, false
	}
	if err := h.Put(stmtKey(t.Key, t.Number, &stmtID), r.encode()); err != nil {
		return fmt.Errorf("statement history: %w", err)
	}
	t.LastOpTime = r.TS
	t.wrote = true
	return nil
}

// Wrote reports whether a statement of the command was recorded (Finish
// writes config.transactions).
func (t *Txn) Wrote() bool { return t.wrote }

// Finish writes the session's config.transactions record when the
// command recorded a statement; term is the replica set's term.
func (t *Txn) Finish(now time.Time, term int64) error {
	if !t.wrote {
		return nil
	}
	var b bson.Builder
	t.Key.AppendDoc(&b, "_id")
	b.AppendInt64("txnNum", t.Number)
	b.StartDocument("lastWriteOpTime")
	b.AppendTimestamp("ts", t.LastOpTime.T(), t.LastOpTime.I())
	b.AppendInt64("t", term)
	b.End()
	b.AppendDateTime("lastWriteDate", now.UnixMilli())
	return putDoc(t.tx, TransactionsColl, t.Key, b.Finish())
}

// PutImage stores the image of the session's findAndModify statement
// written at ts.
func (t *Txn) PutImage(kind string, image bson.Doc, ts repl.Timestamp) error {
	var b bson.Builder
	t.Key.AppendDoc(&b, "_id")
	b.AppendInt64("txnNum", t.Number)
	b.AppendTimestamp("ts", ts.T(), ts.I())
	b.AppendString("imageKind", kind)
	b.AppendDocument("image", image)
	b.AppendBool("invalidated", false)
	return putDoc(t.tx, ImagesColl, t.Key, b.Finish())
}

// Image returns the image a retried findAndModify answers, as mongod
// finds it in config.image_collection.
func (t *Txn) Image(kind string) (bson.Doc, error) {
	d, err := getDoc(t.tx, ImagesColl, t.Key)
	if err != nil {
		return nil, err
	}
	if d == nil {
		return nil, mongoerr.New(mongoerr.RetryImageMissing, "image collection no longer contains the complete write history of this transaction, record with sessionId: %s cannot be found", t.Key.BSONString())
	}
	num, _ := d.Lookup("txnNum")
	inv, _ := d.Lookup("invalidated")
	k, _ := d.Lookup("imageKind")
	img, _ := d.Lookup("image")
	n, _ := num.AsInt64()
	if inv.Truthy() || n != t.Number || k.Type != bson.TypeString || k.StringValue() != kind || img.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.IncompleteTransactionHistory, "Incomplete transaction history for sessionId: %s txnNumber: %d", t.Key.BSONString(), t.Number)
	}
	return img.Document(), nil
}

// Remove deletes session k's retryable-write state (an expired session).
func Remove(tx *kv.Tx, k Key) error {
	for _, coll := range []string{TransactionsColl, ImagesColl} {
		if err := deleteDoc(tx, coll, k); err != nil {
			return err
		}
	}
	h, err := stmtTreeOf(tx, false)
	if err != nil || h == nil {
		return err
	}
	prefix := stmtKey(k, 0, nil)[:48]
	if _, err := h.DeleteRange(prefix, prefixEnd(prefix)); err != nil {
		return fmt.Errorf("statement history: %w", err)
	}
	return nil
}

func readTxnRecord(tx *kv.Tx, k Key) (bson.Doc, error) { return getDoc(tx, TransactionsColl, k) }

// txnRecordFields reads txnNum and lastWriteOpTime.ts of a record.
func txnRecordFields(rec bson.Doc) (int64, repl.Timestamp) {
	v, _ := rec.Lookup("txnNum")
	num, _ := v.AsInt64()
	var ts repl.Timestamp
	if t, ok := rec.LookupPath("lastWriteOpTime", "ts"); ok && t.Type == bson.TypeTimestamp {
		s, i := t.Timestamp()
		ts = repl.MakeTimestamp(s, i)
	}
	return num, ts
}

// stmtKey is the history key of (k, txn[, stmt]): id, uid, txnNumber and
// stmtId big-endian (sign-flipped so that the order is numeric).
func stmtKey(k Key, txn int64, stmt *int32) []byte {
	key := make([]byte, 0, 60)
	key = append(key, k.ID[:]...)
	key = append(key, k.UID[:]...)
	key = binary.BigEndian.AppendUint64(key, uint64(txn)^1<<63)
	if stmt != nil {
		key = binary.BigEndian.AppendUint32(key, uint32(*stmt)^1<<31)
	}
	return key
}

// prefixEnd is the first key after every key starting with prefix.
func prefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

func stmtTreeOf(tx *kv.Tx, create bool) (*kv.Tree, error) {
	if create {
		t, err := tx.CreateTreeIfNotExists(stmtTree)
		if err != nil {
			return nil, fmt.Errorf("statement history: %w", err)
		}
		return t, nil
	}
	t, err := tx.Tree(stmtTree)
	if errors.Is(err, kv.ErrTreeNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("statement history: %w", err)
	}
	return t, nil
}

// dataTree opens config.<coll>'s data tree, creating the collection when
// create is set (nil when it does not exist).
func dataTree(tx *kv.Tx, coll string, create bool) (*kv.Tree, error) {
	c, err := catalog.Get(tx, ConfigDB, coll)
	if err != nil {
		return nil, err
	}
	if c == nil {
		if !create {
			return nil, nil
		}
		if c, err = catalog.Create(tx, ConfigDB, coll, nil); err != nil {
			return nil, err
		}
	}
	return exec.DataTree(tx, c)
}

func idKey(k Key) []byte {
	return exec.DocKey(nil, bson.Value{Type: bson.TypeDocument, Data: k.Doc()})
}

func getDoc(tx *kv.Tx, coll string, k Key) (bson.Doc, error) {
	t, err := dataTree(tx, coll, false)
	if err != nil || t == nil {
		return nil, err
	}
	v, err := t.Get(idKey(k))
	if err != nil {
		return nil, fmt.Errorf("reading config.%s: %w", coll, err)
	}
	if v == nil {
		return nil, nil
	}
	return bson.Doc(append([]byte(nil), v...)), nil
}

func putDoc(tx *kv.Tx, coll string, k Key, d bson.Doc) error {
	t, err := dataTree(tx, coll, true)
	if err != nil {
		return err
	}
	if err := t.Put(idKey(k), d); err != nil {
		return fmt.Errorf("writing config.%s: %w", coll, err)
	}
	return nil
}

func deleteDoc(tx *kv.Tx, coll string, k Key) error {
	t, err := dataTree(tx, coll, false)
	if err != nil || t == nil {
		return err
	}
	if _, err := t.Delete(idKey(k)); err != nil {
		return fmt.Errorf("deleting from config.%s: %w", coll, err)
	}
	return nil
}
