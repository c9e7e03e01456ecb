package raftrepl

// Retryable writes across a failover. The primary records what a retry
// of a retryable write's statement must answer (internal/session's
// statement history, config.transactions, config.image_collection) in
// the transaction of the statement's own write, unlogged, as mongod. A
// member applying the statement's oplog entry derives the same records
// from the entry (its lsid, txnNumber, stmtId and needsRetryImage) and
// the document it changed, in the transaction that applies it, so that
// the write retried against it once it is primary answers the first
// outcome and does not run again:
//
//   - an insert: n 1, the inserted _id as an upsert's (an update's retry
//     reports it, an insert's counts n only); the post-image when the
//     entry needsRetryImage (a findAndModify upsert returning the new
//     document);
//   - an update: n 1, nModified 1; with needsRetryImage a findAndModify
//     that updated an existing document, its pre- or post-image;
//   - a delete: n 1; with needsRetryImage the pre-image;
//   - a multi-document transaction's commit (its applyOps entry, with
//     lsid and txnNumber but no stmtId): config.transactions records it
//     committed, so that a commitTransaction retried on the new primary
//     answers ok (internal/command's restoreTxn).

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/session"
	"github.com/cairndb/cairn/kv"
)

// recordStatement writes the session records of entry d, applied in tx
// with the document pre before and post after the change.
func recordStatement(tx *kv.Tx, d, pre, post bson.Doc) error {
	k, txnNumber, stmtID, ok := session.EntryStmt(d)
	if !ok {
		return recordTxn(tx, d)
	}
	op, _ := d.Lookup("op")
	if op.Type != bson.TypeString {
		return nil
	}
	kind := ""
	if v, ok := d.Lookup("needsRetryImage"); ok && v.Type == bson.TypeString {
		kind = v.StringValue()
	}
	a := session.Applied{Key: k, TxnNumber: txnNumber, StmtID: stmtID, Wall: docWall(d)}
	a.Result.TS = docTS(d)
	if t, ok := d.Lookup("t"); ok {
		a.Term, _ = t.AsInt64()
	}
	a.Result.N = 1
	switch op.StringValue() {
	case "i":
		if post != nil {
			if id, ok := post.Lookup("_id"); ok {
				a.Result.Upserted = bson.Value{Type: id.Type, Data: append([]byte(nil), id.Data...)}
			}
		}
		if kind == session.PostImage {
			a.ImageKind, a.Image = kind, post
		}
	case "u":
		a.Result.NModified = 1
		switch kind {
		case session.PreImage:
			a.ImageKind, a.Image = kind, pre
		case session.PostImage:
			a.ImageKind, a.Image = kind, post
		}
		if kind != "" {
			a.Result.UpdatedExisting = true
		}
	case "d":
		if kind == session.PreImage {
			a.ImageKind, a.Image = kind, pre
		}
	default:
		return nil
	}
	a.Result.Image = a.ImageKind
	if a.Image == nil {
		a.Result.Image = ""
	}
	return session.RecordApplied(tx, a)
}

// recordTxn records a transaction's applyOps entry d committed.
func recordTxn(tx *kv.Tx, d bson.Doc) error {
	lsid, ok := d.Lookup("lsid")
	if !ok || lsid.Type != bson.TypeDocument {
		return nil
	}
	if _, ok := d.Lookup("stmtId"); ok {
		return nil
	}
	o, _ := d.Lookup("o")
	if o.Type != bson.TypeDocument {
		return nil
	}
	if ops, ok := o.Document().Lookup("applyOps"); !ok || ops.Type != bson.TypeArray {
		return nil
	}
	k, ok := session.LSIDKey(lsid.Document())
	if !ok {
		return nil
	}
	num, _ := d.Lookup("txnNumber")
	txnNumber, ok := num.AsInt64()
	if !ok {
		return nil
	}
	var term int64
	if t, ok := d.Lookup("t"); ok {
		term, _ = t.AsInt64()
	}
	return session.RecordTxn(tx, k, txnNumber, docTS(d), "committed", docWall(d), term)
}
