package auth

import (
	"slices"
	"strings"

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
	userAdminActions = CreateUser | DropUser | GrantRole | RevokeRole | ViewUser | ChangePassword | ChangeCustomData |
		CreateRole | DropRole | ViewRole
	monitorActions = ServerStatus | HostInfo | GetCmdLineOpts | GetParameter | GetLog | Top | InProg |
		ListDatabases | GetDefaultRWConcern | ListSessions | ReplSetGetStatus | ReplSetGetConfig | GetClusterParameter
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
		cluster: ClusterActions &^ Internal, adminOnly: true},
	"root": {any: DBActions, cluster: ClusterActions &^ Internal, adminOnly: true},
	// __system is the role of the __system user members authenticate as
	// (--keyFile): everything, the internal action included.
	"__system": {any: DBActions, cluster: ClusterActions, adminOnly: true},
}

// IsBuiltin reports whether r is a built-in role that exists on its
// database (mongod's isBuiltinRole).
func IsBuiltin(r RoleRef) bool {
	br, ok := builtinRoles[r.Role]
	return ok && r.DB != "" && (!br.adminOnly || r.DB == "admin")
}

// BuiltinRoles lists the built-in roles of db, by name.
func BuiltinRoles(db string) []RoleRef {
	var out []RoleRef
	for name := range builtinRoles {
		if r := (RoleRef{Role: name, DB: db}); IsBuiltin(r) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b RoleRef) int { return strings.Compare(a.Role, b.Role) })
	return out
}

func roleNotFound(r RoleRef) error {
	return mongoerr.New(mongoerr.RoleNotFound, "Could not find role: %s", r)
}

// addBuiltin adds what built-in role r grants to p.
func (p *Privileges) addBuiltin(r RoleRef) {
	if !IsBuiltin(r) {
		return
	}
	br := builtinRoles[r.Role]
	p.add(Resource{DB: r.DB}, br.db, nil)
	p.add(Resource{}, br.any, nil)
	p.add(Resource{Cluster: true}, br.cluster, nil)
}
