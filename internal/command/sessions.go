package command

// Logical sessions on the command path: Dispatch reads a request's lsid,
// txnNumber, autocommit and startTransaction as mongod's
// initializeOperationSessionInfo does (sessionInfo), touches the session
// in the registry (internal/session) and registers the running operation
// under it, so that killSessions and its relatives can interrupt it. The
// session commands live here too; retryable writes are in retry.go.

import (
	"crypto/rand"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/session"
)

// sessionInfo is a request's session: its key and, for a retryable
// write, its transaction number.
type sessionInfo struct {
	key session.Key
	// retryable: txnNumber was given (and accepted) on a retryable write
	// command in replica-set mode.
	retryable bool
	txnNumber int64
	// slot is the session's transaction slot while the command holds it
	// checked out (transactions.go).
	slot *session.Slot
}

// retryableCommands are the commands that take a txnNumber outside
// transactions, by canonical name.
var retryableCommands = map[string]bool{"insert": true, "update": true, "delete": true, "findAndModify": true}

// sessionUser is the name ("user@db") of the user authenticated on the
// command's connection ("" when none).
func sessionUser(c *Ctx) string {
	if c == nil || c.Conn == nil {
		return ""
	}
	if u := c.Conn.session().User(); u != nil {
		return u.User + "@" + u.DB
	}
	return ""
}

// sessionDigest is the uid of the command's user's sessions.
func sessionDigest(c *Ctx) [32]byte { return session.UserDigest(sessionUser(c)) }

// checkTxnFields refuses, before anything runs, the transaction fields a
// request may not carry: as mongod, txnNumber needs an lsid and a replica
// set, autocommit needs a txnNumber and startTransaction autocommit.
func checkTxnFields(c *Ctx) error {
	_, hasLsid := c.Body.Lookup("lsid")
	txn, hasTxn := c.Body.Lookup("txnNumber")
	ac, hasAC := c.Body.Lookup("autocommit")
	st, hasST := c.Body.Lookup("startTransaction")
	if !hasTxn && !hasAC && !hasST {
		return nil
	}
	if hasTxn {
		if !hasLsid {
			return mongoerr.New(mongoerr.InvalidOptions, "Transaction number requires a session ID to also be specified")
		}
		if c.Env.Repl == nil {
			// A standalone refuses transaction numbers before running
			// anything, so that no write of a transaction lands outside one.
			return mongoerr.New(mongoerr.IllegalOperation, "Transaction numbers are only allowed on a replica set member or mongos")
		}
		if txn.Type != bson.TypeInt64 {
			return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'OperationSessionInfo.txnNumber' is the wrong type '%s', expected type 'long'", txn.Type)
		}
		if txn.Int64() < 0 {
			return mongoerr.New(mongoerr.InvalidOptions, "Transaction number cannot be negative")
		}
	} else if hasAC {
		return mongoerr.New(mongoerr.InvalidOptions, "'autocommit' field requires a transaction number to also be specified")
	}
	if hasAC {
		if ac.Type != bson.TypeBoolean {
			return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'OperationSessionInfo.autocommit' is the wrong type '%s', expected type 'bool'", ac.Type)
		}
		if ac.Boolean() {
			return mongoerr.New(mongoerr.InvalidOptions, "Specifying autocommit=true is not allowed.")
		}
	} else if hasST {
		return mongoerr.New(mongoerr.InvalidOptions, "'startTransaction' field requires 'autocommit' field to also be specified")
	}
	if hasST && (st.Type != bson.TypeBoolean || !st.Boolean()) {
		return mongoerr.New(mongoerr.InvalidOptions, "Specifying startTransaction=false is not allowed.")
	}
	return nil
}

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
	if c.Env.Auth.Enabled() && (c.Conn == nil || !c.Conn.session().Authenticated()) {
		// No user, no uid: mongod ignores the session.
		return nil
	}
	k, err := session.ParseLSID(lsid, sessionDigest(c), "OperationSessionInfo.lsid")
	if err != nil {
		return err
	}
	if err := c.Env.Sessions.Vivify(k, sessionUser(c)); err != nil {
		return err
	}
	c.sess = &sessionInfo{key: k}
	if _, hasAC := c.Body.Lookup("autocommit"); hasAC && hasTxn {
		return beginTxnStatement(c, cmd, k, txn.Int64())
	}
	if hasTxn {
		if !retryableCommands[cmd.Name] {
			return mongoerr.New(mongoerr.NotARetryableWriteCommand, "txnNumber may only be provided for multi-document transactions and retryable write commands. autocommit:false was not provided, and %s is not a retryable write command.", cmd.Name)
		}
		c.sess.retryable, c.sess.txnNumber = true, txn.Int64()
		return checkRetryableAgainstTxn(c, k, txn.Int64())
	}
	return nil
}

// checkRetryableAgainstTxn checks the session's slot out for retryable
// write n (one command of a session at a time, as mongod) and checks it
// against the session's transaction, as mongod's beginOrContinue: a
// lower number than the transaction's is TransactionTooOld, the
// transaction's own number IncompleteTransactionHistory, and a higher one
// aborts the open transaction.
func checkRetryableAgainstTxn(c *Ctx, k session.Key, n int64) error {
	slot := c.Env.Sessions.Slot(k)
	if slot == nil {
		return nil
	}
	if !slot.Checkout(c.Done()) {
		return ctxErr(c.Err())
	}
	c.sess.slot = slot
	switch {
	case slot.Number < 0:
	case n < slot.Number:
		return mongoerr.New(mongoerr.TransactionTooOld, "Cannot start transaction with { txnNumber: %d, txnRetryCounter: 0 } on session %s because a newer transaction with txnNumberAndRetryCounter { txnNumber: %d, txnRetryCounter: 0 } has already started on this session.", n, k, slot.Number)
	case n == slot.Number:
		return mongoerr.New(mongoerr.IncompleteTransactionHistory, "Cannot retry a retryable write that has been converted into a transaction")
	case slot.State == session.TxnInProgress:
		slot.End(false)
	}
	return nil
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

// sessionTimeoutMinutes is logicalSessionTimeoutMinutes.
func (e *Env) sessionTimeoutMinutes() int32 {
	if e.Sessions == nil {
		return session.DefaultTimeoutMinutes
	}
	return e.Sessions.TimeoutMinutes()
}

func startSession(c *Ctx) error {
	if c.Env.Auth.Enabled() && !c.Conn.session().Authenticated() {
		return mongoerr.New(mongoerr.Unauthorized, "there are no users authenticated")
	}
	var k session.Key
	if _, err := rand.Read(k.ID[:]); err != nil {
		return err
	}
	k.ID[6] = k.ID[6]&0x0f | 0x40 // version 4
	k.ID[8] = k.ID[8]&0x3f | 0x80 // RFC 4122 variant
	k.UID = sessionDigest(c)
	if err := c.Env.Sessions.Vivify(k, sessionUser(c)); err != nil {
		return err
	}
	r := c.Reply
	r.StartDocument("id")
	r.AppendBinary("id", 4, k.ID[:])
	r.End()
	r.AppendInt32("timeoutMinutes", c.Env.sessionTimeoutMinutes())
	return nil
}

// sessionList reads the array of lsids of refreshSessions, endSessions
// and killSessions.
func sessionList(c *Ctx) ([]session.Key, error) {
	first := newArgs(c).first()
	if first.Type != bson.TypeArray {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected type 'array'", c.Name, c.Name, first.Type)
	}
	uid := sessionDigest(c)
	var keys []session.Key
	it := first.Document().Iter()
	for it.Next() {
		k, err := session.ParseLSID(it.Element().Value, uid, c.Name+"."+c.Name)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	if len(keys) > MaxWriteBatchSize*10 {
		return nil, mongoerr.New(mongoerr.BadValue, "%s may list at most %d sessions", c.Name, MaxWriteBatchSize*10)
	}
	return keys, nil
}

func refreshSessions(c *Ctx) error {
	keys, err := sessionList(c)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := c.Env.Sessions.Vivify(k, sessionUser(c)); err != nil {
			return err
		}
	}
	return nil
}

func endSessions(c *Ctx) error {
	keys, err := sessionList(c)
	if err != nil {
		return err
	}
	c.Env.Sessions.End(keys)
	c.Env.KillSessions(keys)
	return nil
}

func killSessions(c *Ctx) error {
	keys, err := sessionList(c)
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		// Every session of the caller (every session when access
		// control is off: they all have the empty user's uid).
		uid := sessionDigest(c)
		keys = c.Env.Sessions.Matching(func(r *session.Record) bool { return r.UID == uid })
	}
	c.Env.KillSessions(keys)
	return nil
}
