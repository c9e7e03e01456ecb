package auth

import "strings"

// Action is a set of MongoDB privilege actions. Database actions apply to
// one database (or, through an "AnyDatabase" role, to every database);
// cluster actions apply to the server as a whole.
type Action uint64

// Need is a set of actions on one database, or on one collection of it
// when Coll is set: what an operation requires (the command layer checks
// it before the operation and again on every getMore of the cursor the
// operation opened).
type Need struct {
	DB, Coll string
	Actions  Action
}

// Database actions.
const (
	Find Action = 1 << iota
	Insert
	Update
	Remove
	CreateCollection
	DropCollection
	CreateIndex
	DropIndex
	ListCollections
	ListIndexes
	CollStats
	DBStats
	DBHash
	KillCursors
	CollMod
	Compact
	Validate
	DropDatabase
	RenameCollectionSameDB
	CreateUser
	DropUser
	GrantRole
	RevokeRole
	ViewUser
	ChangePassword
	ChangeCustomData
	PlanCacheRead
	PlanCacheWrite
	IndexStats
	CreateRole
	DropRole
	ViewRole

	// Cluster actions.
	ServerStatus
	HostInfo
	GetCmdLineOpts
	GetParameter
	SetParameter
	GetLog
	Top
	InProg
	KillOp
	ListDatabases
	Fsync
	LogRotate
	DropConnections
	GetDefaultRWConcern
	SetDefaultRWConcern
	KillAnySession
	KillAnyCursor
	ListSessions
	ReplSetResizeOplog
	ReplSetGetStatus
	ReplSetGetConfig
	ReplSetConfigure
	ReplSetStateChange
	GetClusterParameter
	SetClusterParameter
	// Internal is what the members of a replica set need to run the
	// commands they send each other: only the __system user (internal
	// authentication with --keyFile) holds it, as mongod's "internal".
	Internal

	lastAction
)

// Requirement markers: not privileges a role grants, but what a command
// may declare instead of actions.
const (
	// Open commands run without authentication (hello, saslStart, ping...).
	Open Action = 1 << 62
	// Authenticated commands need an authenticated user but no privilege
	// (getMore and killCursors act on the caller's own cursors).
	Authenticated Action = 1 << 61
)

// AllActions is every privilege action (what root holds).
const AllActions = lastAction - 1

// ClusterActions are the actions that apply to the cluster resource.
const ClusterActions = ServerStatus | HostInfo | GetCmdLineOpts | GetParameter | SetParameter | GetLog |
	Top | InProg | KillOp | ListDatabases | Fsync | LogRotate | DropConnections | GetDefaultRWConcern | SetDefaultRWConcern | KillAnySession | KillAnyCursor | ListSessions |
	ReplSetResizeOplog | ReplSetGetStatus | ReplSetGetConfig | ReplSetConfigure | ReplSetStateChange |
	GetClusterParameter | SetClusterParameter | Internal

// DBActions are the actions that apply to a database.
const DBActions = AllActions &^ ClusterActions

var actionNames = []string{
	"find", "insert", "update", "remove", "createCollection", "dropCollection", "createIndex", "dropIndex",
	"listCollections", "listIndexes", "collStats", "dbStats", "dbHash", "killCursors", "collMod", "compact",
	"validate", "dropDatabase", "renameCollectionSameDB", "createUser", "dropUser", "grantRole", "revokeRole",
	"viewUser", "changePassword", "changeCustomData", "planCacheRead", "planCacheWrite", "indexStats",
	"createRole", "dropRole", "viewRole",
	"serverStatus", "hostInfo", "getCmdLineOpts", "getParameter", "setParameter", "getLog", "top", "inprog",
	"killop", "listDatabases", "fsync", "logRotate", "dropConnections", "getDefaultRWConcern", "setDefaultRWConcern", "killAnySession",
	"killAnyCursor", "listSessions", "replSetResizeOplog", "replSetGetStatus", "replSetGetConfig", "replSetConfigure", "replSetStateChange",
	"getClusterParameter", "setClusterParameter", "internal",
}

// Names lists the actions of a as MongoDB spells them.
func (a Action) Names() []string {
	var out []string
	for i, n := range actionNames {
		if a&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

func (a Action) String() string { return strings.Join(a.Names(), ",") }

// actionByName maps a MongoDB action name to Cairn's action ("anyAction":
// every action).
func actionByName(name string) (Action, bool) {
	if name == "anyAction" {
		return AllActions, true
	}
	for i, n := range actionNames {
		if n == name {
			return 1 << i, true
		}
	}
	return 0, false
}

// mongodActions are the privilege actions mongod 7.0 knows beside Cairn's
// own: a user-defined role may name them (they are stored and shown), but
// they grant nothing Cairn checks, since Cairn has no command needing
// them. Any other name is refused as mongod refuses it.
var mongodActions = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`addShard advanceClusterTime allCollectionStats analyze analyzeShardKey
		appendOplogNote applicationMessage auditConfigure authSchemaUpgrade bypassDocumentValidation
		bypassWriteBlockingMode changeOwnPassword changeOwnCustomData changeStream checkFreeMonitoringStatus
		checkMetadataConsistency cleanupOrphaned clearJumboFlag cleanupStructuredEncryptionData closeAllDatabases
		compactStructuredEncryptionData configureQueryAnalyzer connPoolStats connPoolSync convertToCapped
		cpuProfiler createDatabase createSearchIndexes dbCheck dropAllRolesFromDatabase dropAllUsersFromDatabase
		dropSearchIndex emptycapped enableProfiler enableSharding exportCollection flushRouterConfig forceUUID
		fsyncUnlock getClusterParameter getDatabaseVersion getShardMap getShardVersion grantPrivilegesToRole
		grantRolesToRole grantRolesToUser impersonate importCollection internal invalidateUserCache
		issueDirectShardOperations listCachedAndActiveUsers listCursors listSampledQueries listSearchIndexes
		listShards updateSearchIndex moveChunk moveCollection netstat oidReset operationMetrics
		planCacheIndexFilter querySettings queryStatsRead queryStatsReadTransformed refineCollectionShardKey
		reIndex removeShard renameCollection repairDatabase replSetHeartbeat replSetReconfig reshardCollection
		resync revokePrivilegesFromRole revokeRolesFromRole revokeRolesFromUser rotateCertificates
		runAsLessPrivilegedUser runTenantMigration setAuthenticationRestriction setClusterParameter
		setFeatureCompatibilityVersion setFreeMonitoring setUserWriteBlockMode shardCollection
		shardedDataDistribution shardingState shutdown splitChunk splitVector storageDetails touch trafficRecord
		unlock useTenant useUUID updateRole updateUser applyOps setChangeStreamState getChangeStreamState
		authCheck authenticate auditLogRotate`) {
		mongodActions[n] = true
	}
}

// KnownAction reports whether name is a MongoDB privilege action.
func KnownAction(name string) bool {
	_, ok := actionByName(name)
	return ok || mongodActions[name]
}
