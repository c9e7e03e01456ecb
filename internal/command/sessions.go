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
		if !session.RetryableCommands[cmd.Name] {
			return mongoerr.New(mongoerr.NotARetryableWriteCommand, "txnNumber may only be provided for multi-document transactions and retryable write commands. autocommit:false was not provided, and %s is not a retryable write command.", cmd.Name)
		}
		c.sess.retryable, c.sess.txnNumber = true, txn.Int64()
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
	c.sess.slot = slot
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
// and killSessions (session.ParseList).
func sessionList(c *Ctx) ([]session.Key, error) {
	return session.ParseList(newArgs(c).first(), sessionDigest(c), c.Name, MaxWriteBatchSize*10)
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
