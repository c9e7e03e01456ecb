package dispatch

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/opctx"
)

// Access control. With --auth every command is checked here, centrally,
// before it runs: Command.Needs names the privilege actions it requires on
// the request's database (or the cluster); a few commands whose needs
// depend on their arguments are refined by auth.Requirements
// (internal/auth/needs.go), and the user-management commands check the
// roles they grant themselves (auth.MayGrant).

// need is a set of actions on one database.
type need = auth.Need

// Session returns the connection's authentication state, filling in the
// client's address on first use.
func (cn *Conn) Session() *auth.Session {
	s := &cn.Auth
	if s.Remote == "" {
		s.Remote = cn.Remote
		s.Loopback = auth.IsLoopback(cn.Remote)
	}
	return s
}

// authorize checks that the connection may run cmd.
func authorize(c *Ctx, cmd *Command) error {
	m := c.Env.Auth
	if !m.Enabled() || cmd.Needs&auth.Open != 0 || c.Conn == nil {
		return nil
	}
	s := c.Conn.Session()
	if !s.Authenticated() {
		if localhostException(c, cmd) {
			return nil
		}
		return mongoerr.New(mongoerr.Unauthorized, "Command %s requires authentication", cmd.Name)
	}
	if cmd.Needs == auth.Authenticated && !auth.NeedsRefined(cmd.Name) {
		return nil
	}
	privs, _, err := s.Privileges(m)
	if err != nil {
		return err
	}
	for _, n := range requirements(c, cmd) {
		if !privs.Permits(n) {
			return NotAuthorized(c, n.DB)
		}
	}
	return nil
}

// localhostException: with access control on and no user at all, a client
// on a loopback address may create the first user, on admin.
func localhostException(c *Ctx, cmd *Command) bool {
	return cmd.Name == "createUser" && c.DB == "admin" && !c.Env.Auth.HasUsers() && c.Conn.Session().Loopback
}

func NotAuthorized(c *Ctx, db string) error {
	return mongoerr.New(mongoerr.Unauthorized, "not authorized on %s to execute command %s", db, opctx.Redacted(c.Name, c.Body).String())
}

// requirements is what cmd, with these arguments, needs
// (auth.Requirements).
func requirements(c *Ctx, cmd *Command) []need {
	return auth.Requirements(auth.Request{Name: cmd.Name, DB: c.DB, Body: c.Body, Needs: cmd.Needs,
		Statements: func(body bson.Doc, field string) []bson.Doc {
			cc := *c
			cc.Body = body
			stmts, _, err := cc.Docs(field)
			if err != nil {
				return nil
			}
			return stmts
		},
		DataSizeNS: func(body bson.Doc) (string, string, bool) {
			cc := *c
			cc.Body = body
			db, coll, err := DataSizeNamespace(&cc)
			return db, coll, err == nil
		},
		Lookup: func(name string) (string, auth.Action, bool) {
			ic, ok := Lookup(name)
			if !ok {
				return "", 0, false
			}
			return ic.Name, ic.Needs, true
		},
	})
}

// allowed reports whether the connection holds actions on db (always true
// with access control off, and under the localhost exception).
func (c *Ctx) allowed(db string, actions auth.Action) (bool, error) {
	m := c.Env.Auth
	if !m.Enabled() || c.Conn == nil {
		return true, nil
	}
	s := c.Conn.Session()
	if !s.Authenticated() {
		return !m.HasUsers() && s.Loopback, nil
	}
	privs, _, err := s.Privileges(m)
	if err != nil {
		return false, err
	}
	return privs.Allows(db, actions), nil
}

// Require is allowed as an error: Unauthorized unless the connection holds
// actions on db.
func (c *Ctx) Require(db string, actions auth.Action) error {
	ok, err := c.allowed(db, actions)
	if err != nil {
		return err
	}
	if !ok {
		return NotAuthorized(c, db)
	}
	return nil
}

// VisibleDatabases is listDatabases' filter under access control: nil
// when the caller may list every database (listDatabases privilege),
// otherwise the databases its roles grant something on, as MongoDB's
// authorizedDatabases does. authorizedDatabases: false without the
// privilege is refused.
func (c *Ctx) VisibleDatabases() (func(string) bool, error) {
	v, ok := c.Body.Lookup("authorizedDatabases")
	refuse := ok && v.Type == bson.TypeBoolean && !v.Boolean()
	return c.Env.Auth.VisibleDatabases(connSession(c.Conn), refuse, func() error { return NotAuthorized(c, "admin") })
}
