package auth

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/kv"
)

// User-defined roles.
//
// A role (createRole) is stored in the kv tree "_roles", one document per
// role in the shape of MongoDB's admin.system.roles ({_id: "db.role",
// role, db, privileges: [{resource, actions}], roles: [{role, db}]}),
// keyed by db + "\x00" + name like the users. A role grants its own
// privileges and those of every role it inherits, built-in or
// user-defined, at any depth; the inheritance graph is kept acyclic (a
// grant that would close a cycle is refused with InvalidRoleModification,
// as mongod's checkOkayToGrantRolesToRole). A role of a database other
// than admin may hold privileges only on its own database and inherit only
// its own database's roles. Dropping a role removes it from every user
// and role that held it, in the same transaction.
//
// Sessions resolve their user's roles (ResolveRoles) in one snapshot when
// the store's generation has moved (Manager.Changed, called after every
// committed user or role change), so a change reaches open connections at
// their next command.

const rolesTree = "_roles"

// Role is a user-defined role.
type Role struct {
	Name, DB   string
	Privileges []Privilege
	Roles      []RoleRef
}

// Ref is the role's name.
func (r *Role) Ref() RoleRef { return RoleRef{Role: r.Name, DB: r.DB} }

func (r *Role) encode() bson.Doc {
	var b bson.Builder
	b.AppendString("_id", r.DB+"."+r.Name)
	b.AppendString("role", r.Name)
	b.AppendString("db", r.DB)
	b.StartArray("privileges")
	for i, p := range r.Privileges {
		b.StartDocument(bson.Index(i))
		p.AppendTo(&b)
		b.End()
	}
	b.End()
	appendRoleRefs(&b, "roles", r.Roles)
	return b.Finish()
}

// appendRoleRefs appends an array of {role, db} documents.
func appendRoleRefs(b *bson.Builder, field string, roles []RoleRef) {
	b.StartArray(field)
	for i, r := range roles {
		b.StartDocument(bson.Index(i))
		b.AppendString("role", r.Role)
		b.AppendString("db", r.DB)
		b.End()
	}
	b.End()
}

var errBadRoleDoc = errors.New("auth: malformed role document")

func decodeRole(raw []byte) (*Role, error) {
	d := bson.Doc(bytes.Clone(raw))
	if err := bson.Validate(d, bson.MaxDepth); err != nil {
		return nil, fmt.Errorf("%w: %v", errBadRoleDoc, err)
	}
	r := &Role{}
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "role":
			r.Name = e.Value.StringValue()
		case "db":
			r.DB = e.Value.StringValue()
		case "roles":
			r.Roles = decodeRoleRefs(e.Value.Document())
		case "privileges":
			privs, err := ParsePrivileges("privileges", e.Value)
			if err != nil {
				return nil, fmt.Errorf("%w: %v", errBadRoleDoc, err)
			}
			r.Privileges = privs
		}
	}
	if r.Name == "" || r.DB == "" {
		return nil, errBadRoleDoc
	}
	return r, nil
}

func decodeRoleRefs(arr bson.Doc) []RoleRef {
	out := []RoleRef{}
	it := arr.Iter()
	for it.Next() {
		rd := it.Element().Value.Document()
		role, _ := rd.Lookup("role")
		db, _ := rd.Lookup("db")
		out = append(out, RoleRef{Role: role.StringValue(), DB: db.StringValue()})
	}
	return out
}

// GetRole reads the user-defined role r in tx; nil if there is none.
func GetRole(tx *kv.Tx, r RoleRef) (*Role, error) {
	t, err := tx.Tree(rolesTree)
	if errors.Is(err, kv.ErrTreeNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("auth: opening roles: %w", err)
	}
	v, err := t.Get(userKey(r.DB, r.Role))
	if err != nil {
		return nil, fmt.Errorf("auth: reading role: %w", err)
	}
	if v == nil {
		return nil, nil
	}
	return decodeRole(v)
}

// ListRoles returns db's user-defined roles (every database's when db is
// ""), by database then name.
func ListRoles(tx *kv.Tx, db string) ([]*Role, error) {
	t, err := tx.Tree(rolesTree)
	if errors.Is(err, kv.ErrTreeNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("auth: opening roles: %w", err)
	}
	var prefix []byte
	if db != "" {
		prefix = append([]byte(db), 0)
	}
	var out []*Role
	cur := t.Cursor()
	for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
		r, err := decodeRole(v)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("auth: listing roles: %w", err)
	}
	return out, nil
}

// PutRole stores r (creating or replacing it) in the write transaction tx.
func PutRole(tx *kv.Tx, r *Role) error {
	t, err := tx.CreateTreeIfNotExists(rolesTree)
	if err != nil {
		return fmt.Errorf("auth: opening roles: %w", err)
	}
	if r.Roles == nil {
		r.Roles = []RoleRef{}
	}
	if err := t.Put(userKey(r.DB, r.Name), r.encode()); err != nil {
		return fmt.Errorf("auth: writing role: %w", err)
	}
	return nil
}

// RoleExists reports whether r is a built-in role or a user-defined one.
func RoleExists(tx *kv.Tx, r RoleRef) (bool, error) {
	if IsBuiltin(r) {
		return true, nil
	}
	role, err := GetRole(tx, r)
	return role != nil, err
}

// CheckRolesExist answers RoleNotFound for the first of roles that exists
// neither as a built-in nor as a user-defined role.
func CheckRolesExist(tx *kv.Tx, roles []RoleRef) error {
	for _, r := range roles {
		ok, err := RoleExists(tx, r)
		if err != nil {
			return err
		}
		if !ok {
			return roleNotFound(r)
		}
	}
	return nil
}

// ResolveRoles computes the privileges of roles and every role they
// inherit, and lists those roles (roles first, then the inherited ones in
// the order found). Roles that do not exist grant nothing.
func ResolveRoles(tx *kv.Tx, roles []RoleRef) (*Privileges, []RoleRef, error) {
	p := newPrivileges()
	var all []RoleRef
	queue := slices.Clone(roles)
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		if slices.Contains(all, r) {
			continue
		}
		if IsBuiltin(r) {
			all = append(all, r)
			p.addBuiltin(r)
			continue
		}
		role, err := GetRole(tx, r)
		if err != nil {
			return nil, nil, err
		}
		if role == nil {
			continue
		}
		all = append(all, r)
		for _, pr := range role.Privileges {
			p.addPrivilege(pr)
		}
		queue = append(queue, role.Roles...)
	}
	return p, all, nil
}

// NewRole validates a role createRole is about to create (mongod's
// checks, in its order) and returns it; the caller stores it with PutRole.
func NewRole(tx *kv.Tx, ref RoleRef, privs []Privilege, roles []RoleRef) (*Role, error) {
	switch {
	case ref.Role == "":
		return nil, mongoerr.New(mongoerr.BadValue, "Role name must be non-empty")
	case ref.DB == "local":
		return nil, mongoerr.New(mongoerr.BadValue, "Cannot create roles in the local database")
	case ref.DB == "$external":
		return nil, mongoerr.New(mongoerr.BadValue, "Cannot create roles in the $external database")
	case IsBuiltin(ref):
		return nil, mongoerr.New(mongoerr.BadValue, "Cannot create roles with the same name as a built-in role")
	}
	if err := CheckGrantRoles(tx, ref, roles); err != nil {
		return nil, err
	}
	if err := CheckGrantPrivileges(ref, privs); err != nil {
		return nil, err
	}
	old, err := GetRole(tx, ref)
	if err != nil {
		return nil, err
	}
	if old != nil {
		return nil, mongoerr.New(mongoerr.RoleAlreadyExists, "Role \"%s\" already exists", ref)
	}
	if privs == nil {
		privs = []Privilege{}
	}
	return &Role{Name: ref.Role, DB: ref.DB, Privileges: privs, Roles: slices.Clone(roles)}, nil
}

// ModifiableRole reads the user-defined role ref for a change: a built-in
// role cannot be modified, a missing one is RoleNotFound.
func ModifiableRole(tx *kv.Tx, ref RoleRef) (*Role, error) {
	if IsBuiltin(ref) {
		return nil, mongoerr.New(mongoerr.BadValue, "%s is a built-in role and cannot be modified", ref)
	}
	role, err := GetRole(tx, ref)
	if err != nil {
		return nil, err
	}
	if role == nil {
		return nil, mongoerr.New(mongoerr.RoleNotFound, "Role %s not found", ref)
	}
	return role, nil
}

// CheckGrantRoles checks that role may inherit roles: none is itself, a
// role outside admin inherits only its own database's roles, every one
// exists, and none inherits role already (a cycle).
func CheckGrantRoles(tx *kv.Tx, role RoleRef, roles []RoleRef) error {
	for _, r := range roles {
		if r == role {
			return mongoerr.New(mongoerr.InvalidRoleModification, "Cannot grant role %s to itself.", role)
		}
		if role.DB != "admin" && r.DB != role.DB {
			return mongoerr.New(mongoerr.InvalidRoleModification, "Roles on the '%s' database cannot be granted roles from other databases", role.DB)
		}
	}
	for _, r := range roles {
		ok, err := RoleExists(tx, r)
		if err != nil {
			return err
		}
		if !ok {
			return mongoerr.New(mongoerr.RoleNotFound, "Cannot grant roles to '%s': Could not find role: %s", role, r)
		}
	}
	_, inherited, err := ResolveRoles(tx, roles)
	if err != nil {
		return err
	}
	if slices.Contains(inherited, role) {
		return mongoerr.New(mongoerr.InvalidRoleModification, "Granting roles to %s would introduce a cycle in the role graph", role)
	}
	return nil
}

// CheckGrantPrivileges checks that a role outside admin gets privileges
// on its own database only.
func CheckGrantPrivileges(role RoleRef, privs []Privilege) error {
	if role.DB == "admin" {
		return nil
	}
	for _, p := range privs {
		r := p.Resource
		if r.Cluster || r.AnyResource || r.DB != role.DB {
			return mongoerr.New(mongoerr.InvalidRoleModification, "Roles on the '%s' database cannot be granted privileges that target other databases or the cluster", role.DB)
		}
	}
	return nil
}

// DropRoles removes the user-defined roles drop and every grant of them
// to users and roles, in the write transaction tx.
func DropRoles(tx *kv.Tx, drop []RoleRef) error {
	if len(drop) == 0 {
		return nil
	}
	t, err := tx.CreateTreeIfNotExists(rolesTree)
	if err != nil {
		return fmt.Errorf("auth: opening roles: %w", err)
	}
	for _, r := range drop {
		if _, err := t.Delete(userKey(r.DB, r.Role)); err != nil {
			return fmt.Errorf("auth: deleting role: %w", err)
		}
	}
	gone := func(r RoleRef) bool { return slices.Contains(drop, r) }
	roles, err := ListRoles(tx, "")
	if err != nil {
		return err
	}
	for _, role := range roles {
		if slices.ContainsFunc(role.Roles, gone) {
			role.Roles = slices.DeleteFunc(role.Roles, gone)
			if err := PutRole(tx, role); err != nil {
				return err
			}
		}
	}
	users, err := ListUsers(tx, "")
	if err != nil {
		return err
	}
	for _, u := range users {
		if slices.ContainsFunc(u.Roles, gone) {
			u.Roles = slices.DeleteFunc(u.Roles, gone)
			if err := PutUser(tx, u); err != nil {
				return err
			}
		}
	}
	return nil
}

// AppendRoleInfo appends rolesInfo's description of role ref (a built-in
// role when role is nil): its name, isBuiltin, direct and inherited roles
// and, with showPrivileges, its own and inherited privileges.
func AppendRoleInfo(b *bson.Builder, tx *kv.Tx, ref RoleRef, role *Role, showPrivileges bool) error {
	direct := []RoleRef{}
	var own []Privilege
	if role != nil {
		b.AppendString("_id", ref.DB+"."+ref.Role)
		direct = role.Roles
		own = role.Privileges
	} else {
		own = Resolve([]RoleRef{ref}).List()
	}
	b.AppendString("role", ref.Role)
	b.AppendString("db", ref.DB)
	if showPrivileges {
		b.StartArray("privileges")
		for i, p := range own {
			b.StartDocument(bson.Index(i))
			p.AppendTo(b)
			b.End()
		}
		b.End()
	}
	appendRoleRefs(b, "roles", direct)
	b.AppendBool("isBuiltin", role == nil)
	privs, inherited, err := ResolveRoles(tx, direct)
	if err != nil {
		return err
	}
	appendRoleRefs(b, "inheritedRoles", inherited)
	if showPrivileges {
		for _, p := range own {
			privs.addPrivilege(p)
		}
		b.StartArray("inheritedPrivileges")
		privs.AppendTo(b)
		b.End()
	}
	return nil
}

// SortRoleRefs orders roles by database, then name.
func SortRoleRefs(roles []RoleRef) {
	slices.SortFunc(roles, func(a, b RoleRef) int {
		if c := strings.Compare(a.DB, b.DB); c != 0 {
			return c
		}
		return strings.Compare(a.Role, b.Role)
	})
}
