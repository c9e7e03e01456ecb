package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// User management: createUser, updateUser, dropUser,
// dropAllUsersFromDatabase, usersInfo, grantRolesToUser and
// revokeRolesFromUser. Users are stored by internal/auth; every change is
// committed durably and then announced to the Manager, so that open
// connections re-read their roles at their next command.

// parseRoles reads a roles array (auth.ParseRoleRefs).
func parseRoles(c *Ctx, field string, v bson.Value) ([]auth.RoleRef, error) {
	return auth.ParseRoleRefs(c.Name, field, c.DB, v)
}

// mayGrant checks the privilege to grant (or revoke) each role.
func mayGrant(c *Ctx, roles []auth.RoleRef, action auth.Action) error {
	for _, r := range roles {
		if err := c.require(r.DB, action); err != nil {
			return err
		}
	}
	return nil
}

// userNameArg is the command's first field: the user's name.
func userNameArg(c *Ctx) (string, error) {
	v := newArgs(c).first()
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

func userNotFound(name, db string) error {
	return mongoerr.New(mongoerr.UserNotFound, "Could not find user \"%s\" for db \"%s\"", name, db)
}

// parseMechanisms reads the mechanisms field (default: both SCRAM ones).
func parseMechanisms(c *Ctx) ([]string, bool, error) {
	arr, ok, err := newArgs(c).array("mechanisms")
	if err != nil || !ok {
		return auth.Mechanisms, false, err
	}
	mechs, err := auth.ParseMechanisms(c.Name, arr)
	return mechs, err == nil, err
}

// passwordArg reads pwd (and refuses digestPassword: false, which only
// pre-digested SCRAM-SHA-1 passwords use).
func passwordArg(c *Ctx) (string, bool, error) {
	a := newArgs(c)
	pwd, ok, err := a.str("pwd")
	if err != nil || !ok {
		return "", ok, err
	}
	if pwd == "" {
		return "", false, mongoerr.New(mongoerr.BadValue, "Password cannot be empty")
	}
	if digest, set, err := a.boolean("digestPassword"); err != nil {
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
	if err := c.writeTx(exec.Sync, fn); err != nil {
		return err
	}
	return m.Changed()
}

func customDataArg(c *Ctx) (bson.Doc, bool, error) {
	d, ok, err := newArgs(c).doc("customData")
	if ok {
		d = bson.Doc(append([]byte(nil), d...))
	}
	return d, ok, err
}

// userSpec is what createUser and updateUser accept; set* tell which
// fields were given.
type userSpec struct {
	m                                     *auth.Manager
	name, pwd                             string
	roles                                 []auth.RoleRef
	custom                                bson.Doc
	mechs                                 []string
	setPwd, setRoles, setCustom, setMechs bool
}

func parseUserSpec(c *Ctx) (*userSpec, error) {
	m, err := c.authManager()
	if err != nil {
		return nil, err
	}
	a := newArgs(c)
	if err := a.check("pwd", "roles", "customData", "mechanisms", "digestPassword"); err != nil {
		return nil, err
	}
	u := &userSpec{m: m}
	if u.name, err = userNameArg(c); err != nil {
		return nil, err
	}
	if u.pwd, u.setPwd, err = passwordArg(c); err != nil {
		return nil, err
	}
	if rv, ok := a.lookup("roles"); ok {
		if u.roles, err = parseRoles(c, "roles", rv); err != nil {
			return nil, err
		}
		u.setRoles = true
	}
	if u.custom, u.setCustom, err = customDataArg(c); err != nil {
		return nil, err
	}
	if u.mechs, u.setMechs, err = parseMechanisms(c); err != nil {
		return nil, err
	}
	return u, nil
}

func createUser(c *Ctx) error {
	spec, err := parseUserSpec(c)
	if err != nil {
		return err
	}
	if !spec.setPwd {
		return mongoerr.New(mongoerr.BadValue, "Must provide a 'pwd' field for all user documents, except those with '$external' as the user's source db")
	}
	if !spec.setRoles {
		return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'createUser.roles' is missing but a required field")
	}
	if err := mayGrant(c, spec.roles, auth.GrantRole); err != nil {
		return err
	}
	creds, err := spec.m.Credentials(spec.name, spec.pwd, spec.mechs)
	if err != nil {
		return err
	}
	id, err := auth.NewUserID()
	if err != nil {
		return err
	}
	u := &auth.User{Name: spec.name, DB: c.DB, ID: id, Credentials: creds, Roles: spec.roles, CustomData: spec.custom}
	if u.Roles == nil {
		u.Roles = []auth.RoleRef{}
	}
	return userTx(c, spec.m, func(tx *exec.Tx) error {
		old, err := auth.GetUser(tx, c.DB, spec.name)
		if err != nil {
			return err
		}
		if old != nil {
			return mongoerr.New(mongoerr.UserAlreadyExists, "User \"%s@%s\" already exists", spec.name, c.DB)
		}
		if err := auth.CheckRolesExist(tx, u.Roles); err != nil {
			return err
		}
		return auth.PutUser(tx, u)
	})
}

func updateUser(c *Ctx) error {
	spec, err := parseUserSpec(c)
	if err != nil {
		return err
	}
	if !spec.setPwd && !spec.setRoles && !spec.setCustom && !spec.setMechs {
		return mongoerr.New(mongoerr.BadValue, "Must specify at least one field to update in updateUser")
	}
	if spec.setPwd {
		if err := c.require(c.DB, auth.ChangePassword); err != nil {
			return err
		}
	}
	if spec.setCustom {
		if err := c.require(c.DB, auth.ChangeCustomData); err != nil {
			return err
		}
	}
	var creds map[string]auth.Credential
	if spec.setPwd {
		if creds, err = spec.m.Credentials(spec.name, spec.pwd, spec.mechs); err != nil {
			return err
		}
	}
	return userTx(c, spec.m, func(tx *exec.Tx) error {
		u, err := auth.GetUser(tx, c.DB, spec.name)
		if err != nil {
			return err
		}
		if u == nil {
			return userNotFound(spec.name, c.DB)
		}
		if spec.setRoles {
			if err := mayGrant(c, spec.roles, auth.GrantRole); err != nil {
				return err
			}
			if err := mayGrant(c, u.Roles, auth.RevokeRole); err != nil {
				return err
			}
			if err := auth.CheckRolesExist(tx, spec.roles); err != nil {
				return err
			}
			u.Roles = spec.roles
		}
		if spec.setCustom {
			u.CustomData = spec.custom
		}
		switch {
		case spec.setPwd:
			u.Credentials = creds
		case spec.setMechs:
			if err := u.KeepMechanisms(spec.mechs); err != nil {
				return err
			}
		}
		if u.Roles == nil {
			u.Roles = []auth.RoleRef{}
		}
		return auth.PutUser(tx, u)
	})
}

func dropUser(c *Ctx) error {
	m, err := c.authManager()
	if err != nil {
		return err
	}
	if err := newArgs(c).check(); err != nil {
		return err
	}
	name, err := userNameArg(c)
	if err != nil {
		return err
	}
	return userTx(c, m, func(tx *exec.Tx) error {
		ok, err := auth.DeleteUser(tx, c.DB, name)
		if err != nil {
			return err
		}
		if !ok {
			return userNotFound(name, c.DB)
		}
		return nil
	})
}

func dropAllUsersFromDatabase(c *Ctx) error {
	m, err := c.authManager()
	if err != nil {
		return err
	}
	if err := newArgs(c).check(); err != nil {
		return err
	}
	n := 0
	err = userTx(c, m, func(tx *exec.Tx) error {
		users, err := auth.ListUsers(tx, c.DB)
		if err != nil {
			return err
		}
		for _, u := range users {
			if _, err := auth.DeleteUser(tx, u.DB, u.Name); err != nil {
				return err
			}
		}
		n = len(users)
		return nil
	})
	if err != nil {
		return err
	}
	c.Reply.AppendInt32("n", int32(n))
	return nil
}

// changeRoles is grantRolesToUser and revokeRolesFromUser.
func changeRoles(c *Ctx, grant bool) error {
	m, err := c.authManager()
	if err != nil {
		return err
	}
	a := newArgs(c)
	if err := a.check("roles"); err != nil {
		return err
	}
	name, err := userNameArg(c)
	if err != nil {
		return err
	}
	rv, ok := a.lookup("roles")
	if !ok {
		return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '%s.roles' is missing but a required field", c.Name)
	}
	roles, err := parseRoles(c, "roles", rv)
	if err != nil {
		return err
	}
	if len(roles) == 0 {
		return mongoerr.New(mongoerr.BadValue, "%s command requires a non-empty \"roles\" array", c.Name)
	}
	action := auth.RevokeRole
	if grant {
		action = auth.GrantRole
	}
	if err := mayGrant(c, roles, action); err != nil {
		return err
	}
	return userTx(c, m, func(tx *exec.Tx) error {
		u, err := auth.GetUser(tx, c.DB, name)
		if err != nil {
			return err
		}
		if u == nil {
			return userNotFound(name, c.DB)
		}
		if err := auth.CheckRolesExist(tx, roles); err != nil {
			return err
		}
		u.GrantRoles(roles, grant)
		return auth.PutUser(tx, u)
	})
}

func grantRolesToUser(c *Ctx) error    { return changeRoles(c, true) }
func revokeRolesFromUser(c *Ctx) error { return changeRoles(c, false) }
