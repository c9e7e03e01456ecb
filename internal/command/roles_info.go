package command

import (
	"slices"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// rolesInfo: {rolesInfo: 1} (the database's user-defined roles, with
// showBuiltinRoles its built-in ones too), a name, {role, db} or an array
// of those; showPrivileges true or "asUserFragment" (one merged
// {userFragment: {roles, inheritedRoles, inheritedPrivileges}}). A user
// may always see the roles it holds, directly or inherited; anything else
// needs viewRole on the roles' databases.
func rolesInfo(c *Ctx) error {
	if _, err := c.authManager(); err != nil {
		return err
	}
	a := newArgs(c)
	if err := a.check("showPrivileges", "showBuiltinRoles", "showAuthenticationRestrictions"); err != nil {
		return err
	}
	showPrivs, fragment := false, false
	if v, ok := a.lookup("showPrivileges"); ok {
		switch {
		case v.Type == bson.TypeString && v.StringValue() == "asUserFragment":
			fragment = true
		case v.Type == bson.TypeBoolean || v.IsNumber():
			showPrivs = v.Truthy()
		default:
			return mongoerr.New(mongoerr.FailedToParse, "showPrivileges must be a boolean or the string \"asUserFragment\"")
		}
	}
	showBuiltin, _, err := a.boolean("showBuiltinRoles")
	if err != nil {
		return err
	}
	if _, _, err := a.boolean("showAuthenticationRestrictions"); err != nil {
		return err
	}
	dbAll, names, err := rolesInfoTargets(c, a.first())
	if err != nil {
		return err
	}
	if err := mayViewRoles(c, dbAll, names); err != nil {
		return err
	}
	tx, err := c.readTx()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	type found struct {
		ref  auth.RoleRef
		role *auth.Role
	}
	var roles []found
	if dbAll {
		if showBuiltin {
			for _, r := range auth.BuiltinRoles(c.DB) {
				roles = append(roles, found{ref: r})
			}
		}
		custom, err := auth.ListRoles(tx, c.DB)
		if err != nil {
			return err
		}
		for _, r := range custom {
			roles = append(roles, found{ref: r.Ref(), role: r})
		}
	} else {
		for _, n := range names {
			if auth.IsBuiltin(n) {
				roles = append(roles, found{ref: n})
				continue
			}
			role, err := auth.GetRole(tx, n)
			if err != nil {
				return err
			}
			if role != nil {
				roles = append(roles, found{ref: n, role: role})
			}
		}
	}
	r := c.Reply
	if fragment {
		refs := make([]auth.RoleRef, len(roles))
		for i, f := range roles {
			refs[i] = f.ref
		}
		privs, inherited, err := auth.ResolveRoles(tx, refs)
		if err != nil {
			return err
		}
		r.StartDocument("userFragment")
		r.AppendValue("roles", r2v(refs))
		r.AppendValue("inheritedRoles", r2v(inherited))
		r.StartArray("inheritedPrivileges")
		privs.AppendTo(r)
		r.End()
		r.StartArray("inheritedAuthenticationRestrictions")
		r.End()
		r.End()
		return nil
	}
	r.StartArray("roles")
	for i, f := range roles {
		r.StartDocument(bson.Index(i))
		if err := auth.AppendRoleInfo(r, tx, f.ref, f.role, showPrivs); err != nil {
			return err
		}
		r.End()
	}
	r.End()
	return nil
}

// rolesInfoTargets parses rolesInfo's argument.
func rolesInfoTargets(c *Ctx, v bson.Value) (dbAll bool, names []auth.RoleRef, err error) {
	one := func(v bson.Value) (auth.RoleRef, error) {
		switch v.Type {
		case bson.TypeString:
			return auth.RoleRef{Role: v.StringValue(), DB: c.DB}, nil
		case bson.TypeDocument:
			role, ok1 := v.Document().Lookup("role")
			db, ok2 := v.Document().Lookup("db")
			if !ok1 || !ok2 || role.Type != bson.TypeString || db.Type != bson.TypeString {
				return auth.RoleRef{}, mongoerr.New(mongoerr.BadValue, "Role name must contain string fields 'role' and 'db'")
			}
			return auth.RoleRef{Role: role.StringValue(), DB: db.StringValue()}, nil
		}
		return auth.RoleRef{}, mongoerr.New(mongoerr.BadValue, "Role name must be either a string or an object")
	}
	switch {
	case v.IsNumber():
		if n, _ := v.AsFloat64(); n != 1 {
			return false, nil, mongoerr.New(mongoerr.BadValue, "rolesInfo=%s is not a valid argument, only rolesInfo=1 is allowed", v.String())
		}
		return true, nil, nil
	case v.Type == bson.TypeArray:
		it := v.Document().Iter()
		for it.Next() {
			n, err := one(it.Element().Value)
			if err != nil {
				return false, nil, err
			}
			names = append(names, n)
		}
		return false, names, nil
	}
	n, err := one(v)
	return false, []auth.RoleRef{n}, err
}

// mayViewRoles: roles the user holds (directly or inherited) are always
// visible; others need viewRole on their database.
func mayViewRoles(c *Ctx, dbAll bool, names []auth.RoleRef) error {
	m := c.Env.Auth
	if !m.Enabled() {
		return nil
	}
	if dbAll {
		return c.require(c.DB, auth.ViewRole)
	}
	held, err := heldRoles(c)
	if err != nil {
		return err
	}
	for _, n := range names {
		if slices.Contains(held, n) {
			continue
		}
		if err := c.require(n.DB, auth.ViewRole); err != nil {
			return err
		}
	}
	return nil
}

// heldRoles lists the connection's user's roles, inherited ones included.
func heldRoles(c *Ctx) ([]auth.RoleRef, error) {
	s := c.Conn.session()
	if !s.Authenticated() {
		return nil, nil
	}
	_, direct, err := s.Privileges(c.Env.Auth)
	if err != nil {
		return nil, err
	}
	tx, err := c.readTx()
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	_, all, err := auth.ResolveRoles(tx, direct)
	return all, err
}
