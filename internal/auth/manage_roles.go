package auth

// Role management: what createRole, updateRole, dropRole,
// dropAllRolesFromDatabase, grantPrivilegesToRole,
// revokePrivilegesFromRole, grantRolesToRole and revokeRolesFromRole do
// once the command layer has parsed them, each in the write transaction
// the caller hands in (manage_users.go has the conventions). The roles'
// validation and resolution are customroles.go's.

import (
	"slices"

	"github.com/cairndb/cairn/kv"
)

// MayGrantToRole checks what giving (or taking from: action) role
// privileges and roles needs: action on role's database for privileges,
// on each granted role's database for roles.
func MayGrantToRole(r Requirer, role RoleRef, roles []RoleRef, privs []Privilege, action Action) error {
	if len(privs) > 0 {
		if err := r.Require(role.DB, action); err != nil {
			return err
		}
	}
	return MayGrant(r, roles, action)
}

// AddRole stores the new role ref in tx.
func AddRole(tx *kv.Tx, ref RoleRef, privs []Privilege, roles []RoleRef) error {
	role, err := NewRole(tx, ref, privs, roles)
	if err != nil {
		return err
	}
	return PutRole(tx, role)
}

// RoleUpdate is updateRole's change: the fields given replace the role's.
type RoleUpdate struct {
	Ref                RoleRef
	Privileges         []Privilege
	Roles              []RoleRef
	SetPrivs, SetRoles bool
}

// Apply replaces the role's privileges and roles in tx.
func (u *RoleUpdate) Apply(tx *kv.Tx) error {
	role, err := ModifiableRole(tx, u.Ref)
	if err != nil {
		return err
	}
	if u.SetRoles {
		if err := CheckGrantRoles(tx, u.Ref, u.Roles); err != nil {
			return err
		}
		role.Roles = u.Roles
	}
	if u.SetPrivs {
		if err := CheckGrantPrivileges(u.Ref, u.Privileges); err != nil {
			return err
		}
		role.Privileges = u.Privileges
	}
	return PutRole(tx, role)
}

// RemoveRole removes the user-defined role ref, and every grant of it, in
// tx.
func RemoveRole(tx *kv.Tx, ref RoleRef) error {
	if _, err := ModifiableRole(tx, ref); err != nil {
		return err
	}
	return DropRoles(tx, []RoleRef{ref})
}

// DropAllRoles removes every user-defined role of db in tx and reports
// how many.
func DropAllRoles(tx *kv.Tx, db string) (int, error) {
	roles, err := ListRoles(tx, db)
	if err != nil {
		return 0, err
	}
	refs := make([]RoleRef, len(roles))
	for i, r := range roles {
		refs[i] = r.Ref()
	}
	return len(refs), DropRoles(tx, refs)
}

// ChangeRolePrivileges adds privs to the role ref, or with grant false
// removes them, in tx.
func ChangeRolePrivileges(tx *kv.Tx, ref RoleRef, privs []Privilege, grant bool) error {
	role, err := ModifiableRole(tx, ref)
	if err != nil {
		return err
	}
	if grant {
		if err := CheckGrantPrivileges(ref, privs); err != nil {
			return err
		}
		role.Privileges = AddPrivileges(role.Privileges, privs)
	} else {
		role.Privileges = RemovePrivileges(role.Privileges, privs)
	}
	return PutRole(tx, role)
}

// ChangeRoleRoles makes the role ref inherit roles, or with grant false
// stop inheriting them, in tx.
func ChangeRoleRoles(tx *kv.Tx, ref RoleRef, roles []RoleRef, grant bool) error {
	role, err := ModifiableRole(tx, ref)
	if err != nil {
		return err
	}
	if grant {
		if err := CheckGrantRoles(tx, ref, roles); err != nil {
			return err
		}
		for _, r := range roles {
			if !slices.Contains(role.Roles, r) {
				role.Roles = append(role.Roles, r)
			}
		}
	} else {
		if err := CheckRolesExist(tx, roles); err != nil {
			return err
		}
		role.Roles = slices.DeleteFunc(role.Roles, func(r RoleRef) bool { return slices.Contains(roles, r) })
	}
	return PutRole(tx, role)
}
