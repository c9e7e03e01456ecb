package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// usersInfo: {usersInfo: 1} (the database's users), a name, {user, db},
// an array of those, or {forAllDBs: true}. A user may always see itself;
// anything else needs viewUser on the users' databases.
func usersInfo(c *Ctx) error {
	if _, err := c.authManager(); err != nil {
		return err
	}
	a := newArgs(c)
	if err := a.check("showCredentials", "showCustomData", "showPrivileges", "showAuthenticationRestrictions", "filter"); err != nil {
		return err
	}
	if _, ok := a.lookup("filter"); ok {
		return mongoerr.New(mongoerr.CommandNotSupported, "Cairn does not support usersInfo's filter")
	}
	showCreds, _, err := a.boolean("showCredentials")
	if err != nil {
		return err
	}
	showCustom, set, err := a.boolean("showCustomData")
	if err != nil {
		return err
	}
	if !set {
		showCustom = true
	}
	showPrivs, _, err := a.boolean("showPrivileges")
	if err != nil {
		return err
	}
	target, err := auth.ParseInfoTarget(c.Name, c.DB, a.first(), false)
	if err != nil {
		return err
	}
	all, dbAll, names := target.AllDBs, target.DB, target.Users
	if err := mayViewUsers(c, all, dbAll, names); err != nil {
		return err
	}
	tx, err := c.readTx()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var users []*auth.User
	switch {
	case all:
		users, err = auth.ListUsers(tx, "")
	case dbAll:
		users, err = auth.ListUsers(tx, c.DB)
	default:
		users, err = getUsers(tx, names)
	}
	if err != nil {
		return err
	}
	r := c.Reply
	r.StartArray("users")
	for i, u := range users {
		r.StartDocument(bson.Index(i))
		if !showCustom {
			u.CustomData = nil
		}
		u.AppendTo(r, showCreds)
		if showPrivs {
			privs, inherited, err := auth.ResolveRoles(tx, u.Roles)
			if err != nil {
				return err
			}
			auth.AppendRoleRefs(r, "inheritedRoles", inherited)
			r.StartArray("inheritedPrivileges")
			privs.AppendTo(r)
			r.End()
		}
		r.End()
	}
	r.End()
	return nil
}

func getUsers(tx *exec.Tx, names []auth.UserName) ([]*auth.User, error) {
	var out []*auth.User
	for _, n := range names {
		u, err := auth.GetUser(tx, n.DB, n.User)
		if err != nil {
			return nil, err
		}
		if u != nil {
			out = append(out, u)
		}
	}
	return out, nil
}

// mayViewUsers: viewing only oneself is always allowed; otherwise
// viewUser on each database (on every database for forAllDBs).
func mayViewUsers(c *Ctx, all, dbAll bool, names []auth.UserName) error {
	m := c.Env.Auth
	if !m.Enabled() {
		return nil
	}
	if !all && !dbAll {
		self := c.Conn.session().User()
		onlySelf := self != nil
		for _, n := range names {
			if self == nil || n != *self {
				onlySelf = false
			}
		}
		if onlySelf {
			return nil
		}
	}
	if all {
		privs, _, err := c.Conn.session().Privileges(m)
		if err != nil {
			return err
		}
		if !privs.AnyDatabase(auth.ViewUser) {
			return notAuthorized(c, c.DB)
		}
		return nil
	}
	if dbAll {
		return c.require(c.DB, auth.ViewUser)
	}
	for _, n := range names {
		if err := c.require(n.DB, auth.ViewUser); err != nil {
			return err
		}
	}
	return nil
}
