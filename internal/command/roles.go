package command

import (
	"slices"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Role management: createRole, updateRole, dropRole,
// dropAllRolesFromDatabase, grantPrivilegesToRole,
// revokePrivilegesFromRole, grantRolesToRole, revokeRolesFromRole and
// rolesInfo. The roles, their validation and their resolution are
// internal/auth's (customroles.go); this file parses the requests, checks
// the privileges each command needs beyond its declared one (granting a
// role needs grantRole on the role's database, as mongod) and commits
// through userTx, which announces the change to open connections.

// roleNameArg is the command's first field: the role's name on the
// request's database.
func roleNameArg(c *Ctx) (auth.RoleRef, error) {
	v := newArgs(c).first()
	if v.Type != bson.TypeString {
		return auth.RoleRef{}, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected type 'string'", c.Name, c.Name, v.Type)
	}
	return auth.RoleRef{Role: v.StringValue(), DB: c.DB}, nil
}

// requiredRoles reads a required roles array.
func requiredRoles(c *Ctx, a args) ([]auth.RoleRef, error) {
	rv, ok := a.lookup("roles")
	if !ok {
		return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '%s.roles' is missing but a required field", c.Name)
	}
	return parseRoles(c, "roles", rv)
}

// requiredPrivileges reads a required privileges array.
func requiredPrivileges(c *Ctx, a args) ([]auth.Privilege, error) {
	pv, ok := a.lookup("privileges")
	if !ok {
		return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '%s.privileges' is missing but a required field", c.Name)
	}
	return auth.ParsePrivileges(c.Name+".privileges", pv)
}

func refuseAuthRestrictions(c *Ctx, a args) error {
	if v, ok := a.lookup("authenticationRestrictions"); ok && !(v.Type == bson.TypeArray && len(v.Document()) <= 5) {
		return mongoerr.New(mongoerr.NotImplemented, "Cairn does not support %s's authenticationRestrictions", c.Name)
	}
	return nil
}

func createRole(c *Ctx) error {
	m, err := c.authManager()
	if err != nil {
		return err
	}
	a := newArgs(c)
	if err := a.check("privileges", "roles", "authenticationRestrictions"); err != nil {
		return err
	}
	ref, err := roleNameArg(c)
	if err != nil {
		return err
	}
	privs, err := requiredPrivileges(c, a)
	if err != nil {
		return err
	}
	roles, err := requiredRoles(c, a)
	if err != nil {
		return err
	}
	if err := refuseAuthRestrictions(c, a); err != nil {
		return err
	}
	if err := mayGrantToRole(c, ref, roles, privs, auth.GrantRole); err != nil {
		return err
	}
	return userTx(c, m, func(tx *exec.Tx) error {
		role, err := auth.NewRole(tx, ref, privs, roles)
		if err != nil {
			return err
		}
		return auth.PutRole(tx, role)
	})
}

// mayGrantToRole: giving role privileges needs grantRole on its database,
// giving it roles grantRole on theirs (revoking: revokeRole).
func mayGrantToRole(c *Ctx, role auth.RoleRef, roles []auth.RoleRef, privs []auth.Privilege, action auth.Action) error {
	if len(privs) > 0 {
		if err := c.require(role.DB, action); err != nil {
			return err
		}
	}
	return mayGrant(c, roles, action)
}

func updateRole(c *Ctx) error {
	m, err := c.authManager()
	if err != nil {
		return err
	}
	a := newArgs(c)
	if err := a.check("privileges", "roles", "authenticationRestrictions"); err != nil {
		return err
	}
	ref, err := roleNameArg(c)
	if err != nil {
		return err
	}
	var privs []auth.Privilege
	var roles []auth.RoleRef
	pv, setPrivs := a.lookup("privileges")
	if setPrivs {
		if privs, err = auth.ParsePrivileges("updateRole.privileges", pv); err != nil {
			return err
		}
	}
	rv, setRoles := a.lookup("roles")
	if setRoles {
		if roles, err = parseRoles(c, "roles", rv); err != nil {
			return err
		}
	}
	if err := refuseAuthRestrictions(c, a); err != nil {
		return err
	}
	_, setRestrictions := a.lookup("authenticationRestrictions")
	if !setPrivs && !setRoles && !setRestrictions {
		return mongoerr.New(mongoerr.BadValue, "Must specify at least one field to update in updateRole")
	}
	if err := mayGrantToRole(c, ref, roles, privs, auth.GrantRole); err != nil {
		return err
	}
	if err := c.require(ref.DB, auth.RevokeRole); err != nil {
		return err
	}
	return userTx(c, m, func(tx *exec.Tx) error {
		role, err := auth.ModifiableRole(tx, ref)
		if err != nil {
			return err
		}
		if setRoles {
			if err := auth.CheckGrantRoles(tx, ref, roles); err != nil {
				return err
			}
			role.Roles = roles
		}
		if setPrivs {
			if err := auth.CheckGrantPrivileges(ref, privs); err != nil {
				return err
			}
			role.Privileges = privs
		}
		return auth.PutRole(tx, role)
	})
}

func dropRole(c *Ctx) error {
	m, err := c.authManager()
	if err != nil {
		return err
	}
	if err := newArgs(c).check(); err != nil {
		return err
	}
	ref, err := roleNameArg(c)
	if err != nil {
		return err
	}
	return userTx(c, m, func(tx *exec.Tx) error {
		if _, err := auth.ModifiableRole(tx, ref); err != nil {
			return err
		}
		return auth.DropRoles(tx, []auth.RoleRef{ref})
	})
}

func dropAllRolesFromDatabase(c *Ctx) error {
	m, err := c.authManager()
	if err != nil {
		return err
	}
	if err := newArgs(c).check(); err != nil {
		return err
	}
	n := 0
	err = userTx(c, m, func(tx *exec.Tx) error {
		roles, err := auth.ListRoles(tx, c.DB)
		if err != nil {
			return err
		}
		refs := make([]auth.RoleRef, len(roles))
		for i, r := range roles {
			refs[i] = r.Ref()
		}
		n = len(refs)
		return auth.DropRoles(tx, refs)
	})
	if err != nil {
		return err
	}
	c.Reply.AppendInt32("n", int32(n))
	return nil
}

// roleChangeRequest reads what the grant and revoke commands on a role
// share: the auth manager, the command's one other field (field) and the
// role it names.
func roleChangeRequest(c *Ctx, field string) (*auth.Manager, args, auth.RoleRef, error) {
	m, err := c.authManager()
	if err != nil {
		return nil, args{}, auth.RoleRef{}, err
	}
	a := newArgs(c)
	if err := a.check(field); err != nil {
		return nil, args{}, auth.RoleRef{}, err
	}
	ref, err := roleNameArg(c)
	if err != nil {
		return nil, args{}, auth.RoleRef{}, err
	}
	return m, a, ref, nil
}

// roleChangeAction is the privilege a grant (or a revoke) needs.
func roleChangeAction(grant bool) auth.Action {
	if grant {
		return auth.GrantRole
	}
	return auth.RevokeRole
}

// changeRolePrivileges is grantPrivilegesToRole and
// revokePrivilegesFromRole.
func changeRolePrivileges(c *Ctx, grant bool) error {
	m, a, ref, err := roleChangeRequest(c, "privileges")
	if err != nil {
		return err
	}
	privs, err := requiredPrivileges(c, a)
	if err != nil {
		return err
	}
	if len(privs) == 0 {
		return mongoerr.New(mongoerr.BadValue, "%s command requires a non-empty \"privileges\" array", c.Name)
	}
	action := roleChangeAction(grant)
	if err := c.require(ref.DB, action); err != nil {
		return err
	}
	return userTx(c, m, func(tx *exec.Tx) error {
		role, err := auth.ModifiableRole(tx, ref)
		if err != nil {
			return err
		}
		if grant {
			if err := auth.CheckGrantPrivileges(ref, privs); err != nil {
				return err
			}
			role.Privileges = auth.AddPrivileges(role.Privileges, privs)
		} else {
			role.Privileges = auth.RemovePrivileges(role.Privileges, privs)
		}
		return auth.PutRole(tx, role)
	})
}

func grantPrivilegesToRole(c *Ctx) error    { return changeRolePrivileges(c, true) }
func revokePrivilegesFromRole(c *Ctx) error { return changeRolePrivileges(c, false) }

// changeRoleRoles is grantRolesToRole and revokeRolesFromRole.
func changeRoleRoles(c *Ctx, grant bool) error {
	m, a, ref, err := roleChangeRequest(c, "roles")
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
	action := roleChangeAction(grant)
	if err := mayGrant(c, roles, action); err != nil {
		return err
	}
	return userTx(c, m, func(tx *exec.Tx) error {
		role, err := auth.ModifiableRole(tx, ref)
		if err != nil {
			return err
		}
		if grant {
			if err := auth.CheckGrantRoles(tx, ref, roles); err != nil {
				return err
			}
			for _, r := range roles {
				if !slices.Contains(role.Roles, r) {
					role.Roles = append(role.Roles, r)
				}
			}
		} else {
			if err := auth.CheckRolesExist(tx, roles); err != nil {
				return err
			}
			role.Roles = slices.DeleteFunc(role.Roles, func(r auth.RoleRef) bool { return slices.Contains(roles, r) })
		}
		return auth.PutRole(tx, role)
	})
}

func grantRolesToRole(c *Ctx) error    { return changeRoleRoles(c, true) }
func revokeRolesFromRole(c *Ctx) error { return changeRoleRoles(c, false) }
