package auth

import (
	"cmp"
	"slices"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Privileges and resources.
//
// A privilege is a set of actions on a resource, MongoDB's resource
// documents: {cluster: true} (the server), {anyResource: true}
// (everything), {db: "d", collection: ""} (database d and all its
// collections), {db: "", collection: "c"} (collection c in every
// database), {db: "d", collection: "c"} (one namespace) and {db: "",
// collection: ""} (every database and collection). Built-in roles grant
// database-wide and every-database privileges; user-defined roles grant
// any of these. A check (Permits) asks for actions on a database and, when
// the command acts on one, a collection: it holds when the union of the
// privileges of every resource pattern matching that namespace covers the
// actions, as mongod's AuthorizationSession checks them.

// Resource is a privilege's resource. DB "" matches every database, Coll
// "" every collection of the database(s) (and the database itself).
type Resource struct {
	Cluster, AnyResource bool
	DB, Coll             string
}

func (r Resource) appendTo(b *bson.Builder) {
	switch {
	case r.Cluster:
		b.AppendBool("cluster", true)
	case r.AnyResource:
		b.AppendBool("anyResource", true)
	default:
		b.AppendString("db", r.DB)
		b.AppendString("collection", r.Coll)
	}
}

// rank orders resources as privileges are listed: cluster, anyResource,
// then by database and collection.
func (r Resource) rank() int {
	switch {
	case r.Cluster:
		return 0
	case r.AnyResource:
		return 1
	}
	return 2
}

func compareResources(a, b Resource) int {
	if c := cmp.Compare(a.rank(), b.rank()); c != 0 {
		return c
	}
	if c := strings.Compare(a.DB, b.DB); c != 0 {
		return c
	}
	return strings.Compare(a.Coll, b.Coll)
}

// ParseResource reads a resource document.
func ParseResource(v bson.Value) (Resource, error) {
	if v.Type != bson.TypeDocument {
		return Resource{}, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'resource' is the wrong type '%s', expected type 'object'", v.Type)
	}
	var r Resource
	var hasDB, hasColl, hasCluster, hasAny bool
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "cluster", "anyResource":
			if e.Value.Type != bson.TypeBoolean {
				return Resource{}, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'resource.%s' is the wrong type '%s', expected type 'bool'", e.Key, e.Value.Type)
			}
			if !e.Value.Boolean() {
				return Resource{}, mongoerr.New(mongoerr.BadValue, "resource: %s: false is not a valid resource", e.Key)
			}
			if e.Key == "cluster" {
				hasCluster, r.Cluster = true, true
			} else {
				hasAny, r.AnyResource = true, true
			}
		case "db", "collection":
			if e.Value.Type != bson.TypeString {
				return Resource{}, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'resource.%s' is the wrong type '%s', expected type 'string'", e.Key, e.Value.Type)
			}
			if e.Key == "db" {
				hasDB, r.DB = true, e.Value.StringValue()
			} else {
				hasColl, r.Coll = true, e.Value.StringValue()
			}
		default:
			return Resource{}, mongoerr.New(mongoerr.IDLUnknownField, "BSON field 'resource.%s' is an unknown field.", e.Key)
		}
	}
	kinds := 0
	for _, k := range []bool{hasCluster, hasAny, hasDB || hasColl} {
		if k {
			kinds++
		}
	}
	switch {
	case kinds != 1:
		return Resource{}, mongoerr.New(mongoerr.BadValue, "resource must have exactly one of cluster: true, anyResource: true, or db and collection: %s", v.String())
	case (hasDB || hasColl) && !(hasDB && hasColl):
		return Resource{}, mongoerr.New(mongoerr.BadValue, "resource pattern must contain both 'db' and 'collection': %s", v.String())
	}
	return r, nil
}

// Privilege is a resource and the names of the actions granted on it, as
// a user-defined role stores it.
type Privilege struct {
	Resource Resource
	Actions  []string
}

// AppendTo appends {resource, actions} to b.
func (p Privilege) AppendTo(b *bson.Builder) {
	b.StartDocument("resource")
	p.Resource.appendTo(b)
	b.End()
	b.StartArray("actions")
	for i, a := range p.Actions {
		b.AppendString(bson.Index(i), a)
	}
	b.End()
}

// ParsePrivileges reads a privileges array of {resource, actions}
// documents, merging those on the same resource.
func ParsePrivileges(field string, v bson.Value) ([]Privilege, error) {
	if v.Type != bson.TypeArray {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s' is the wrong type '%s', expected type 'array'", field, v.Type)
	}
	var out []Privilege
	var unknown []string
	it := v.Document().Iter()
	for it.Next() {
		pv := it.Element().Value
		if pv.Type != bson.TypeDocument {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected type 'object'", field, it.Element().Key, pv.Type)
		}
		var p Privilege
		var hasRes, hasActions bool
		pit := pv.Document().Iter()
		for pit.Next() {
			e := pit.Element()
			switch e.Key {
			case "resource":
				r, err := ParseResource(e.Value)
				if err != nil {
					return nil, err
				}
				p.Resource, hasRes = r, true
			case "actions":
				if e.Value.Type != bson.TypeArray {
					return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'privilege.actions' is the wrong type '%s', expected type 'array'", e.Value.Type)
				}
				hasActions = true
				ait := e.Value.Document().Iter()
				for ait.Next() {
					a := ait.Element().Value
					if a.Type != bson.TypeString {
						return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'privilege.actions.%s' is the wrong type '%s', expected type 'string'", ait.Element().Key, a.Type)
					}
					if !KnownAction(a.StringValue()) {
						unknown = append(unknown, a.StringValue())
						continue
					}
					p.Actions = append(p.Actions, a.StringValue())
				}
			default:
				return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field 'privilege.%s' is an unknown field.", e.Key)
			}
		}
		if !hasRes {
			return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'privilege.resource' is missing but a required field")
		}
		if !hasActions {
			return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'privilege.actions' is missing but a required field")
		}
		out = AddPrivileges(out, []Privilege{p})
	}
	if len(unknown) > 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "Unrecognized action privilege strings: %s", strings.Join(unknown, ", "))
	}
	return out, nil
}

// AddPrivileges merges add into privs (actions on the same resource are
// united), keeping the result sorted by resource and action.
func AddPrivileges(privs, add []Privilege) []Privilege {
	for _, p := range add {
		i := slices.IndexFunc(privs, func(q Privilege) bool { return q.Resource == p.Resource })
		if i < 0 {
			privs = append(privs, Privilege{Resource: p.Resource})
			i = len(privs) - 1
		}
		for _, a := range p.Actions {
			if !slices.Contains(privs[i].Actions, a) {
				privs[i].Actions = append(privs[i].Actions, a)
			}
		}
		slices.Sort(privs[i].Actions)
	}
	slices.SortFunc(privs, func(a, b Privilege) int { return compareResources(a.Resource, b.Resource) })
	return privs
}

// RemovePrivileges takes the actions of rm away from privs' privileges on
// the same resources (a privilege left with no action is removed).
func RemovePrivileges(privs, rm []Privilege) []Privilege {
	for _, p := range rm {
		for i := range privs {
			if privs[i].Resource == p.Resource {
				privs[i].Actions = slices.DeleteFunc(privs[i].Actions, func(a string) bool { return slices.Contains(p.Actions, a) })
			}
		}
	}
	return slices.DeleteFunc(privs, func(p Privilege) bool { return len(p.Actions) == 0 })
}

// grant is what Privileges holds for one resource: Cairn's actions and the
// names of mongod actions Cairn does not check (kept for display).
type grant struct {
	actions Action
	names   []string
}

// Privileges is what a set of roles allows, resolved once.
type Privileges struct {
	m map[Resource]*grant
}

func newPrivileges() *Privileges { return &Privileges{m: map[Resource]*grant{}} }

func (p *Privileges) add(r Resource, a Action, names []string) {
	if a == 0 && len(names) == 0 {
		return
	}
	g := p.m[r]
	if g == nil {
		g = &grant{}
		p.m[r] = g
	}
	g.actions |= a
	for _, n := range names {
		if !slices.Contains(g.names, n) {
			g.names = append(g.names, n)
		}
	}
}

// addPrivilege adds a stored privilege.
func (p *Privileges) addPrivilege(pr Privilege) {
	var a Action
	var other []string
	for _, n := range pr.Actions {
		if x, ok := actionByName(n); ok {
			a |= x
		} else {
			other = append(other, n)
		}
	}
	p.add(pr.Resource, a, other)
}

func (p *Privileges) on(r Resource) Action {
	if g := p.m[r]; g != nil {
		return g.actions
	}
	return 0
}

// Resolve computes the privileges of built-in roles (others grant
// nothing; ResolveRoles also resolves user-defined ones).
func Resolve(roles []RoleRef) *Privileges {
	p := newPrivileges()
	for _, r := range roles {
		p.addBuiltin(r)
	}
	return p
}

// Allows reports whether the privileges include every action of need on
// database db (cluster actions are checked against the cluster resource).
func (p *Privileges) Allows(db string, need Action) bool {
	return p.Permits(Need{DB: db, Actions: need})
}

// Permits reports whether the privileges include every action n needs on
// its namespace (its database, or one collection of it when n names one;
// cluster actions on the cluster resource).
func (p *Privileges) Permits(n Need) bool {
	if p == nil {
		return false
	}
	need := n.Actions &^ (Open | Authenticated)
	all := p.on(Resource{AnyResource: true})
	if c := need & ClusterActions; c != 0 && (p.on(Resource{Cluster: true})|all)&c != c {
		return false
	}
	d := need & DBActions
	if d == 0 {
		return true
	}
	have := all | p.on(Resource{}) | p.on(Resource{DB: n.DB})
	if n.Coll != "" {
		have |= p.on(Resource{DB: n.DB, Coll: n.Coll}) | p.on(Resource{Coll: n.Coll})
	}
	return have&d == d
}

// AnyDatabase reports whether the privileges grant any of the database
// actions in need on every database.
func (p *Privileges) AnyDatabase(need Action) bool {
	return p != nil && (p.on(Resource{})|p.on(Resource{AnyResource: true}))&need != 0
}

// Databases lists the databases on which the privileges grant some
// database action, on the database or one of its collections (sorted).
func (p *Privileges) Databases() []string {
	var out []string
	if p == nil {
		return nil
	}
	for r, g := range p.m {
		if r.DB != "" && g.actions&DBActions != 0 && !slices.Contains(out, r.DB) {
			out = append(out, r.DB)
		}
	}
	slices.Sort(out)
	return out
}

// List returns the privileges as {resource, actions} pairs, by resource.
func (p *Privileges) List() []Privilege {
	var out []Privilege
	if p == nil {
		return nil
	}
	for r, g := range p.m {
		names := append(g.actions.Names(), g.names...)
		if len(names) == 0 {
			continue
		}
		slices.Sort(names)
		out = append(out, Privilege{Resource: r, Actions: names})
	}
	slices.SortFunc(out, func(a, b Privilege) int { return compareResources(a.Resource, b.Resource) })
	return out
}

// AppendTo appends the privileges as connectionStatus' showPrivileges
// lists them: {resource, actions} documents.
func (p *Privileges) AppendTo(b *bson.Builder) {
	for i, pr := range p.List() {
		b.StartDocument(bson.Index(i))
		pr.AppendTo(b)
		b.End()
	}
}
