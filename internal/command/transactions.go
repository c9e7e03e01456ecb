package command

// Multi-document transactions on the command path, as mongod 7.0's
// TransactionParticipant: a command carrying autocommit: false (with lsid
// and txnNumber; checkTxnFields checked their shapes) checks its
// session's transaction slot out (internal/session/transaction.go) for
// its whole run, and begins or continues the transaction by mongod's
// rules (session.BeginStatement, internal/session/statement.go).
//
// A statement reads the transaction's concurrent kv transaction (the
// command's snapshot is it: exec.Snapshot.UseTxn) and writes in it
// (writeTx runs fn on it and commits nothing); oplog entries are buffered
// by the oplog (oplog/txn.go). Any error of a statement aborts the
// transaction, as mongod's. commitTransaction commits the kv transaction
// with the write concern's durability; inside that commit (kv.Tx.OnCommit,
// under the writer lock) the oplog gets one applyOps entry stamped in
// commit order and config.transactions the session's state.

import (
	"context"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/internal/session"
)

// defaultTxnLifetime is transactionLifetimeLimitSeconds' default.
const defaultTxnLifetime = 60 * time.Second

// txnLifetime is transactionLifetimeLimitSeconds.
func (e *Env) txnLifetime() time.Duration {
	if s := e.state.txnLifetimeSecs.Load(); s > 0 {
		return time.Duration(s) * time.Second
	}
	return defaultTxnLifetime
}

func isCommitOrAbort(name string) bool { return session.IsCommitOrAbort(name) }

// beginTxnStatement checks session k's slot out for cmd, a statement of
// transaction n, and begins or continues the transaction.
func beginTxnStatement(c *Ctx, cmd *Command, k session.Key, n int64) error {
	if err := session.CheckTxnCommand(cmd.Name); err != nil {
		return err
	}
	slot := c.Env.Sessions.Slot(k)
	if slot == nil {
		return mongoerr.New(mongoerr.NoSuchTransaction, "Given transaction number %d does not match any in-progress transactions. The active transaction number is -1", n)
	}
	if !slot.Checkout(c.Done()) {
		return ctxErr(c.Err())
	}
	c.sess.slot = slot
	if slot.Number < 0 {
		if err := restoreTxn(c, slot, k); err != nil {
			return err
		}
	}
	active := max(c.Env.Sessions.ActiveTxn(k), slot.Number)
	how, start, err := session.BeginStatement(slot, k, n, active, cmd.Name, c.Body)
	switch {
	case err != nil:
		return err
	case how == session.Starting:
		// The transaction begins in openTxn, after any afterClusterTime
		// wait (its snapshot includes what was waited for) and the
		// failCommand fail point (which fires before it, as mongod's).
		c.txnStart = start
		return nil
	case how == session.Answered:
		return nil
	}
	c.txn = slot
	return c.useTxn()
}

// restoreTxn gives a slot that knows no transaction (the session's first
// statement since the server started) the committed transaction its
// config.transactions record holds, as mongod refreshes a session's
// transaction state from storage: a commitTransaction retried across a
// restart answers ok, the number's other statements TransactionCommitted.
func restoreTxn(c *Ctx, slot *session.Slot, k session.Key) error {
	tx, err := c.currentTx()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	n, ts, ok, err := session.CommittedTxn(tx, k)
	if err != nil || !ok {
		return err
	}
	slot.Restore(n, int64(ts))
	return nil
}

// openTxn begins the transaction that the command starts (after
// checkReplCommand's waits and the fail points).
func (c *Ctx) openTxn() error {
	st := c.txnStart
	if st == nil {
		return nil
	}
	c.txnStart = nil
	if err := c.Env.Sessions.BeginTxn(st.Key, st.N); err != nil {
		return err
	}
	slot := st.Slot
	slot.Begin(st.N, nil, st.ReadConcern, c.Env.txnLifetime(), time.Now())
	c.txn = slot
	tx, err := c.Env.KV.BeginConcurrent(context.Background())
	if err != nil {
		slot.End(false)
		c.txn = nil
		return err
	}
	slot.Tx = tx
	slot.Attach(tx)
	oplog, cursors := c.Env.Oplog, c.Env.Cursors
	slot.OnEnd = func(tx *exec.Tx) {
		oplog.DropTxn(tx)
		cursors.KillTxn(tx) // its cursors end with it, as mongod's
	}
	return c.useTxn()
}

// useTxn makes the transaction's kv transaction the command's snapshot
// and write transaction.
func (c *Ctx) useTxn() error {
	if c.txn.Killed() || c.txn.Tx == nil {
		n := c.txn.Number
		c.txn = nil
		return mongoerr.New(mongoerr.NoSuchTransaction, "Transaction with { txnNumber: %d } has been aborted.", n)
	}
	c.txn.Tx.Lend(true)
	c.snap.UseTxn(c.txn.Tx)
	return nil
}

// finishTxnStatement ends a statement of a transaction: its error aborts
// the transaction.
func (c *Ctx) finishTxnStatement(err error) error {
	if c.txn == nil {
		return err
	}
	if c.txn.Tx != nil {
		c.txn.Tx.Lend(false)
	}
	if err != nil && c.txn.State == session.TxnInProgress && !isCommitOrAbort(c.Name) {
		c.txn.End(false)
	}
	return err
}

// releaseSession gives the session's slot back at the end of the
// command.
func (c *Ctx) releaseSession() {
	if c.sess == nil || c.sess.slot == nil {
		return
	}
	if c.txn != nil && c.txn.Tx != nil {
		c.txn.Tx.Lend(false)
	}
	c.snap.Release()
	c.sess.slot.Release()
}

// commitTransaction commits the session's transaction.
func commitTransaction(c *Ctx) error {
	if c.sess == nil || c.sess.slot == nil {
		return mongoerr.New(mongoerr.InvalidOptions, "commitTransaction must be run within a session")
	}
	slot := c.sess.slot
	wc, err := parseWriteConcern(c)
	if err != nil {
		return err
	}
	if slot.State == session.TxnCommitted {
		// A retried commit: its outcome again, once durable as asked.
		if err := c.writeTx(wc.durability(), func(*exec.Tx) error { return nil }); err != nil {
			return err
		}
		c.opTime = max(c.opTime, repl.Timestamp(slot.CommitTS))
		return nil
	}
	tx := slot.Tx
	tx.Lend(false)
	k, n := c.sess.key, slot.Number
	var ts repl.Timestamp
	tx.OnCommit(func(wt *exec.Tx) error {
		ops := c.Env.Oplog.TakeTxn(tx)
		if len(ops) > 0 {
			var err error
			if ts, err = c.Env.Oplog.AppendTxn(wt, k.Doc(), n, ops); err != nil {
				return err
			}
		}
		if ts == 0 {
			ts = c.Env.Repl.Clock.Next()
		}
		c.Env.Sessions.TxnStats.TransactionsCollectionWrites.Add(1)
		return session.RecordTxn(wt, k, n, ts, "committed", time.Now(), c.Env.Repl.WriteTerm())
	})
	err = tx.CommitWith(wc.durability())
	if err != nil {
		slot.End(false)
		return asTxnErr(err, n)
	}
	slot.CommitTS = int64(ts)
	slot.End(true)
	c.txn = nil
	c.txTS = ts
	c.committedTx()
	return nil
}

// abortTransaction aborts the session's transaction.
func abortTransaction(c *Ctx) error {
	if c.sess == nil || c.sess.slot == nil {
		return mongoerr.New(mongoerr.InvalidOptions, "abortTransaction must be run within a session")
	}
	if _, err := parseWriteConcern(c); err != nil {
		return err
	}
	c.sess.slot.End(false)
	c.txn = nil
	return nil
}

// asTxnErr is the error of a commit that failed.
func asTxnErr(err error, n int64) error {
	e := asMongoErr(err)
	if e.Code == mongoerr.InternalError {
		return err
	}
	if e.Code == mongoerr.NoSuchTransaction {
		return mongoerr.New(mongoerr.NoSuchTransaction, "Transaction with { txnNumber: %d } has been aborted.", n)
	}
	return e
}

// transientTxnError is the TransientTransactionError label's rule
// (session.TransientError).
func (c *Ctx) transientTxnError(code int32, hasWCError bool) bool {
	return session.TransientError(c.Name, c.Body, code, hasWCError)
}

// hasField reports whether the raw document d has field name.
func hasField(d []byte, name string) bool {
	if len(d) == 0 {
		return false
	}
	_, ok := bson.Doc(d).Lookup(name)
	return ok
}

// RunTxnReaper aborts, every interval until ctx ends, the transactions
// open for longer than transactionLifetimeLimitSeconds, as mongod's
// periodic transaction abort job.
func (e *Env) RunTxnReaper(ctx context.Context, interval time.Duration) {
	if e.Sessions == nil {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			e.state.rs.Snaps.Prune(now, e.state.rs.SnapWindow())
			if n := e.Sessions.ExpireTxns(now); n > 0 {
				e.Log.Info("Aborting transactions that exceeded transactionLifetimeLimitSeconds", "c", "TXN", "count", n)
			}
		}
	}
}
