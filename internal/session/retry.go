package session

// Retryable writes on the command path. A write command whose request
// carries lsid and txnNumber (accepted in replica-set mode only: see
// CheckFields) opens its session's state (Txn) inside its own write
// transaction (BeginRetry), and for each statement:
//
//   - Executed: the statement ran before under this txnNumber; its
//     recorded result is counted and its stmtId reported in
//     retriedStmtIds, and it does not run again;
//   - Start: it runs with the repl.Stmt Start returns answering the
//     oplog writer (the command's repl.StmtWriter), LastOpTime being the
//     previous statement's timestamp, so that its oplog entry carries
//     lsid/txnNumber/stmtId/prevOpTime;
//   - Done: when it wrote, its result is recorded with the timestamp the
//     oplog writer gave its entry (or, without an oplog, a fresh stamp of
//     the clock), in the same transaction.
//
// Finish writes config.transactions before the commit. Everything is
// nil-safe: a command that is not a retryable write has a nil *Retry and
// every method does nothing.

import (
	"fmt"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
)

// Retry is a retryable write command's session state.
type Retry struct {
	txn     *Txn
	stats   *TxnStats
	lsid    bson.Doc
	stmtIDs []int32 // the command's stmtIds (nil: none)
	base    int32   // the command's stmtId (0: none)
	retried []int32
	// before is LastOpTime when the statement started.
	before repl.Timestamp
}

// ParseStmtIDs reads command name's stmtId or stmtIds (body's) for n
// statements.
func ParseStmtIDs(body bson.Doc, name string, n int) (base int32, ids []int32, err error) {
	if v, ok := body.Lookup("stmtId"); ok {
		if v.Type != bson.TypeInt32 {
			return 0, nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.stmtId' is the wrong type '%s', expected type 'int'", name, v.Type)
		}
		base = v.Int32()
	}
	if v, ok := body.Lookup("stmtIds"); ok {
		if v.Type != bson.TypeArray {
			return 0, nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.stmtIds' is the wrong type '%s', expected type 'array'", name, v.Type)
		}
		it := v.Document().Iter()
		for it.Next() {
			e := it.Element().Value
			if e.Type != bson.TypeInt32 {
				return 0, nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.stmtIds.%s' is the wrong type '%s', expected type 'int'", name, it.Element().Key, e.Type)
			}
			ids = append(ids, e.Int32())
		}
		if len(ids) != n {
			return 0, nil, mongoerr.New(mongoerr.InvalidLength, "Number of statement ids must match the number of batch entries. Got %d statement ids but %d operations. Statement ids: %v. Write command: %s", len(ids), n, ids, name)
		}
	}
	return base, ids, nil
}

// BeginRetry opens retryable write number of session k in tx, for command
// name (body) of n statements.
func (r *Registry) BeginRetry(tx *kv.Tx, k Key, number int64, body bson.Doc, name string, n int) (*Retry, error) {
	base, ids, err := ParseStmtIDs(body, name, n)
	if err != nil {
		return nil, err
	}
	if err := r.BeginTxn(k, number); err != nil {
		return nil, err
	}
	txn, err := Begin(tx, k, number)
	if err != nil {
		return nil, err
	}
	return &Retry{txn: txn, stats: &r.TxnStats, lsid: k.Doc(), stmtIDs: ids, base: base}, nil
}

// StmtID is statement i's stmtId.
func (r *Retry) StmtID(i int) int32 {
	if r.stmtIDs != nil {
		return r.stmtIDs[i]
	}
	return r.base + int32(i)
}

// Executed returns statement i's recorded result if it ran before. Its
// error (IncompleteTransactionHistory) fails the whole command, as
// mongod's.
func (r *Retry) Executed(i int) (StmtResult, bool, error) {
	if r == nil {
		return StmtResult{}, false, nil
	}
	id := r.StmtID(i)
	res, ok, err := r.txn.Executed(id)
	if err != nil {
		return res, false, fmt.Errorf("statement %d: %w", id, err)
	}
	if ok {
		if len(r.retried) == 0 {
			r.stats.RetriedCommands.Add(1)
		}
		r.retried = append(r.retried, id)
		r.stats.RetriedStatements.Add(1)
	}
	return res, ok, nil
}

// Start begins statement i: the returned statement is the one the
// command's repl.StmtWriter answers until Done (nil when r is).
func (r *Retry) Start(i int) *repl.Stmt {
	if r == nil {
		return nil
	}
	r.before = r.txn.LastOpTime
	return &repl.Stmt{LSID: r.lsid, TxnNumber: r.txn.Number, StmtID: r.StmtID(i), LastOpTime: r.txn.LastOpTime}
}

// Done records statement i, which wrote (st: what Start returned, as the
// oplog writer left it), with result res; next stamps it when no oplog
// entry did.
func (r *Retry) Done(i int, st *repl.Stmt, res StmtResult, next func() repl.Timestamp) error {
	ts := r.before
	if st != nil {
		ts = st.LastOpTime
	}
	if ts == r.before {
		// No oplog entry took a stamp: take one, so that lastWriteOpTime
		// still moves with each write.
		ts = next()
	}
	res.TS = ts
	return r.txn.Record(r.StmtID(i), res)
}

// Finish writes the session's config.transactions record (term: the
// member's write term).
func (r *Retry) Finish(now time.Time, term int64) error {
	if r == nil {
		return nil
	}
	if r.txn.Wrote() {
		r.stats.TransactionsCollectionWrites.Add(1)
	}
	return r.txn.Finish(now, term)
}

// AppendRetried adds retriedStmtIds to a write command's reply.
func (r *Retry) AppendRetried(b *bson.Builder) {
	if r == nil || len(r.retried) == 0 {
		return
	}
	b.StartArray("retriedStmtIds")
	for i, id := range r.retried {
		b.AppendInt32(bson.Index(i), id)
	}
	b.End()
}

// Txn is the session's retryable-write state (findAndModify's images).
func (r *Retry) Txn() *Txn { return r.txn }

// Retried are the stmtIds of the statements Executed found recorded.
func (r *Retry) Retried() []int32 { return r.retried }
