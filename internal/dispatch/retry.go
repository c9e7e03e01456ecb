package dispatch

// Retryable writes on the command side (internal/session/retry.go holds
// the statements' bookkeeping): the command's Ctx answers WriteStmt with
// the statement being written, and the onPrimaryTransactionalWrite fail
// point fires once a statement is recorded. Everything is nil-safe: a
// command that is not a retryable write has a nil *RetryState.

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
func (c *Ctx) WriteStmt() *repl.Stmt { return c.Stmt }

var _ repl.StmtWriter = (*Ctx)(nil)

// RetryState is a retryable write command's session state.
type RetryState struct {
	c *Ctx
	r *session.Retry
	// Txn is the session's state and Retried the statements found
	// executed (findAndModify reads them).
	Txn     *session.Txn
	Retried []int32
}

// BeginRetryable opens the command's retryable state in tx; nil when the
// command is not a retryable write. n is the number of statements.
func (c *Ctx) BeginRetryable(tx *exec.Tx, n int) (*RetryState, error) {
	if c.Sess == nil || !c.Sess.Retryable {
		return nil, nil
	}
	r, err := c.Env.Sessions.BeginRetry(tx, c.Sess.Key, c.Sess.TxnNumber, c.Body, c.Name, n)
	if err != nil {
		return nil, err
	}
	return &RetryState{c: c, r: r, Txn: r.Txn()}, nil
}

// Executed returns statement i's recorded result if it ran before.
func (r *RetryState) Executed(i int) (session.StmtResult, bool, error) {
	if r == nil {
		return session.StmtResult{}, false, nil
	}
	res, ok, err := r.r.Executed(i)
	r.Retried = r.r.Retried()
	return res, ok, err
}

// Start makes statement i the one WriteStmt answers.
func (r *RetryState) Start(i int) {
	if r != nil {
		r.c.Stmt = r.r.Start(i)
	}
}

// Abandon ends statement i without recording it (it failed or wrote
// nothing).
func (r *RetryState) Abandon() {
	if r != nil {
		r.c.Stmt = nil
	}
}

// Done records statement i, which wrote, with result res.
func (r *RetryState) Done(i int, res session.StmtResult) error {
	if r == nil {
		return nil
	}
	st := r.c.Stmt
	r.c.Stmt = nil
	if err := r.r.Done(i, st, res, r.c.Env.Repl.Clock.Next); err != nil {
		return err
	}
	return r.c.onPrimaryTransactionalWrite()
}

// Finish writes the session's config.transactions record.
func (r *RetryState) Finish() error {
	if r == nil {
		return nil
	}
	return r.r.Finish(time.Now(), r.c.Env.Repl.WriteTerm())
}

// AppendRetried adds retriedStmtIds to a write command's reply.
func (r *RetryState) AppendRetried(b *bson.Builder) {
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
		return mongoerr.New(d.FailCode, "Failing write for %s:%d due to failpoint. The write must not be reflected.", c.Sess.Key.String(), c.Sess.TxnNumber)
	}
	return nil
}
