package auth

import "strings"

// Action is a set of MongoDB privilege actions. Database actions apply to
// one database (or, through an "AnyDatabase" role, to every database);
// cluster actions apply to the server as a whole.
type Action uint64

// Need is a set of actions on one database: what an operation requires
// (the command layer checks it before the operation and again on every
// getMore of the cursor the operation opened).
type Need struct {
	DB      string
	Actions Action
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
	ReplSetResizeOplog | ReplSetGetStatus | ReplSetGetConfig | ReplSetConfigure | ReplSetStateChange

// DBActions are the actions that apply to a database.
const DBActions = AllActions &^ ClusterActions

var actionNames = []string{
	"find", "insert", "update", "remove", "createCollection", "dropCollection", "createIndex", "dropIndex",
	"listCollections", "listIndexes", "collStats", "dbStats", "dbHash", "killCursors", "collMod", "compact",
	"validate", "dropDatabase", "renameCollectionSameDB", "createUser", "dropUser", "grantRole", "revokeRole",
	"viewUser", "changePassword", "changeCustomData", "planCacheRead", "planCacheWrite", "indexStats",
	"serverStatus", "hostInfo", "getCmdLineOpts", "getParameter", "setParameter", "getLog", "top", "inprog",
	"killop", "listDatabases", "fsync", "logRotate", "dropConnections", "getDefaultRWConcern", "setDefaultRWConcern", "killAnySession",
	"killAnyCursor", "listSessions", "replSetResizeOplog", "replSetGetStatus", "replSetGetConfig", "replSetConfigure", "replSetStateChange",
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
