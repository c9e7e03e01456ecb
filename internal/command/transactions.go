package command

// commitTransaction and abortTransaction. Multi-document transactions on
// the command path are mongod 7.0's TransactionParticipant: a command
// carrying autocommit: false checks its session's transaction slot out for
// its whole run and begins or continues the transaction
// (internal/dispatch/session.go, over internal/session).
//
// A statement reads the transaction's concurrent kv transaction (the
// command's snapshot is it: exec.Snapshot.UseTxn) and writes in it
// (WriteTx runs fn on it and commits nothing); oplog entries are buffered
// by the oplog (oplog/txn.go). Any error of a statement aborts the
// transaction, as mongod's. commitTransaction commits the kv transaction
// with the write concern's durability; inside that commit (kv.Tx.OnCommit,
// under the writer lock) the oplog gets one applyOps entry stamped in
// commit order and config.transactions the session's state.

import (
	"time"

	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/internal/session"
)

// commitTransaction commits the session's transaction.
func commitTransaction(c *Ctx) error {
	if c.Sess == nil || c.Sess.Slot == nil {
		return mongoerr.New(mongoerr.InvalidOptions, "commitTransaction must be run within a session")
	}
	slot := c.Sess.Slot
	wc, err := parseWriteConcern(c)
	if err != nil {
		return err
	}
	if slot.State == session.TxnCommitted {
		// A retried commit: its outcome again, once durable as asked.
		if err := c.WriteTx(wc.durability(), func(*exec.Tx) error { return nil }); err != nil {
			return err
		}
		c.LastOpTime = max(c.LastOpTime, repl.Timestamp(slot.CommitTS))
		return nil
	}
	tx := slot.Tx
	tx.Lend(false)
	k, n := c.Sess.Key, slot.Number
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
	c.Txn = nil
	c.TxTS = ts
	c.CommittedTx()
	return nil
}

// abortTransaction aborts the session's transaction.
func abortTransaction(c *Ctx) error {
	if c.Sess == nil || c.Sess.Slot == nil {
		return mongoerr.New(mongoerr.InvalidOptions, "abortTransaction must be run within a session")
	}
	if _, err := parseWriteConcern(c); err != nil {
		return err
	}
	c.Sess.Slot.End(false)
	c.Txn = nil
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
