package auth

// usersInfo's and rolesInfo's answers and who may see them: a user may
// always see itself and the roles it holds (directly or inherited);
// anything else needs viewUser or viewRole on the users' or roles'
// databases (every database for usersInfo's forAllDBs).

import (
	"slices"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/kv"
)

// UsersInfoOptions are usersInfo's show* options.
type UsersInfoOptions struct {
	Credentials, CustomData, Privileges bool
}

// MayViewUsers checks that the connection (its session s, nil: none) may
// see the users t names, t read on the request's database db.
func MayViewUsers(m *Manager, s *Session, r Requirer, db string, t InfoTarget) error {
	if !m.Enabled() {
		return nil
	}
	if !t.AllDBs && !t.DB {
		self := s.User()
		onlySelf := self != nil
		for _, n := range t.Users {
			if self == nil || n != *self {
				onlySelf = false
			}
		}
		if onlySelf {
			return nil
		}
	}
	if t.AllDBs {
		privs, _, err := s.Privileges(m)
		if err != nil {
			return err
		}
		if !privs.AnyDatabase(ViewUser) {
			return r.NotAuthorized(db)
		}
		return nil
	}
	if t.DB {
		return r.Require(db, ViewUser)
	}
	for _, n := range t.Users {
		if err := r.Require(n.DB, ViewUser); err != nil {
			return err
		}
	}
	return nil
}

// AppendUsersInfo appends usersInfo's users array: the users t names (t
// read on database db), as tx sees them.
func AppendUsersInfo(b *bson.Builder, tx *kv.Tx, db string, t InfoTarget, o UsersInfoOptions) error {
	var users []*User
	var err error
	switch {
	case t.AllDBs:
		users, err = ListUsers(tx, "")
	case t.DB:
		users, err = ListUsers(tx, db)
	default:
		for _, n := range t.Users {
			var u *User
			if u, err = GetUser(tx, n.DB, n.User); err != nil {
				break
			}
			if u != nil {
				users = append(users, u)
			}
		}
	}
	if err != nil {
		return err
	}
	b.StartArray("users")
	for i, u := range users {
		b.StartDocument(bson.Index(i))
		if !o.CustomData {
			u.CustomData = nil
		}
		u.AppendTo(b, o.Credentials)
		if o.Privileges {
			privs, inherited, err := ResolveRoles(tx, u.Roles)
			if err != nil {
				return err
			}
			AppendRoleRefs(b, "inheritedRoles", inherited)
			b.StartArray("inheritedPrivileges")
			privs.AppendTo(b)
			b.End()
		}
		b.End()
	}
	b.End()
	return nil
}

// RolesInfoOptions are rolesInfo's options: showPrivileges (true, or
// "asUserFragment": Fragment) and showBuiltinRoles.
type RolesInfoOptions struct {
	Privileges, Fragment, Builtin bool
}

// MayViewRoles checks that the connection (its session s) may see the
// roles t names, t read on the request's database db, as tx sees them.
func MayViewRoles(m *Manager, s *Session, tx *kv.Tx, r Requirer, db string, t InfoTarget) error {
	if !m.Enabled() {
		return nil
	}
	if t.DB {
		return r.Require(db, ViewRole)
	}
	var held []RoleRef
	if s.Authenticated() {
		_, direct, err := s.Privileges(m)
		if err != nil {
			return err
		}
		if _, held, err = ResolveRoles(tx, direct); err != nil {
			return err
		}
	}
	for _, n := range t.Roles {
		if slices.Contains(held, n) {
			continue
		}
		if err := r.Require(n.DB, ViewRole); err != nil {
			return err
		}
	}
	return nil
}

// AppendRolesInfo appends rolesInfo's answer: the roles t names (t read
// on database db), as tx sees them, or with o.Fragment their merged
// userFragment.
func AppendRolesInfo(b *bson.Builder, tx *kv.Tx, db string, t InfoTarget, o RolesInfoOptions) error {
	type found struct {
		ref  RoleRef
		role *Role
	}
	var roles []found
	if t.DB {
		if o.Builtin {
			for _, r := range BuiltinRoles(db) {
				roles = append(roles, found{ref: r})
			}
		}
		custom, err := ListRoles(tx, db)
		if err != nil {
			return err
		}
		for _, r := range custom {
			roles = append(roles, found{ref: r.Ref(), role: r})
		}
	} else {
		for _, n := range t.Roles {
			if IsBuiltin(n) {
				roles = append(roles, found{ref: n})
				continue
			}
			role, err := GetRole(tx, n)
			if err != nil {
				return err
			}
			if role != nil {
				roles = append(roles, found{ref: n, role: role})
			}
		}
	}
	if o.Fragment {
		refs := make([]RoleRef, len(roles))
		for i, f := range roles {
			refs[i] = f.ref
		}
		privs, inherited, err := ResolveRoles(tx, refs)
		if err != nil {
			return err
		}
		AppendUserFragment(b, privs, refs, inherited)
		return nil
	}
	b.StartArray("roles")
	for i, f := range roles {
		b.StartDocument(bson.Index(i))
		if err := AppendRoleInfo(b, tx, f.ref, f.role, o.Privileges); err != nil {
			return err
		}
		b.End()
	}
	b.End()
	return nil
}
