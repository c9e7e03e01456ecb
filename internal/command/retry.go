package command

// Retryable writes on the command side (internal/session/retry.go holds
// the statements' bookkeeping): the command's Ctx answers WriteStmt with
// the statement being written, and the onPrimaryTransactionalWrite fail
// point fires once a statement is recorded. Everything is nil-safe: a
// command that is not a retryable write has a nil *retryState.

import (
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
	c *Ctx
	r *session.Retry
	// txn is the session's state and retried the statements found
	// executed (findAndModify reads them).
	txn     *session.Txn
	retried []int32
}

// beginRetryable opens the command's retryable state in tx; nil when the
// command is not a retryable write. n is the number of statements.
func (c *Ctx) beginRetryable(tx *exec.Tx, n int) (*retryState, error) {
	if c.sess == nil || !c.sess.retryable {
		return nil, nil
	}
	r, err := c.Env.Sessions.BeginRetry(tx, c.sess.key, c.sess.txnNumber, c.Body, c.Name, n)
	if err != nil {
		return nil, err
	}
	return &retryState{c: c, r: r, txn: r.Txn()}, nil
}

// executed returns statement i's recorded result if it ran before.
func (r *retryState) executed(i int) (session.StmtResult, bool, error) {
	if r == nil {
		return session.StmtResult{}, false, nil
	}
	res, ok, err := r.r.Executed(i)
	r.retried = r.r.Retried()
	return res, ok, err
}

// start makes statement i the one WriteStmt answers.
func (r *retryState) start(i int) {
	if r != nil {
		r.c.stmt = r.r.Start(i)
	}
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
	if err := r.r.Done(i, st, res, r.c.Env.Repl.Clock.Next); err != nil {
		return err
	}
	return r.c.onPrimaryTransactionalWrite()
}

// finish writes the session's config.transactions record.
func (r *retryState) finish() error {
	if r == nil {
		return nil
	}
	return r.r.Finish(time.Now(), r.c.Env.Repl.WriteTerm())
}

// appendRetried adds retriedStmtIds to a write command's reply.
func (r *retryState) appendRetried(b *bson.Builder) {
	if r != nil {
		r.r.AppendRetried(b)
	}
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
