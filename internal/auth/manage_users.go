package auth

// User management: what createUser, updateUser, dropUser,
// dropAllUsersFromDatabase, grantRolesToUser and revokeRolesFromUser do
// once the command layer has parsed them. Each change runs in the write
// transaction the caller hands in (which commits it durably and then
// calls Manager.Changed, so open connections re-read their roles); the
// privileges a change needs beyond the command's declared one (granting
// a role needs grantRole on the role's database, as mongod) are checked
// through the caller's Requirer.

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/kv"
)

// Requirer is the connection running a management command, as its
// access control sees it.
type Requirer interface {
	// Require answers Unauthorized unless the connection holds actions
	// on db.
	Require(db string, actions Action) error
	// NotAuthorized is the Unauthorized error of the command on db.
	NotAuthorized(db string) error
}

// MayGrant checks the privilege to grant (or revoke: action) each role.
func MayGrant(r Requirer, roles []RoleRef, action Action) error {
	for _, role := range roles {
		if err := r.Require(role.DB, action); err != nil {
			return err
		}
	}
	return nil
}

// GrantAction is the privilege a grant (grant true) or a revoke needs.
func GrantAction(grant bool) Action {
	if grant {
		return GrantRole
	}
	return RevokeRole
}

// UserNotFound is UserNotFound for db's user name.
func UserNotFound(name, db string) error {
	return mongoerr.New(mongoerr.UserNotFound, "Could not find user \"%s\" for db \"%s\"", name, db)
}

// UserSpec is createUser's and updateUser's request: the user Name on
// database DB and the fields given (Set*).
type UserSpec struct {
	Name, DB, Pwd                         string
	Roles                                 []RoleRef
	Custom                                bson.Doc
	Mechs                                 []string
	SetPwd, SetRoles, SetCustom, SetMechs bool
}

// NewUser checks createUser's request and builds the user, deriving its
// credentials (before the transaction: SCRAM's iterations take time).
func (m *Manager) NewUser(spec *UserSpec, r Requirer) (*User, error) {
	if !spec.SetPwd {
		return nil, mongoerr.New(mongoerr.BadValue, "Must provide a 'pwd' field for all user documents, except those with '$external' as the user's source db")
	}
	if !spec.SetRoles {
		return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'createUser.roles' is missing but a required field")
	}
	if err := MayGrant(r, spec.Roles, GrantRole); err != nil {
		return nil, err
	}
	creds, err := m.Credentials(spec.Name, spec.Pwd, spec.Mechs)
	if err != nil {
		return nil, err
	}
	id, err := NewUserID()
	if err != nil {
		return nil, err
	}
	u := &User{Name: spec.Name, DB: spec.DB, ID: id, Credentials: creds, Roles: spec.Roles, CustomData: spec.Custom}
	if u.Roles == nil {
		u.Roles = []RoleRef{}
	}
	return u, nil
}

// AddUser stores the new user u in tx: UserAlreadyExists if its
// database has one of that name; its roles must exist.
func AddUser(tx *kv.Tx, u *User) error {
	old, err := GetUser(tx, u.DB, u.Name)
	if err != nil {
		return err
	}
	if old != nil {
		return mongoerr.New(mongoerr.UserAlreadyExists, "User \"%s@%s\" already exists", u.Name, u.DB)
	}
	if err := CheckRolesExist(tx, u.Roles); err != nil {
		return err
	}
	return PutUser(tx, u)
}

// UserUpdate is updateUser's change, checked and with its credentials
// derived (PrepareUpdate), to apply in a transaction.
type UserUpdate struct {
	spec  *UserSpec
	creds map[string]Credential
	r     Requirer
}

// PrepareUpdate checks updateUser's request: at least one field, and
// changePassword or changeCustomData on the user's database for those.
func (m *Manager) PrepareUpdate(spec *UserSpec, r Requirer) (*UserUpdate, error) {
	if !spec.SetPwd && !spec.SetRoles && !spec.SetCustom && !spec.SetMechs {
		return nil, mongoerr.New(mongoerr.BadValue, "Must specify at least one field to update in updateUser")
	}
	if spec.SetPwd {
		if err := r.Require(spec.DB, ChangePassword); err != nil {
			return nil, err
		}
	}
	if spec.SetCustom {
		if err := r.Require(spec.DB, ChangeCustomData); err != nil {
			return nil, err
		}
	}
	up := &UserUpdate{spec: spec, r: r}
	if spec.SetPwd {
		var err error
		if up.creds, err = m.Credentials(spec.Name, spec.Pwd, spec.Mechs); err != nil {
			return nil, err
		}
	}
	return up, nil
}

// Apply changes the user in tx. Replacing its roles needs grantRole on
// the new ones' databases and revokeRole on the old ones'.
func (up *UserUpdate) Apply(tx *kv.Tx) error {
	spec := up.spec
	u, err := GetUser(tx, spec.DB, spec.Name)
	if err != nil {
		return err
	}
	if u == nil {
		return UserNotFound(spec.Name, spec.DB)
	}
	if spec.SetRoles {
		if err := MayGrant(up.r, spec.Roles, GrantRole); err != nil {
			return err
		}
		if err := MayGrant(up.r, u.Roles, RevokeRole); err != nil {
			return err
		}
		if err := CheckRolesExist(tx, spec.Roles); err != nil {
			return err
		}
		u.Roles = spec.Roles
	}
	if spec.SetCustom {
		u.CustomData = spec.Custom
	}
	switch {
	case spec.SetPwd:
		u.Credentials = up.creds
	case spec.SetMechs:
		if err := u.KeepMechanisms(spec.Mechs); err != nil {
			return err
		}
	}
	if u.Roles == nil {
		u.Roles = []RoleRef{}
	}
	return PutUser(tx, u)
}

// RemoveUser removes db's user name in tx (UserNotFound if there is none).
func RemoveUser(tx *kv.Tx, db, name string) error {
	ok, err := DeleteUser(tx, db, name)
	if err != nil {
		return err
	}
	if !ok {
		return UserNotFound(name, db)
	}
	return nil
}

// DropAllUsers removes every user of db in tx and reports how many.
func DropAllUsers(tx *kv.Tx, db string) (int, error) {
	users, err := ListUsers(tx, db)
	if err != nil {
		return 0, err
	}
	for _, u := range users {
		if _, err := DeleteUser(tx, u.DB, u.Name); err != nil {
			return 0, err
		}
	}
	return len(users), nil
}

// ChangeUserRoles grants roles to db's user name, or with grant false
// revokes them, in tx.
func ChangeUserRoles(tx *kv.Tx, db, name string, roles []RoleRef, grant bool) error {
	u, err := GetUser(tx, db, name)
	if err != nil {
		return err
	}
	if u == nil {
		return UserNotFound(name, db)
	}
	if err := CheckRolesExist(tx, roles); err != nil {
		return err
	}
	u.GrantRoles(roles, grant)
	return PutUser(tx, u)
}
