package command

// Retryable writes on the command side. A write command whose request
// carries lsid and txnNumber (accepted in replica-set mode only: see
// checkTxnFields) opens its session's state (session.Txn) inside its own
// write transaction, and for each statement:
//
//   - executed: the statement ran before under this txnNumber; its
//     recorded result is counted and its stmtId reported in
//     retriedStmtIds, and it does not run again;
//   - start: it runs with the command's Ctx answering WriteStmt (the
//     repl.StmtWriter the oplog writer asks), LastOpTime being the
//     previous statement's timestamp, so that its oplog entry carries
//     lsid/txnNumber/stmtId/prevOpTime;
//   - done: when it wrote, its result is recorded with the timestamp the
//     oplog writer gave its entry (or, without an oplog, a fresh stamp of
//     the clock), in the same transaction.
//
// finish writes config.transactions before the commit. Everything is
// nil-safe: a command that is not a retryable write has a nil
// *retryState and every method does nothing.

import (
	"fmt"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/failpoint"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/internal/session"
)

// WriteStmt implements repl.StmtWriter: the retryable statement being
// written (nil: none).
func (c *Ctx) WriteStmt() *repl.Stmt { return c.stmt }

var _ repl.StmtWriter = (*Ctx)(nil)

// retryState is a retryable write command's session state.
type retryState struct {
	c       *Ctx
	txn     *session.Txn
	lsid    bson.Doc
	stmtIDs []int32 // the command's stmtIds (nil: none)
	base    int32   // the command's stmtId (0: none)
	retried []int32
	// before is LastOpTime when the statement started.
	before repl.Timestamp
}

// parseStmtIDs reads the command's stmtId or stmtIds for n statements.
func parseStmtIDs(c *Ctx, n int) (base int32, ids []int32, err error) {
	if v, ok := c.Body.Lookup("stmtId"); ok {
		if v.Type != bson.TypeInt32 {
			return 0, nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.stmtId' is the wrong type '%s', expected type 'int'", c.Name, v.Type)
		}
		base = v.Int32()
	}
	if v, ok := c.Body.Lookup("stmtIds"); ok {
		if v.Type != bson.TypeArray {
			return 0, nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.stmtIds' is the wrong type '%s', expected type 'array'", c.Name, v.Type)
		}
		it := v.Document().Iter()
		for it.Next() {
			e := it.Element().Value
			if e.Type != bson.TypeInt32 {
				return 0, nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.stmtIds.%s' is the wrong type '%s', expected type 'int'", c.Name, it.Element().Key, e.Type)
			}
			ids = append(ids, e.Int32())
		}
		if len(ids) != n {
			return 0, nil, mongoerr.New(mongoerr.InvalidLength, "Number of statement ids must match the number of batch entries. Got %d statement ids but %d operations. Statement ids: %v. Write command: %s", len(ids), n, ids, c.Name)
		}
	}
	return base, ids, nil
}

// beginRetryable opens the command's retryable state in tx; nil when the
// command is not a retryable write. n is the number of statements.
func (c *Ctx) beginRetryable(tx *exec.Tx, n int) (*retryState, error) {
	if c.sess == nil || !c.sess.retryable {
		return nil, nil
	}
	base, ids, err := parseStmtIDs(c, n)
	if err != nil {
		return nil, err
	}
	if err := c.Env.Sessions.BeginTxn(c.sess.key, c.sess.txnNumber); err != nil {
		return nil, err
	}
	txn, err := session.Begin(tx, c.sess.key, c.sess.txnNumber)
	if err != nil {
		return nil, err
	}
	return &retryState{c: c, txn: txn, lsid: c.sess.key.Doc(), stmtIDs: ids, base: base}, nil
}

func (r *retryState) stmtID(i int) int32 {
	if r.stmtIDs != nil {
		return r.stmtIDs[i]
	}
	return r.base + int32(i)
}

// executed returns statement i's recorded result if it ran before. Its
// error (IncompleteTransactionHistory) fails the whole command, as
// mongod's.
func (r *retryState) executed(i int) (session.StmtResult, bool, error) {
	if r == nil {
		return session.StmtResult{}, false, nil
	}
	id := r.stmtID(i)
	res, ok, err := r.txn.Executed(id)
	if err != nil {
		return res, false, fmt.Errorf("statement %d: %w", id, err)
	}
	if ok {
		if len(r.retried) == 0 {
			r.c.Env.Sessions.TxnStats.RetriedCommands.Add(1)
		}
		r.retried = append(r.retried, id)
		r.c.Env.Sessions.TxnStats.RetriedStatements.Add(1)
	}
	return res, ok, nil
}

// start makes statement i the one WriteStmt answers.
func (r *retryState) start(i int) {
	if r == nil {
		return
	}
	r.before = r.txn.LastOpTime
	r.c.stmt = &repl.Stmt{LSID: r.lsid, TxnNumber: r.txn.Number, StmtID: r.stmtID(i), LastOpTime: r.txn.LastOpTime}
}

// abandon ends statement i without recording it (it failed or wrote
// nothing).
func (r *retryState) abandon() {
	if r != nil {
		r.c.stmt = nil
	}
}

// done records statement i, which wrote, with result res.
func (r *retryState) done(i int, res session.StmtResult) error {
	if r == nil {
		return nil
	}
	st := r.c.stmt
	r.c.stmt = nil
	ts := r.before
	if st != nil {
		ts = st.LastOpTime
	}
	if ts == r.before {
		// No oplog entry took a stamp: take one, so that lastWriteOpTime
		// still moves with each write.
		ts = r.c.Env.Repl.Clock.Next()
	}
	res.TS = ts
	if err := r.txn.Record(r.stmtID(i), res); err != nil {
		return err
	}
	return r.c.onPrimaryTransactionalWrite()
}

// onPrimaryTransactionalWrite evaluates the fail point of that name for a
// statement that has just written and been recorded, where mongod's
// TransactionParticipant evaluates it (onWriteOpCompletedOnPrimary, before
// the storage transaction commits): closeConnection (true unless given
// false) drops the connection once the command ends, so the client gets no
// reply and retries; failBeforeCommitExceptionCode fails the command with
// that code, rolling back its writes. (mongod rolls back only the failing
// statement, reported in writeErrors, when a command's statements commit
// one by one; Cairn's command is one transaction: see
// docs/compatibility.md.)
func (c *Ctx) onPrimaryTransactionalWrite() error {
	fp := c.Env.FailPoints
	if fp == nil || !fp.Active() {
		return nil
	}
	cfg, ok := fp.Point(failpoint.OnPrimaryTransactionalWrite).Eval(nil)
	if !ok {
		return nil
	}
	c.Env.Log.Info("Hit onPrimaryTransactionalWrite failpoint", "c", "TXN", "command", c.Name)
	d := cfg.Parsed.(*failpoint.TransactionalWriteData)
	if d.CloseConnection {
		c.CloseConnection = true
	}
	if d.HasFailCode {
		return mongoerr.New(d.FailCode, "Failing write for %s:%d due to failpoint. The write must not be reflected.", c.sess.key.String(), c.sess.txnNumber)
	}
	return nil
}

// finish writes the session's config.transactions record.
func (r *retryState) finish() error {
	if r == nil {
		return nil
	}
	if r.txn.Wrote() {
		r.c.Env.Sessions.TxnStats.TransactionsCollectionWrites.Add(1)
	}
	return r.txn.Finish(time.Now(), r.c.Env.Repl.WriteTerm())
}

// appendRetried adds retriedStmtIds to a write command's reply.
func (r *retryState) appendRetried(b *bson.Builder) {
	if r == nil || len(r.retried) == 0 {
		return
	}
	b.StartArray("retriedStmtIds")
	for i, id := range r.retried {
		b.AppendInt32(bson.Index(i), id)
	}
	b.End()
}

// copyValue detaches v from the buffer it points into.
func copyValue(v bson.Value) bson.Value {
	return bson.Value{Type: v.Type, Data: append([]byte(nil), v.Data...)}
}

// fatal makes a statement's error end the whole command (w.run treats
// only bare *mongoerr.Error as a statement's error).
func fatal(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w", err)
}
