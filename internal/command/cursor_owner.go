package command

import (
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/exec"
)

// Cursor ownership under access control (auth/cursors.go): the cursor's
// owner and the privileges of the command that opened it.

// connSession is cn's authentication state (nil: no connection).
func connSession(cn *Conn) *auth.Session {
	if cn == nil {
		return nil
	}
	return cn.session()
}

// cursorOwner is the user a cursor opened by c belongs to.
func cursorOwner(c *Ctx) *auth.UserName { return c.Env.Auth.CursorOwner(connSession(c.Conn)) }

// cursorOrigin is what the command opening a cursor needed (nil without
// access control).
func cursorOrigin(c *Ctx) []need {
	if !c.Env.Auth.Enabled() || c.Conn == nil || c.cmd == nil {
		return nil
	}
	return requirements(c, c.cmd)
}

// mayContinueCursor checks a getMore of cur.
func mayContinueCursor(c *Ctx, cur *exec.Cursor) error {
	return c.Env.Auth.MayContinueCursor(connSession(c.Conn), cur.ID, cur.Owner, cur.Origin)
}

// mayKillCursor reports whether cn may kill cur.
func mayKillCursor(env *Env, cn *Conn, cur *exec.Cursor) bool {
	return env.Auth.MayKillCursor(connSession(cn), cur.Owner)
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
