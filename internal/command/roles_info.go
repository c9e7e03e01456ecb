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
	target, err := auth.ParseInfoTarget(c.Name, c.DB, a.first(), true)
	if err != nil {
		return err
	}
	dbAll, names := target.DB, target.Roles
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
		auth.AppendUserFragment(r, privs, refs, inherited)
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
