package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/dispatch"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// User management: createUser, updateUser, dropUser,
// dropAllUsersFromDatabase, usersInfo, grantRolesToUser and
// revokeRolesFromUser. This file parses the requests; the changes, their
// privilege checks and usersInfo's answer are internal/auth's
// (manage_users.go, info.go). Every change is committed durably and then
// announced to the Manager (userTx), so that open connections re-read
// their roles at their next command.

// requirer is the command's connection as auth.Requirer.
type requirer struct{ c *Ctx }

func (r requirer) Require(db string, a auth.Action) error { return r.c.Require(db, a) }
func (r requirer) NotAuthorized(db string) error          { return dispatch.NotAuthorized(r.c, db) }

// parseRoles reads a roles array (auth.ParseRoleRefs).
func parseRoles(c *Ctx, field string, v bson.Value) ([]auth.RoleRef, error) {
	return auth.ParseRoleRefs(c.Name, field, c.DB, v)
}

// userNameArg is the command's first field: the user's name.
func userNameArg(c *Ctx) (string, error) {
	v := newArgs(c).First()
	if v.Type != bson.TypeString {
		return "", mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected type 'string'", c.Name, c.Name, v.Type)
	}
	if v.StringValue() == "" {
		return "", mongoerr.New(mongoerr.BadValue, "User document needs 'user' field to be non-empty")
	}
	if c.DB == "$external" {
		return "", mongoerr.New(mongoerr.BadValue, "Cairn supports SCRAM users only; users on $external are not supported")
	}
	return v.StringValue(), nil
}

// passwordArg reads pwd (and refuses digestPassword: false, which only
// pre-digested SCRAM-SHA-1 passwords use).
func passwordArg(a args) (string, bool, error) {
	pwd, ok, err := a.Str("pwd")
	if err != nil || !ok {
		return "", ok, err
	}
	if pwd == "" {
		return "", false, mongoerr.New(mongoerr.BadValue, "Password cannot be empty")
	}
	if digest, set, err := a.Boolean("digestPassword"); err != nil {
		return "", false, err
	} else if set && !digest {
		return "", false, mongoerr.New(mongoerr.BadValue, "Use of SCRAM-SHA-256 requires undigested passwords")
	}
	return pwd, true, nil
}

// userTx runs fn in a durable write transaction and tells the manager the
// users changed.
func userTx(c *Ctx, m *auth.Manager, fn func(tx *exec.Tx) error) error {
	if _, err := parseWriteConcern(c); err != nil {
		return err
	}
	if err := c.WriteTx(exec.Sync, fn); err != nil {
		return err
	}
	return m.Changed()
}

// parseUserSpec reads createUser's and updateUser's request.
func parseUserSpec(c *Ctx) (*auth.Manager, *auth.UserSpec, error) {
	m, err := authManager(c)
	if err != nil {
		return nil, nil, err
	}
	a := newArgs(c)
	if err := a.Check("pwd", "roles", "customData", "mechanisms", "digestPassword"); err != nil {
		return nil, nil, err
	}
	u := &auth.UserSpec{DB: c.DB, Mechs: auth.Mechanisms}
	if u.Name, err = userNameArg(c); err != nil {
		return nil, nil, err
	}
	if u.Pwd, u.SetPwd, err = passwordArg(a); err != nil {
		return nil, nil, err
	}
	if rv, ok := a.Lookup("roles"); ok {
		if u.Roles, err = parseRoles(c, "roles", rv); err != nil {
			return nil, nil, err
		}
		u.SetRoles = true
	}
	if u.Custom, u.SetCustom, err = a.Doc("customData"); err != nil {
		return nil, nil, err
	} else if u.SetCustom {
		u.Custom = bson.Doc(append([]byte(nil), u.Custom...))
	}
	if arr, ok, err := a.Array("mechanisms"); err != nil {
		return nil, nil, err
	} else if ok {
		if u.Mechs, err = auth.ParseMechanisms(c.Name, arr); err != nil {
			return nil, nil, err
		}
		u.SetMechs = true
	}
	return m, u, nil
}

func createUser(c *Ctx) error {
	m, spec, err := parseUserSpec(c)
	if err != nil {
		return err
	}
	u, err := m.NewUser(spec, requirer{c})
	if err != nil {
		return err
	}
	return userTx(c, m, func(tx *exec.Tx) error { return auth.AddUser(tx, u) })
}

func updateUser(c *Ctx) error {
	m, spec, err := parseUserSpec(c)
	if err != nil {
		return err
	}
	up, err := m.PrepareUpdate(spec, requirer{c})
	if err != nil {
		return err
	}
	return userTx(c, m, up.Apply)
}

// userRequest reads what dropUser and dropAllUsersFromDatabase share:
// the manager and no other field.
func userRequest(c *Ctx) (*auth.Manager, error) {
	m, err := authManager(c)
	if err != nil {
		return nil, err
	}
	return m, newArgs(c).Check()
}

func dropUser(c *Ctx) error {
	m, err := userRequest(c)
	if err != nil {
		return err
	}
	name, err := userNameArg(c)
	if err != nil {
		return err
	}
	return userTx(c, m, func(tx *exec.Tx) error { return auth.RemoveUser(tx, c.DB, name) })
}

func dropAllUsersFromDatabase(c *Ctx) error {
	m, err := userRequest(c)
	if err != nil {
		return err
	}
	n := 0
	if err = userTx(c, m, func(tx *exec.Tx) (err error) { n, err = auth.DropAllUsers(tx, c.DB); return err }); err != nil {
		return err
	}
	c.Reply.AppendInt32("n", int32(n))
	return nil
}

// changeRoles is grantRolesToUser and revokeRolesFromUser.
func changeRoles(c *Ctx, grant bool) error {
	m, err := authManager(c)
	if err != nil {
		return err
	}
	a := newArgs(c)
	if err := a.Check("roles"); err != nil {
		return err
	}
	name, err := userNameArg(c)
	if err != nil {
		return err
	}
	roles, err := requiredRoles(c, a)
	if err != nil {
		return err
	}
	if len(roles) == 0 {
		return mongoerr.New(mongoerr.BadValue, "%s command requires a non-empty \"roles\" array", c.Name)
	}
	if err := auth.MayGrant(requirer{c}, roles, auth.GrantAction(grant)); err != nil {
		return err
	}
	return userTx(c, m, func(tx *exec.Tx) error { return auth.ChangeUserRoles(tx, c.DB, name, roles, grant) })
}

func grantRolesToUser(c *Ctx) error    { return changeRoles(c, true) }
func revokeRolesFromUser(c *Ctx) error { return changeRoles(c, false) }

// usersInfo: {usersInfo: 1} (the database's users), a name, {user, db},
// an array of those, or {forAllDBs: true} (auth.AppendUsersInfo).
func usersInfo(c *Ctx) error {
	m, err := authManager(c)
	if err != nil {
		return err
	}
	a := newArgs(c)
	if err := a.Check("showCredentials", "showCustomData", "showPrivileges", "showAuthenticationRestrictions", "filter"); err != nil {
		return err
	}
	if _, ok := a.Lookup("filter"); ok {
		return mongoerr.New(mongoerr.CommandNotSupported, "Cairn does not support usersInfo's filter")
	}
	var o auth.UsersInfoOptions
	if o.Credentials, _, err = a.Boolean("showCredentials"); err != nil {
		return err
	}
	var set bool
	if o.CustomData, set, err = a.Boolean("showCustomData"); err != nil {
		return err
	} else if !set {
		o.CustomData = true
	}
	if o.Privileges, _, err = a.Boolean("showPrivileges"); err != nil {
		return err
	}
	target, err := auth.ParseInfoTarget(c.Name, c.DB, a.First(), false)
	if err != nil {
		return err
	}
	if err := auth.MayViewUsers(m, c.Conn.Session(), requirer{c}, c.DB, target); err != nil {
		return err
	}
	tx, err := c.ReadSnapshot()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return auth.AppendUsersInfo(c.Reply, tx, c.DB, target, o)
}
