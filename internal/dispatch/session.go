package dispatch

// Logical sessions and transactions around a command: Dispatch reads a
// request's lsid, txnNumber, autocommit and startTransaction as mongod's
// initializeOperationSessionInfo does (SessionInfo), touches the session
// in the registry (internal/session) and registers the running operation
// under it, so that killSessions and its relatives can interrupt it. A
// command carrying autocommit: false (with lsid and txnNumber;
// checkTxnFields checked their shapes) checks its session's transaction
// slot out (internal/session/transaction.go) for its whole run, and
// begins or continues the transaction by mongod's rules
// (session.BeginStatement); the transaction's kv transaction is then the
// command's snapshot and write transaction (useTxn). commitTransaction and
// abortTransaction are internal/command's.

import (
	"context"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/session"
)

// SessionInfo is a request's session: its key and, for a retryable
// write, its transaction number.
type SessionInfo struct {
	Key session.Key
	// Retryable: txnNumber was given (and accepted) on a retryable write
	// command in replica-set mode.
	Retryable bool
	TxnNumber int64
	// Slot is the session's transaction slot while the command holds it
	// checked out (session.go).
	Slot *session.Slot
}

// SessionUser is the name ("user@db") of the user authenticated on the
// command's connection ("" when none).
func SessionUser(c *Ctx) string {
	if c == nil || c.Conn == nil {
		return ""
	}
	if u := c.Conn.Session().User(); u != nil {
		return u.User + "@" + u.DB
	}
	return ""
}

// SessionDigest is the uid of the command's user's sessions.
func SessionDigest(c *Ctx) [32]byte { return session.UserDigest(SessionUser(c)) }

// checkTxnFields refuses, before anything runs, the transaction fields a
// request may not carry (session.CheckFields).
func checkTxnFields(c *Ctx) error { return session.CheckFields(c.Body, c.Env.Repl != nil) }

// beginSession reads the request's lsid for cmd (after the command is
// known and authorized): the session is created or touched, and a
// txnNumber is accepted on retryable writes only.
func beginSession(c *Ctx, cmd *Command) error {
	lsid, hasLsid := c.Body.Lookup("lsid")
	txn, hasTxn := c.Body.Lookup("txnNumber")
	if !hasLsid || c.Env.Sessions == nil {
		return nil
	}
	if hasTxn && cmd.Needs == auth.Open {
		return mongoerr.New(mongoerr.TxnNumberNotAllowed, "It is illegal to provide a txnNumber for this command")
	}
	if c.Env.Auth.Enabled() && (c.Conn == nil || !c.Conn.Session().Authenticated()) {
		// No user, no uid: mongod ignores the session.
		return nil
	}
	k, err := session.ParseLSID(lsid, SessionDigest(c), "OperationSessionInfo.lsid")
	if err != nil {
		return err
	}
	if err := c.Env.Sessions.Vivify(k, SessionUser(c)); err != nil {
		return err
	}
	c.Sess = &SessionInfo{Key: k}
	if _, hasAC := c.Body.Lookup("autocommit"); hasAC && hasTxn {
		return beginTxnStatement(c, cmd, k, txn.Int64())
	}
	if hasTxn {
		if !session.RetryableCommands[cmd.Name] {
			return mongoerr.New(mongoerr.NotARetryableWriteCommand, "txnNumber may only be provided for multi-document transactions and retryable write commands. autocommit:false was not provided, and %s is not a retryable write command.", cmd.Name)
		}
		c.Sess.Retryable, c.Sess.TxnNumber = true, txn.Int64()
		return checkRetryableAgainstTxn(c, k, txn.Int64())
	}
	return nil
}

// checkRetryableAgainstTxn checks the session's slot out for retryable
// write n (one command of a session at a time, as mongod) and checks it
// against the session's transaction (session.CheckRetryable).
func checkRetryableAgainstTxn(c *Ctx, k session.Key, n int64) error {
	slot := c.Env.Sessions.Slot(k)
	if slot == nil {
		return nil
	}
	if !slot.Checkout(c.Done()) {
		return ctxErr(c.Err())
	}
	c.Sess.Slot = slot
	return session.CheckRetryable(slot, k, n)
}

// KillSessions kills the cursors and running operations of the sessions
// in keys (killSessions and its relatives, endSessions, expiry).
func (e *Env) KillSessions(keys []session.Key) {
	if len(keys) == 0 {
		return
	}
	set := make(map[session.Key]bool, len(keys))
	ids := make(map[[16]byte]bool, len(keys))
	for _, k := range keys {
		set[k] = true
		ids[k.ID] = true
	}
	e.Ops.KillSessions(func(k any) bool { return set[k.(session.Key)] })
	for _, k := range keys {
		// A killed session's open transaction is aborted.
		if s := e.Sessions.Slot(k); s != nil {
			s.AbortAsync()
		}
	}
	e.Cursors.KillWhere(func(lsid []byte) bool {
		v := bson.Value{Type: bson.TypeBinary, Data: lsid}
		_, id := v.Binary()
		var k [16]byte
		copy(k[:], id)
		return len(id) == 16 && ids[k]
	})
}

// SessionTimeoutMinutes is logicalSessionTimeoutMinutes.
func (e *Env) SessionTimeoutMinutes() int32 {
	if e.Sessions == nil {
		return session.DefaultTimeoutMinutes
	}
	return e.Sessions.TimeoutMinutes()
}

// defaultTxnLifetime is transactionLifetimeLimitSeconds' default.
const defaultTxnLifetime = 60 * time.Second

// TxnLifetime is transactionLifetimeLimitSeconds.
func (e *Env) TxnLifetime() time.Duration {
	if s := e.State.TxnLifetimeSecs.Load(); s > 0 {
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
	c.Sess.Slot = slot
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
	c.Txn = slot
	return c.useTxn()
}

// restoreTxn gives a slot that knows no transaction (the session's first
// statement since the server started) the committed transaction its
// config.transactions record holds, as mongod refreshes a session's
// transaction state from storage: a commitTransaction retried across a
// restart answers ok, the number's other statements TransactionCommitted.
func restoreTxn(c *Ctx, slot *session.Slot, k session.Key) error {
	tx, err := c.CurrentTx()
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
	slot.Begin(st.N, nil, st.ReadConcern, c.Env.TxnLifetime(), time.Now())
	c.Txn = slot
	tx, err := c.Env.KV.BeginConcurrent(context.Background())
	if err != nil {
		slot.End(false)
		c.Txn = nil
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
	if c.Txn.Killed() || c.Txn.Tx == nil {
		n := c.Txn.Number
		c.Txn = nil
		return mongoerr.New(mongoerr.NoSuchTransaction, "Transaction with { txnNumber: %d } has been aborted.", n)
	}
	c.Txn.Tx.Lend(true)
	c.Snap.UseTxn(c.Txn.Tx)
	return nil
}

// finishTxnStatement ends a statement of a transaction: its error aborts
// the transaction.
func (c *Ctx) finishTxnStatement(err error) error {
	if c.Txn == nil {
		return err
	}
	if c.Txn.Tx != nil {
		c.Txn.Tx.Lend(false)
	}
	if err != nil && c.Txn.State == session.TxnInProgress && !isCommitOrAbort(c.Name) {
		c.Txn.End(false)
	}
	return err
}

// releaseSession gives the session's slot back at the end of the
// command.
func (c *Ctx) releaseSession() {
	if c.Sess == nil || c.Sess.Slot == nil {
		return
	}
	if c.Txn != nil && c.Txn.Tx != nil {
		c.Txn.Tx.Lend(false)
	}
	c.Snap.Release()
	c.Sess.Slot.Release()
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
			e.State.RS.Snaps.Prune(now, e.State.RS.SnapWindow())
			if n := e.Sessions.ExpireTxns(now); n > 0 {
				e.Log.Info("Aborting transactions that exceeded transactionLifetimeLimitSeconds", "c", "TXN", "count", n)
			}
		}
	}
}
