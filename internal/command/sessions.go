package command

// The session commands: startSession, refreshSessions, endSessions and
// killSessions. Dispatch reads a request's lsid, txnNumber, autocommit and
// startTransaction (internal/dispatch/session.go); retryable writes'
// statements are internal/dispatch/retry.go's.

import (
	"crypto/rand"

	"github.com/cairndb/cairn/internal/dispatch"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/session"
)

func startSession(c *Ctx) error {
	if c.Env.Auth.Enabled() && !c.Conn.Session().Authenticated() {
		return mongoerr.New(mongoerr.Unauthorized, "there are no users authenticated")
	}
	var k session.Key
	if _, err := rand.Read(k.ID[:]); err != nil {
		return err
	}
	k.ID[6] = k.ID[6]&0x0f | 0x40 // version 4
	k.ID[8] = k.ID[8]&0x3f | 0x80 // RFC 4122 variant
	k.UID = dispatch.SessionDigest(c)
	if err := c.Env.Sessions.Vivify(k, dispatch.SessionUser(c)); err != nil {
		return err
	}
	r := c.Reply
	r.StartDocument("id")
	r.AppendBinary("id", 4, k.ID[:])
	r.End()
	r.AppendInt32("timeoutMinutes", c.Env.SessionTimeoutMinutes())
	return nil
}

// sessionList reads the array of lsids of refreshSessions, endSessions
// and killSessions (session.ParseList).
func sessionList(c *Ctx) ([]session.Key, error) {
	return session.ParseList(newArgs(c).First(), dispatch.SessionDigest(c), c.Name, MaxWriteBatchSize*10)
}

func refreshSessions(c *Ctx) error {
	keys, err := sessionList(c)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := c.Env.Sessions.Vivify(k, dispatch.SessionUser(c)); err != nil {
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
		uid := dispatch.SessionDigest(c)
		keys = c.Env.Sessions.Matching(func(r *session.Record) bool { return r.UID == uid })
	}
	c.Env.KillSessions(keys)
	return nil
}
