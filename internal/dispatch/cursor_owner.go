package dispatch

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
	return cn.Session()
}

// CursorOwner is the user a cursor opened by c belongs to.
func CursorOwner(c *Ctx) *auth.UserName { return c.Env.Auth.CursorOwner(connSession(c.Conn)) }

// CursorOrigin is what the command opening a cursor needed (nil without
// access control).
func CursorOrigin(c *Ctx) []need {
	if !c.Env.Auth.Enabled() || c.Conn == nil || c.Cmd == nil {
		return nil
	}
	return requirements(c, c.Cmd)
}

// MayContinueCursor checks a getMore of cur.
func MayContinueCursor(c *Ctx, cur *exec.Cursor) error {
	return c.Env.Auth.MayContinueCursor(connSession(c.Conn), cur.ID, cur.Owner, cur.Origin)
}

// MayKillCursor reports whether cn may kill cur.
func MayKillCursor(env *Env, cn *Conn, cur *exec.Cursor) bool {
	return env.Auth.MayKillCursor(connSession(cn), cur.Owner)
}

// KillCursorFor kills cursor id for OP_KILL_CURSORS when the connection
// may (mongod skips the others silently: the legacy message has no
// reply); it reports whether the cursor was killed.
func (env *Env) KillCursorFor(cn *Conn, id int64) bool {
	if cur := env.Cursors.Get(id); cur == nil || !MayKillCursor(env, cn, cur) {
		return false
	}
	return env.Cursors.Kill(id)
}
