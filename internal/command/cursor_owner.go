package command

import (
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Cursor ownership under access control, as mongod: a cursor belongs to
// the user authenticated on the connection that opened it; getMore needs
// that same user (isCoauthorizedWith), killCursors needs that user or the
// killAnyCursor privilege on the cluster.

// cursorOwner is the user a cursor opened by c belongs to: nil without
// access control or without an authenticated user.
func cursorOwner(c *Ctx) *auth.UserName {
	if !c.Env.Auth.Enabled() || c.Conn == nil {
		return nil
	}
	if u := c.Conn.session().User(); u != nil {
		owner := *u
		return &owner
	}
	return nil
}

// ownsCursor reports whether the user authenticated on cn is the one that
// opened cur (both none counts: a cursor opened without a user, under the
// localhost exception, stays usable without one).
func ownsCursor(env *Env, cn *Conn, cur *exec.Cursor) bool {
	if !env.Auth.Enabled() || cn == nil {
		return true
	}
	u := cn.session().User()
	if u == nil || cur.Owner == nil {
		return u == nil && cur.Owner == nil
	}
	return *u == *cur.Owner
}

// cursorOrigin is what the command opening a cursor needed (nil without
// access control).
func cursorOrigin(c *Ctx) []need {
	if !c.Env.Auth.Enabled() || c.Conn == nil || c.cmd == nil {
		return nil
	}
	return requirements(c, c.cmd)
}

// mayContinueCursor checks a getMore as mongod does: the cursor must be
// the caller's, and the caller must still hold the privileges of the
// command that opened it (a role revoked meanwhile stops the cursor).
func mayContinueCursor(c *Ctx, cur *exec.Cursor) error {
	if !ownsCursor(c.Env, c.Conn, cur) {
		return mongoerr.New(mongoerr.Unauthorized, "cursor id %d was not created by the authenticated user", cur.ID)
	}
	if len(cur.Origin) == 0 {
		return nil
	}
	privs, _, err := c.Conn.session().Privileges(c.Env.Auth)
	if err != nil {
		return err
	}
	for _, n := range cur.Origin {
		if !privs.Permits(n) {
			return mongoerr.New(mongoerr.Unauthorized, "not authorized for getMore with cursor id %d", cur.ID)
		}
	}
	return nil
}

// mayKillCursor reports whether cn may kill cur: its owner, or a user
// with killAnyCursor on the cluster.
func mayKillCursor(env *Env, cn *Conn, cur *exec.Cursor) bool {
	if ownsCursor(env, cn, cur) {
		return true
	}
	privs, _, err := cn.session().Privileges(env.Auth)
	return err == nil && privs.Allows("", auth.KillAnyCursor)
}

// KillCursorFor kills cursor id for OP_KILL_CURSORS when the connection
// may (mongod skips the others silently: the legacy message has no
// reply); it reports whether the cursor was killed.
func (env *Env) KillCursorFor(cn *Conn, id int64) bool {
	if cur := env.Cursors.Get(id); cur == nil || !mayKillCursor(env, cn, cur) {
		return false
	}
	return env.Cursors.Kill(id)
}
