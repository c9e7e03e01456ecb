package auth

import (
	"net"
	"slices"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// The arguments of the user and role management commands, parsed as
// mongod's IDL parses them (the command layer reads the request's fields
// and passes their values here), and the namespaces some commands need
// privileges on.

// ParseRoleRefs reads a roles array of cmd: role names (on database db)
// or {role, db} documents, without duplicates. Whether the roles exist is
// checked in the command's transaction (CheckRolesExist).
func ParseRoleRefs(cmd, field, db string, v bson.Value) ([]RoleRef, error) {
	if v.Type != bson.TypeArray {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected type 'array'", cmd, field, v.Type)
	}
	var out []RoleRef
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element().Value
		var r RoleRef
		switch e.Type {
		case bson.TypeString:
			r = RoleRef{Role: e.StringValue(), DB: db}
		case bson.TypeDocument:
			role, ok := e.Document().Lookup("role")
			if !ok || role.Type != bson.TypeString {
				return nil, mongoerr.New(mongoerr.NoSuchKey, "Missing expected field \"role\"")
			}
			rdb, ok := e.Document().Lookup("db")
			if !ok || rdb.Type != bson.TypeString {
				return nil, mongoerr.New(mongoerr.NoSuchKey, "Missing expected field \"db\"")
			}
			r = RoleRef{Role: role.StringValue(), DB: rdb.StringValue()}
		default:
			return nil, mongoerr.New(mongoerr.BadValue, "Role names must be either strings or objects")
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out, nil
}

// ParseMechanisms reads createUser/updateUser's mechanisms array.
func ParseMechanisms(cmd string, arr bson.Doc) ([]string, error) {
	var out []string
	it := arr.Iter()
	for it.Next() {
		v := it.Element().Value
		if v.Type != bson.TypeString {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.mechanisms.%s' is the wrong type '%s', expected type 'string'", cmd, it.Element().Key, v.Type)
		}
		m := v.StringValue()
		if !slices.Contains(Mechanisms, m) {
			return nil, mongoerr.New(mongoerr.BadValue, "Unknown auth mechanism '%s'", m)
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "mechanisms field must not be empty")
	}
	return out, nil
}

// Credentials derives name's credentials for password pwd under each of
// mechs, with the manager's iteration counts.
func (m *Manager) Credentials(name, pwd string, mechs []string) (map[string]Credential, error) {
	creds := map[string]Credential{}
	for _, mech := range mechs {
		cred, err := NewCredential(mech, name, pwd, m.Iterations(mech))
		if err != nil {
			return nil, err
		}
		creds[mech] = cred
	}
	return creds, nil
}

// KeepMechanisms trims u's credentials to mechs (updateUser's mechanisms
// without a password): each must be one u already has.
func (u *User) KeepMechanisms(mechs []string) error {
	kept := map[string]Credential{}
	for _, mech := range mechs {
		cred, ok := u.Credentials[mech]
		if !ok {
			return mongoerr.New(mongoerr.BadValue, "mechanisms field must be a subset of previously set mechanisms")
		}
		kept[mech] = cred
	}
	u.Credentials = kept
	return nil
}

// GrantRoles adds roles to u, or with grant false removes them.
func (u *User) GrantRoles(roles []RoleRef, grant bool) {
	for _, r := range roles {
		has := u.HasRole(r)
		switch {
		case grant && !has:
			u.Roles = append(u.Roles, r)
		case !grant && has:
			u.Roles = slices.DeleteFunc(u.Roles, func(x RoleRef) bool { return x == r })
		}
	}
}

// InfoTarget is what usersInfo or rolesInfo asks for: every user of every
// database (usersInfo's forAllDBs), every user or role of the request's
// database (1), or the names listed.
type InfoTarget struct {
	AllDBs, DB bool
	Users      []UserName
	Roles      []RoleRef
}

// ParseInfoTarget reads usersInfo's (roles false) or rolesInfo's (roles
// true) argument: 1, a name on database db, a {user, db} or {role, db}
// document, an array of those, or for usersInfo {forAllDBs: true}.
func ParseInfoTarget(cmd, db string, v bson.Value, roles bool) (InfoTarget, error) {
	kind, plural := "user", "User"
	if roles {
		kind, plural = "role", "Role"
	}
	var t InfoTarget
	one := func(v bson.Value) error {
		var name, ndb string
		switch v.Type {
		case bson.TypeString:
			name, ndb = v.StringValue(), db
		case bson.TypeDocument:
			n, ok1 := v.Document().Lookup(kind)
			d, ok2 := v.Document().Lookup("db")
			if !ok1 || !ok2 || n.Type != bson.TypeString || d.Type != bson.TypeString {
				return mongoerr.New(mongoerr.BadValue, "%s name must contain string fields '%s' and 'db'", plural, kind)
			}
			name, ndb = n.StringValue(), d.StringValue()
		default:
			return mongoerr.New(mongoerr.BadValue, "%s name must be either a string or an object", plural)
		}
		if roles {
			t.Roles = append(t.Roles, RoleRef{Role: name, DB: ndb})
		} else {
			t.Users = append(t.Users, UserName{User: name, DB: ndb})
		}
		return nil
	}
	switch {
	case v.IsNumber():
		if n, _ := v.AsFloat64(); n != 1 {
			return t, mongoerr.New(mongoerr.BadValue, "%s=%s is not a valid argument, only %s=1 is allowed", cmd, v.String(), cmd)
		}
		t.DB = true
		return t, nil
	case v.Type == bson.TypeDocument && !roles:
		if fa, ok := v.Document().Lookup("forAllDBs"); ok {
			if !fa.Truthy() {
				return t, mongoerr.New(mongoerr.BadValue, "forAllDBs must be true")
			}
			t.AllDBs = true
			return t, nil
		}
	case v.Type == bson.TypeArray:
		it := v.Document().Iter()
		for it.Next() {
			if err := one(it.Element().Value); err != nil {
				return t, err
			}
		}
		return t, nil
	}
	return t, one(v)
}

// IsLoopback reports whether addr (host:port or host) is a loopback
// address, for the localhost exception.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// RenameNeeds is what renameCollection from one namespace to another
// needs: within one database renameCollectionSameDB on both; across
// databases find and dropCollection on the source and insert,
// createCollection and createIndex on the target. requestDB is used when
// the names are not strings (the command then answers the bad argument).
func RenameNeeds(requestDB string, from, to bson.Value) []Need {
	if from.Type != bson.TypeString || to.Type != bson.TypeString {
		return []Need{{DB: requestDB, Actions: RenameCollectionSameDB}}
	}
	fdb, fcoll, _ := strings.Cut(from.StringValue(), ".")
	tdb, tcoll, _ := strings.Cut(to.StringValue(), ".")
	if fdb == tdb {
		return []Need{{DB: fdb, Coll: fcoll, Actions: RenameCollectionSameDB}, {DB: tdb, Coll: tcoll, Actions: RenameCollectionSameDB}}
	}
	return []Need{{DB: fdb, Coll: fcoll, Actions: Find | DropCollection}, {DB: tdb, Coll: tcoll, Actions: Insert | CreateCollection | CreateIndex}}
}

// ViewNeeds: creating or modifying a view (create or collMod body with
// viewOn or pipeline, on database db) needs find on its source and on
// every namespace its pipeline reads, as mongod checks at create and
// collMod (a view could otherwise read what its creator cannot).
func ViewNeeds(db string, body bson.Doc) []Need {
	viewOn, hasViewOn := body.Lookup("viewOn")
	pipeline, hasPipeline := body.Lookup("pipeline")
	if !hasViewOn && !hasPipeline {
		return nil
	}
	var source string
	if viewOn.Type == bson.TypeString {
		source = viewOn.StringValue()
	}
	out := []Need{{DB: db, Coll: source, Actions: Find}}
	return append(out, PipelineNeeds(db, pipeline)...)
}

// AppendUserFragment appends rolesInfo's showPrivileges: "asUserFragment"
// answer for roles: {userFragment: {roles, inheritedRoles,
// inheritedPrivileges, inheritedAuthenticationRestrictions}}.
func AppendUserFragment(b *bson.Builder, privs *Privileges, roles, inherited []RoleRef) {
	b.StartDocument("userFragment")
	appendRoleRefs(b, "roles", roles)
	appendRoleRefs(b, "inheritedRoles", inherited)
	b.StartArray("inheritedPrivileges")
	privs.AppendTo(b)
	b.End()
	b.StartArray("inheritedAuthenticationRestrictions")
	b.End()
	b.End()
}

// AppendRoleRefs appends roles as an array of {role, db} documents.
func AppendRoleRefs(b *bson.Builder, field string, roles []RoleRef) { appendRoleRefs(b, field, roles) }
