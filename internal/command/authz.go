package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/opctx"
)

// Access control. With --auth every command is checked here, centrally,
// before it runs: Command.Needs names the privilege actions it requires on
// the request's database (or the cluster); a few commands whose needs
// depend on their arguments (aggregate with $out or $merge, explain,
// renameCollection, the write commands with upserts) are refined by
// requirements, and the user-management commands check the roles they
// grant themselves (auth.MayGrant).

// need is a set of actions on one database.
type need = auth.Need

// session returns the connection's authentication state, filling in the
// client's address on first use.
func (cn *Conn) session() *auth.Session {
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
	s := c.Conn.session()
	if !s.Authenticated() {
		if localhostException(c, cmd) {
			return nil
		}
		return mongoerr.New(mongoerr.Unauthorized, "Command %s requires authentication", cmd.Name)
	}
	if cmd.Needs == auth.Authenticated && !needsRefined(cmd.Name) {
		return nil
	}
	privs, _, err := s.Privileges(m)
	if err != nil {
		return err
	}
	for _, n := range requirements(c, cmd) {
		if !privs.Permits(n) {
			return notAuthorized(c, n.DB)
		}
	}
	return nil
}

// localhostException: with access control on and no user at all, a client
// on a loopback address may create the first user, on admin.
func localhostException(c *Ctx, cmd *Command) bool {
	return cmd.Name == "createUser" && c.DB == "admin" && !c.Env.Auth.HasUsers() && c.Conn.session().Loopback
}

func notAuthorized(c *Ctx, db string) error {
	return mongoerr.New(mongoerr.Unauthorized, "not authorized on %s to execute command %s", db, opctx.Redacted(c.Name, c.Body).String())
}

// needsRefined lists the commands declared Authenticated whose real
// requirement depends on their arguments.
func needsRefined(name string) bool { return name == "explain" }

// requirements is what cmd, with these arguments, needs.
func requirements(c *Ctx, cmd *Command) []need {
	actions := cmd.Needs
	if actions == 0 {
		actions = auth.AllActions
	}
	db, coll := c.DB, collectionOf(c, cmd)
	switch cmd.Name {
	case "explain":
		inner, ok := c.Body.Lookup("explain")
		if !ok || inner.Type != bson.TypeDocument {
			return nil // the command answers the bad argument
		}
		it := inner.Document().Iter()
		if !it.Next() {
			return nil
		}
		ic, ok := Lookup(it.Element().Key)
		if !ok || ic.Name == "explain" {
			return nil
		}
		ictx := *c
		ictx.Body = inner.Document()
		return requirements(&ictx, ic)
	case "aggregate":
		return aggregateNeeds(c)
	case "update":
		if hasUpsert(c, "updates") {
			actions |= auth.Insert
		}
	case "findAndModify":
		if v, ok := c.Body.Lookup("remove"); ok && v.Truthy() {
			actions = auth.Find | auth.Remove
		} else if v, ok := c.Body.Lookup("upsert"); ok && v.Truthy() {
			actions |= auth.Insert
		}
	case "renameCollection":
		return renameNeeds(c)
	case "dataSize":
		// find on the namespace named, whatever the request's database.
		if d, cl, err := dataSizeNamespace(c); err == nil {
			db, coll = d, cl
		}
	case "create", "collMod":
		return viewNeeds(c, []need{{DB: db, Coll: coll, Actions: actions}})
	}
	return []need{{DB: db, Coll: coll, Actions: actions}}
}

// collectionOf is the collection cmd acts on when its first field names
// one (user and role management name a user or role there), so that a
// privilege on that collection alone grants it.
func collectionOf(c *Ctx, cmd *Command) string {
	const names = auth.CreateUser | auth.DropUser | auth.CreateRole | auth.DropRole
	if cmd.Needs&names != 0 || cmd.Needs&auth.DBActions == 0 {
		return ""
	}
	if v := newArgs(c).first(); v.Type == bson.TypeString {
		return v.StringValue()
	}
	return ""
}

// hasUpsert reports whether any statement of a write command upserts.
func hasUpsert(c *Ctx, field string) bool {
	stmts, _, err := c.docs(field)
	if err != nil {
		return false
	}
	for _, s := range stmts {
		if v, ok := s.Lookup("upsert"); ok && v.Truthy() {
			return true
		}
	}
	return false
}

// aggregateNeeds: find on the database, and everything the pipeline
// involves at any depth (authz_pipeline.go).
func aggregateNeeds(c *Ctx) []need {
	out := []need{{DB: c.DB, Coll: collectionOf(c, &Command{Needs: auth.Find}), Actions: auth.Find}}
	p, _ := c.Body.Lookup("pipeline")
	return append(out, auth.PipelineNeeds(c.DB, p)...)
}

// renameNeeds: renameCollection's namespaces (auth.RenameNeeds).
func renameNeeds(c *Ctx) []need {
	from, _ := c.Body.Lookup("renameCollection")
	to, _ := c.Body.Lookup("to")
	return auth.RenameNeeds(c.DB, from, to)
}

// allowed reports whether the connection holds actions on db (always true
// with access control off, and under the localhost exception).
func (c *Ctx) allowed(db string, actions auth.Action) (bool, error) {
	m := c.Env.Auth
	if !m.Enabled() || c.Conn == nil {
		return true, nil
	}
	s := c.Conn.session()
	if !s.Authenticated() {
		return !m.HasUsers() && s.Loopback, nil
	}
	privs, _, err := s.Privileges(m)
	if err != nil {
		return false, err
	}
	return privs.Allows(db, actions), nil
}

// require is allowed as an error: Unauthorized unless the connection holds
// actions on db.
func (c *Ctx) require(db string, actions auth.Action) error {
	ok, err := c.allowed(db, actions)
	if err != nil {
		return err
	}
	if !ok {
		return notAuthorized(c, db)
	}
	return nil
}

// visibleDatabases is listDatabases' filter under access control: nil
// when the caller may list every database (listDatabases privilege),
// otherwise the databases its roles grant something on, as MongoDB's
// authorizedDatabases does. authorizedDatabases: false without the
// privilege is refused.
func (c *Ctx) visibleDatabases() (func(string) bool, error) {
	v, ok := c.Body.Lookup("authorizedDatabases")
	refuse := ok && v.Type == bson.TypeBoolean && !v.Boolean()
	return c.Env.Auth.VisibleDatabases(connSession(c.Conn), refuse, func() error { return notAuthorized(c, "admin") })
}

// viewNeeds adds what a view's definition reads (auth.ViewNeeds).
func viewNeeds(c *Ctx, base []need) []need {
	return append(base, auth.ViewNeeds(c.DB, c.Body)...)
}
