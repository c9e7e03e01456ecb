package auth

import (
	"slices"

	"github.com/cairndb/cairn/bson"

	"github.com/cairndb/cairn/internal/mongoerr"
)

// RoleRef names a role: a built-in role's name and the database it is
// granted on.
type RoleRef struct {
	Role, DB string
}

func (r RoleRef) String() string { return r.Role + "@" + r.DB }

// builtinRole is what one built-in role grants.
type builtinRole struct {
	// db actions on the role's own database.
	db Action
	// any actions on every database.
	any Action
	// cluster actions.
	cluster Action
	// adminOnly roles exist only on the admin database.
	adminOnly bool
}

const (
	readActions      = Find | ListCollections | ListIndexes | CollStats | DBStats | DBHash | KillCursors
	readWriteActions = readActions | Insert | Update | Remove | CreateCollection | DropCollection |
		CreateIndex | DropIndex | RenameCollectionSameDB
	dbAdminActions = ListCollections | ListIndexes | CollStats | DBStats | DBHash | CollMod | Compact |
		Validate | DropDatabase | CreateCollection | DropCollection | CreateIndex | DropIndex | RenameCollectionSameDB |
		PlanCacheRead | PlanCacheWrite
	userAdminActions = CreateUser | DropUser | GrantRole | RevokeRole | ViewUser | ChangePassword | ChangeCustomData
	monitorActions   = ServerStatus | HostInfo | GetCmdLineOpts | GetParameter | GetLog | Top | InProg |
		ListDatabases | GetDefaultRWConcern | ListSessions | ReplSetGetStatus | ReplSetGetConfig
)

// builtinRoles are MongoDB's built-in roles that Cairn implements, with the
// subset of their privileges that maps onto Cairn's commands.
var builtinRoles = map[string]builtinRole{
	"read":                 {db: readActions},
	"readWrite":            {db: readWriteActions},
	"dbAdmin":              {db: dbAdminActions},
	"userAdmin":            {db: userAdminActions},
	"dbOwner":              {db: readWriteActions | dbAdminActions | userAdminActions},
	"readAnyDatabase":      {any: readActions, cluster: ListDatabases, adminOnly: true},
	"readWriteAnyDatabase": {any: readWriteActions, cluster: ListDatabases, adminOnly: true},
	"userAdminAnyDatabase": {any: userAdminActions, cluster: ListDatabases, adminOnly: true},
	"dbAdminAnyDatabase":   {any: dbAdminActions, cluster: ListDatabases, adminOnly: true},
	"clusterMonitor":       {any: CollStats | DBStats | ListIndexes | ListCollections | PlanCacheRead | IndexStats, cluster: monitorActions, adminOnly: true},
	"clusterAdmin": {any: CollStats | DBStats | ListIndexes | ListCollections | Validate | Compact | IndexStats,
		cluster: ClusterActions, adminOnly: true},
	"root": {any: DBActions, cluster: ClusterActions, adminOnly: true},
}

// CheckRole reports RoleNotFound unless r is a built-in role that exists on
// its database.
func CheckRole(r RoleRef) error {
	br, ok := builtinRoles[r.Role]
	if !ok || (br.adminOnly && r.DB != "admin") || r.DB == "" {
		return mongoerr.New(mongoerr.RoleNotFound, "Could not find role: %s", r)
	}
	return nil
}

// Privileges is what a set of roles allows, resolved once.
type Privileges struct {
	any     Action
	cluster Action
	dbs     map[string]Action
}

// Resolve computes the privileges of roles (unknown roles grant nothing).
func Resolve(roles []RoleRef) *Privileges {
	p := &Privileges{dbs: map[string]Action{}}
	for _, r := range roles {
		br, ok := builtinRoles[r.Role]
		if !ok || (br.adminOnly && r.DB != "admin") {
			continue
		}
		p.dbs[r.DB] |= br.db
		p.any |= br.any
		p.cluster |= br.cluster
	}
	return p
}

// Allows reports whether the privileges include every action of need on
// database db (cluster actions are checked against the cluster resource).
func (p *Privileges) Allows(db string, need Action) bool {
	if p == nil {
		return false
	}
	need &^= Open | Authenticated
	if c := need & ClusterActions; c != 0 && p.cluster&c != c {
		return false
	}
	d := need & DBActions
	return d == 0 || (p.any|p.dbs[db])&d == d
}

// AnyDatabase reports whether the privileges grant any of the database
// actions in need on every database.
func (p *Privileges) AnyDatabase(need Action) bool {
	return p != nil && p.any&need != 0
}

// Databases lists the databases on which the privileges grant some
// database action (sorted).
func (p *Privileges) Databases() []string {
	var out []string
	for db, a := range p.dbs {
		if a != 0 {
			out = append(out, db)
		}
	}
	slices.Sort(out)
	return out
}

// AppendTo appends the privileges as connectionStatus' showPrivileges
// lists them: {resource, actions} documents.
func (p *Privileges) AppendTo(b *bson.Builder) {
	i := 0
	add := func(res func(), a Action) {
		if a == 0 {
			return
		}
		b.StartDocument(bson.Index(i))
		i++
		b.StartDocument("resource")
		res()
		b.End()
		b.StartArray("actions")
		for j, n := range a.Names() {
			b.AppendString(bson.Index(j), n)
		}
		b.End()
		b.End()
	}
	add(func() { b.AppendBool("cluster", true) }, p.cluster)
	add(func() { b.AppendString("db", ""); b.AppendString("collection", "") }, p.any)
	for _, db := range p.Databases() {
		add(func() { b.AppendString("db", db); b.AppendString("collection", "") }, p.dbs[db])
	}
}
