package session

// The session state a replica-set member derives from the retryable
// writes it applies (internal/raftrepl): mongod's secondaries rebuild
// config.transactions and config.image_collection from the statements'
// oplog entries (lsid, txnNumber, stmtId, needsRetryImage), so that a
// write retried against a new primary after a failover answers its first
// outcome and does not run again. Cairn's members write the same records
// and the statement history (txn.go), in the transaction that applies
// the entry.

import (
	"errors"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/kv"
)

// Applied is a retryable write's statement as a member applies it from
// another member's oplog entry.
type Applied struct {
	Key       Key
	TxnNumber int64
	StmtID    int32
	Result    StmtResult // Result.TS is the entry's ts
	// ImageKind and Image are a findAndModify's image (ImageKind "":
	// none).
	ImageKind string
	Image     bson.Doc
	// Wall and Term are the entry's wall and t (lastWriteDate,
	// lastWriteOpTime.t).
	Wall time.Time
	Term int64
}

// RecordApplied writes, in tx, what the primary wrote of statement a when
// it executed it: its history, the session's config.transactions record
// and findAndModify's image. A statement of a txnNumber older than the
// one recorded changes nothing (the record is newer already).
func RecordApplied(tx *kv.Tx, a Applied) error {
	t, err := Begin(tx, a.Key, a.TxnNumber)
	var me *mongoerr.Error
	if errors.As(err, &me) && me.Code == mongoerr.TransactionTooOld {
		return nil
	}
	if err != nil {
		return err
	}
	if err := t.Record(a.StmtID, a.Result); err != nil {
		return err
	}
	if a.ImageKind != "" && a.Image != nil {
		if err := t.PutImage(a.ImageKind, a.Image, a.Result.TS); err != nil {
			return err
		}
	}
	return t.Finish(a.Wall, a.Term)
}

// EntryStmt reads an oplog entry's retryable-write fields: lsid,
// txnNumber and stmtId (ok false: the entry is not a retryable write's
// statement, e.g. a transaction's applyOps, which has no stmtId).
func EntryStmt(entry bson.Doc) (k Key, txnNumber int64, stmtID int32, ok bool) {
	lsid, found := entry.Lookup("lsid")
	if !found || lsid.Type != bson.TypeDocument {
		return k, 0, 0, false
	}
	if k, ok = LSIDKey(lsid.Document()); !ok {
		return k, 0, 0, false
	}
	num, _ := entry.Lookup("txnNumber")
	var numOK bool
	if txnNumber, numOK = num.AsInt64(); !numOK {
		return k, 0, 0, false
	}
	stmt, found := entry.Lookup("stmtId")
	if !found {
		return k, 0, 0, false
	}
	id, idOK := stmt.AsInt64()
	return k, txnNumber, int32(id), idOK
}
