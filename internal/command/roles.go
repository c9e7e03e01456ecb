package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Role management: createRole, updateRole, dropRole,
// dropAllRolesFromDatabase, grantPrivilegesToRole,
// revokePrivilegesFromRole, grantRolesToRole, revokeRolesFromRole and
// rolesInfo. This file parses the requests; the changes and their checks
// are internal/auth's (manage_roles.go, customroles.go), rolesInfo's
// answer auth's info.go. Changes commit through userTx, which announces
// them to open connections.

// roleNameArg is the command's first field: the role's name on the
// request's database.
func roleNameArg(c *Ctx) (auth.RoleRef, error) {
	v := newArgs(c).First()
	if v.Type != bson.TypeString {
		return auth.RoleRef{}, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected type 'string'", c.Name, c.Name, v.Type)
	}
	return auth.RoleRef{Role: v.StringValue(), DB: c.DB}, nil
}

// requiredRoles reads a required roles array.
func requiredRoles(c *Ctx, a args) ([]auth.RoleRef, error) {
	rv, ok := a.Lookup("roles")
	if !ok {
		return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '%s.roles' is missing but a required field", c.Name)
	}
	return parseRoles(c, "roles", rv)
}

// requiredPrivileges reads a required privileges array.
func requiredPrivileges(c *Ctx, a args) ([]auth.Privilege, error) {
	pv, ok := a.Lookup("privileges")
	if !ok {
		return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '%s.privileges' is missing but a required field", c.Name)
	}
	return auth.ParsePrivileges(c.Name+".privileges", pv)
}

func refuseAuthRestrictions(c *Ctx, a args) error {
	if v, ok := a.Lookup("authenticationRestrictions"); ok && !(v.Type == bson.TypeArray && len(v.Document()) <= 5) {
		return mongoerr.New(mongoerr.NotImplemented, "Cairn does not support %s's authenticationRestrictions", c.Name)
	}
	return nil
}

// roleRequest reads what every role command shares: the auth manager,
// the command's other fields (fields) and the role it names.
func roleRequest(c *Ctx, fields ...string) (*auth.Manager, args, auth.RoleRef, error) {
	m, err := authManager(c)
	if err != nil {
		return nil, args{}, auth.RoleRef{}, err
	}
	a := newArgs(c)
	if err := a.Check(fields...); err != nil {
		return nil, args{}, auth.RoleRef{}, err
	}
	ref, err := roleNameArg(c)
	if err != nil {
		return nil, args{}, auth.RoleRef{}, err
	}
	return m, a, ref, nil
}

func createRole(c *Ctx) error {
	m, a, ref, err := roleRequest(c, "privileges", "roles", "authenticationRestrictions")
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
	if err := auth.MayGrantToRole(requirer{c}, ref, roles, privs, auth.GrantRole); err != nil {
		return err
	}
	return userTx(c, m, func(tx *exec.Tx) error { return auth.AddRole(tx, ref, privs, roles) })
}

func updateRole(c *Ctx) error {
	m, a, ref, err := roleRequest(c, "privileges", "roles", "authenticationRestrictions")
	if err != nil {
		return err
	}
	up := &auth.RoleUpdate{Ref: ref}
	var pv, rv bson.Value
	if pv, up.SetPrivs = a.Lookup("privileges"); up.SetPrivs {
		if up.Privileges, err = auth.ParsePrivileges("updateRole.privileges", pv); err != nil {
			return err
		}
	}
	if rv, up.SetRoles = a.Lookup("roles"); up.SetRoles {
		if up.Roles, err = parseRoles(c, "roles", rv); err != nil {
			return err
		}
	}
	if err := refuseAuthRestrictions(c, a); err != nil {
		return err
	}
	_, setRestrictions := a.Lookup("authenticationRestrictions")
	if !up.SetPrivs && !up.SetRoles && !setRestrictions {
		return mongoerr.New(mongoerr.BadValue, "Must specify at least one field to update in updateRole")
	}
	if err := auth.MayGrantToRole(requirer{c}, ref, up.Roles, up.Privileges, auth.GrantRole); err != nil {
		return err
	}
	if err := c.Require(ref.DB, auth.RevokeRole); err != nil {
		return err
	}
	return userTx(c, m, up.Apply)
}

func dropRole(c *Ctx) error {
	m, _, ref, err := roleRequest(c)
	if err != nil {
		return err
	}
	return userTx(c, m, func(tx *exec.Tx) error { return auth.RemoveRole(tx, ref) })
}

func dropAllRolesFromDatabase(c *Ctx) error {
	m, err := userRequest(c)
	if err != nil {
		return err
	}
	n := 0
	if err = userTx(c, m, func(tx *exec.Tx) (err error) { n, err = auth.DropAllRoles(tx, c.DB); return err }); err != nil {
		return err
	}
	c.Reply.AppendInt32("n", int32(n))
	return nil
}

// changeRolePrivileges is grantPrivilegesToRole and
// revokePrivilegesFromRole.
func changeRolePrivileges(c *Ctx, grant bool) error {
	m, a, ref, err := roleRequest(c, "privileges")
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
	if err := c.Require(ref.DB, auth.GrantAction(grant)); err != nil {
		return err
	}
	return userTx(c, m, func(tx *exec.Tx) error { return auth.ChangeRolePrivileges(tx, ref, privs, grant) })
}

func grantPrivilegesToRole(c *Ctx) error    { return changeRolePrivileges(c, true) }
func revokePrivilegesFromRole(c *Ctx) error { return changeRolePrivileges(c, false) }

// changeRoleRoles is grantRolesToRole and revokeRolesFromRole.
func changeRoleRoles(c *Ctx, grant bool) error {
	m, a, ref, err := roleRequest(c, "roles")
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
	return userTx(c, m, func(tx *exec.Tx) error { return auth.ChangeRoleRoles(tx, ref, roles, grant) })
}

func grantRolesToRole(c *Ctx) error    { return changeRoleRoles(c, true) }
func revokeRolesFromRole(c *Ctx) error { return changeRoleRoles(c, false) }

// rolesInfo: {rolesInfo: 1} (the database's user-defined roles, with
// showBuiltinRoles its built-in ones too), a name, {role, db} or an array
// of those; showPrivileges true or "asUserFragment" (auth.AppendRolesInfo).
func rolesInfo(c *Ctx) error {
	m, err := authManager(c)
	if err != nil {
		return err
	}
	a := newArgs(c)
	if err := a.Check("showPrivileges", "showBuiltinRoles", "showAuthenticationRestrictions"); err != nil {
		return err
	}
	var o auth.RolesInfoOptions
	if v, ok := a.Lookup("showPrivileges"); ok {
		switch {
		case v.Type == bson.TypeString && v.StringValue() == "asUserFragment":
			o.Fragment = true
		case v.Type == bson.TypeBoolean || v.IsNumber():
			o.Privileges = v.Truthy()
		default:
			return mongoerr.New(mongoerr.FailedToParse, "showPrivileges must be a boolean or the string \"asUserFragment\"")
		}
	}
	if o.Builtin, _, err = a.Boolean("showBuiltinRoles"); err != nil {
		return err
	}
	if _, _, err := a.Boolean("showAuthenticationRestrictions"); err != nil {
		return err
	}
	target, err := auth.ParseInfoTarget(c.Name, c.DB, a.First(), true)
	if err != nil {
		return err
	}
	tx, err := c.ReadSnapshot()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := auth.MayViewRoles(m, c.Conn.Session(), tx, requirer{c}, c.DB, target); err != nil {
		return err
	}
	return auth.AppendRolesInfo(c.Reply, tx, c.DB, target, o)
}
