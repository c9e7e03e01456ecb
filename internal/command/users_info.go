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
	all, dbAll, names, err := usersInfoTargets(c, a.first())
	if err != nil {
		return err
	}
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
			r.AppendValue("inheritedRoles", r2v(inherited))
			r.StartArray("inheritedPrivileges")
			privs.AppendTo(r)
			r.End()
		}
		r.End()
	}
	r.End()
	return nil
}

// r2v is a roles array as a BSON value.
func r2v(roles []auth.RoleRef) bson.Value {
	var b bson.Builder
	for i, role := range roles {
		b.StartDocument(bson.Index(i))
		b.AppendString("role", role.Role)
		b.AppendString("db", role.DB)
		b.End()
	}
	return bson.Value{Type: bson.TypeArray, Data: b.Finish()}
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

// usersInfoTargets parses usersInfo's argument.
func usersInfoTargets(c *Ctx, v bson.Value) (all, dbAll bool, names []auth.UserName, err error) {
	one := func(v bson.Value) (auth.UserName, error) {
		switch v.Type {
		case bson.TypeString:
			return auth.UserName{User: v.StringValue(), DB: c.DB}, nil
		case bson.TypeDocument:
			u, ok1 := v.Document().Lookup("user")
			db, ok2 := v.Document().Lookup("db")
			if !ok1 || !ok2 || u.Type != bson.TypeString || db.Type != bson.TypeString {
				return auth.UserName{}, mongoerr.New(mongoerr.BadValue, "User name must contain string fields 'user' and 'db'")
			}
			return auth.UserName{User: u.StringValue(), DB: db.StringValue()}, nil
		}
		return auth.UserName{}, mongoerr.New(mongoerr.BadValue, "User name must be either a string or an object")
	}
	switch {
	case v.IsNumber():
		if n, _ := v.AsFloat64(); n != 1 {
			return false, false, nil, mongoerr.New(mongoerr.BadValue, "usersInfo=%s is not a valid argument, only usersInfo=1 is allowed", v.String())
		}
		return false, true, nil, nil
	case v.Type == bson.TypeDocument:
		if fa, ok := v.Document().Lookup("forAllDBs"); ok {
			if !fa.Truthy() {
				return false, false, nil, mongoerr.New(mongoerr.BadValue, "forAllDBs must be true")
			}
			return true, false, nil, nil
		}
	case v.Type == bson.TypeArray:
		it := v.Document().Iter()
		for it.Next() {
			n, err := one(it.Element().Value)
			if err != nil {
				return false, false, nil, err
			}
			names = append(names, n)
		}
		return false, false, names, nil
	}
	n, err := one(v)
	return false, false, []auth.UserName{n}, err
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
