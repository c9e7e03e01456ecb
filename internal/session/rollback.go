package session

// Taking back the session state of writes a replica-set member rolled
// back (internal/raftrepl's rollback): the statement history and
// config.transactions are written in the same kv transaction as the
// statement's writes, so a member that takes the writes back must take
// back what says they were executed, or a retry would be answered from a
// record of a write that no longer exists.

import (
	"fmt"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/kv"
)

// LSIDKey reads an oplog entry's lsid ({id, uid}).
func LSIDKey(lsid bson.Doc) (Key, bool) {
	var b bson.Builder
	b.AppendDocument("_id", lsid)
	return keyOf(b.Finish())
}

// ForgetStatement removes, in tx, the history of statement stmtID of
// session k's txnNumber: a retry runs it again.
func ForgetStatement(tx *kv.Tx, k Key, txnNumber int64, stmtID int32) error {
	h, err := stmtTreeOf(tx, false)
	if err != nil || h == nil {
		return err
	}
	if _, err := h.Delete(stmtKey(k, txnNumber, &stmtID)); err != nil {
		return fmt.Errorf("statement history: %w", err)
	}
	return nil
}

// ForgetTxn removes, in tx, session k's config.transactions record when
// it records transaction txnNumber committed: a retried commitTransaction
// no longer finds it committed.
func ForgetTxn(tx *kv.Tx, k Key, txnNumber int64) error {
	n, _, ok, err := CommittedTxn(tx, k)
	if err != nil || !ok || n != txnNumber {
		return err
	}
	return deleteDoc(tx, TransactionsColl, k)
}

// RolledBackTxn makes session k's slot, when it holds transaction
// txnNumber as committed, hold it aborted (its commit was rolled back): a
// retried commitTransaction answers NoSuchTransaction. A slot a command
// holds is left alone (that command sees the member is not primary).
func (r *Registry) RolledBackTxn(k Key, txnNumber int64) {
	s := r.Slot(k)
	if s == nil {
		return
	}
	select {
	case s.use <- struct{}{}:
	default:
		return
	}
	if s.Number == txnNumber && s.State == TxnCommitted {
		s.State, s.CommitTS = TxnAborted, 0
	}
	<-s.use
}

// RollBackEntry takes back, in tx, what the member recorded of an oplog
// entry's session that a rollback takes back: a retryable write's
// statement runs again when retried, a transaction's commit is no longer
// answered as committed. r may be nil (no live sessions to update).
func (r *Registry) RollBackEntry(tx *kv.Tx, entry bson.Doc) error {
	lsid, ok := entry.Lookup("lsid")
	if !ok || lsid.Type != bson.TypeDocument {
		return nil
	}
	k, ok := LSIDKey(lsid.Document())
	if !ok {
		return nil
	}
	num, _ := entry.Lookup("txnNumber")
	txnNumber, _ := num.AsInt64()
	if stmt, ok := entry.Lookup("stmtId"); ok {
		id, _ := stmt.AsInt64()
		return ForgetStatement(tx, k, txnNumber, int32(id))
	}
	if err := ForgetTxn(tx, k, txnNumber); err != nil {
		return err
	}
	if r != nil {
		r.RolledBackTxn(k, txnNumber)
	}
	return nil
}
