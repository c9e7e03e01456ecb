// Package command holds Cairn's database command handlers, one file per
// command family, all registered in one table (table.go). A handler
// parses its request (internal/dispatch's Args), calls the domain package
// that does the work (internal/exec, internal/auth, internal/session, ...)
// and appends its reply fields to Ctx.Reply. The request framework around
// every handler — authorization, sessions and transactions, the replica
// set's rules, currentOp/killOp, the slow-operation log, the profiler, top
// and the latency counters, error replies — is internal/dispatch's; this
// package registers its table there at init and gives the server the
// framework's types under their old names (ctx.go).
package command

import (
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/dispatch"
	"github.com/cairndb/cairn/internal/raftrepl"
)

// table lists every command Cairn answers. A name that is not here gets
// CommandNotFound (59), as MongoDB answers unknown commands.
var table = []*Command{
	{Name: "hello", Run: hello, Needs: auth.Open, Help: "the handshake: server role and limits"},
	{Name: "isMaster", Aliases: []string{"ismaster"}, Run: hello, Needs: auth.Open, Help: "legacy name of hello"},
	{Name: "ping", Run: ping, Needs: auth.Open, Help: "round trip"},
	// The members' internal commands (internal/raftrepl). With access
	// control on they need the internal action, which only the __system
	// user holds (members authenticate as it with --keyFile).
	{Name: raftrepl.CommandName, Run: raftMessages, AdminOnly: true, Needs: auth.Internal, Help: "internal: Raft messages between replica set members"},
	{Name: raftrepl.SnapshotCommand, Run: raftSnapshot, AdminOnly: true, Needs: auth.Internal, Help: "internal: a chunk of a snapshot for a member's initial sync"},
	{Name: raftrepl.JoinCommand, Run: raftJoin, AdminOnly: true, Needs: auth.Internal, Help: "internal: join the replica set whose primary sends it"},
	{Name: "buildInfo", Aliases: []string{"buildinfo"}, Run: buildInfo, Needs: auth.Open, Help: "version and build information"},
	{Name: "hostInfo", Run: hostInfo, Needs: auth.HostInfo, Help: "the host's hardware and OS"},
	{Name: "whatsmyuri", Run: whatsmyuri, Needs: auth.Open, Help: "the client's address as the server sees it"},
	{Name: "testVersion2", Run: testAPICommand, TestOnly: true, Needs: auth.Authenticated, Help: "test only: a command in API Version 2 only"},
	{Name: "testVersions1And2", Run: testAPICommand, TestOnly: true, Needs: auth.Authenticated, Help: "test only: a command in API Versions 1 and 2"},
	{Name: "testDeprecation", Run: testAPICommand, TestOnly: true, Needs: auth.Authenticated, Help: "test only: a command deprecated in API Version 1"},
	{Name: "testDeprecationInVersion2", Run: testAPICommand, TestOnly: true, Needs: auth.Authenticated, Help: "test only: a command deprecated in API Version 2"},
	{Name: "configureFailPoint", Run: configureFailPoint, AdminOnly: true, TestOnly: true, Needs: auth.Authenticated, Help: "test only: configure a fail point (enableTestCommands)"},
	{Name: "getParameter", Run: getParameter, AdminOnly: true, Needs: auth.GetParameter, Help: "server parameters"},
	{Name: "setParameter", Run: setParameter, AdminOnly: true, Needs: auth.SetParameter, Help: "change server parameters (logLevel)"},
	{Name: "logRotate", Run: logRotate, AdminOnly: true, Needs: auth.LogRotate, Help: "rotate the log file"},
	// profile needs mongod's enableProfiler; Cairn checks collMod, which
	// the same built-in roles (dbAdmin, dbOwner, root) grant.
	{Name: "profile", Run: profile, Needs: auth.CollMod, Help: "read or set slowms, the slow-operation log's threshold (profiling level 0 only)"},
	{Name: "getCmdLineOpts", Run: getCmdLineOpts, AdminOnly: true, Needs: auth.GetCmdLineOpts, Help: "command line and parsed options"},
	{Name: "connectionStatus", Run: connectionStatus, Needs: auth.Open, Help: "authenticated users and roles"},
	{Name: "listCommands", Run: listCommands, Needs: auth.Open, Help: "this list"},
	{Name: "serverStatus", Run: serverStatus, Needs: auth.ServerStatus, Help: "server counters and engine statistics"},
	{Name: "getLog", Run: getLog, AdminOnly: true, Needs: auth.GetLog, Help: "recent log lines"},
	{Name: "startSession", Run: startSession, Needs: auth.Authenticated, Help: "start a logical session"},
	{Name: "refreshSessions", Run: refreshSessions, Needs: auth.Authenticated, Help: "keep sessions alive"},
	{Name: "commitTransaction", Run: commitTransaction, AdminOnly: true, Needs: auth.Authenticated, Help: "commit the session's multi-document transaction"},
	{Name: "abortTransaction", Run: abortTransaction, AdminOnly: true, Needs: auth.Authenticated, Help: "abort the session's multi-document transaction"},
	{Name: "endSessions", Run: endSessions, Needs: auth.Authenticated, Help: "end sessions, killing their cursors and operations"},
	{Name: "killSessions", Run: killSessions, Needs: auth.Authenticated, Help: "kill sessions' cursors and operations"},
	{Name: "killAllSessions", Run: killAllSessions, Needs: auth.KillAnySession, Help: "kill every session (or those of the users given)"},
	{Name: "killAllSessionsByPattern", Run: killAllSessionsByPattern, Needs: auth.KillAnySession, Help: "kill the sessions matching patterns (lsid, uid, users)"},
	{Name: "dropConnections", Run: dropConnections, AdminOnly: true, Needs: auth.DropConnections, Help: "drop outgoing connection pools (a standalone has none)"},
	{Name: "connPoolStats", Run: connPoolStats, Needs: auth.ServerStatus, Help: "outgoing connection pools (a standalone has none: all zero)"},

	{Name: "create", Run: create, Write: true, Needs: auth.CreateCollection, Help: "create a collection"},
	{Name: "convertToCapped", Run: convertToCapped, Write: true, Needs: auth.Find | auth.Insert | auth.CreateCollection | auth.DropCollection, Help: "make a collection capped"},
	{Name: "cloneCollectionAsCapped", Run: cloneCollectionAsCapped, Write: true, Needs: auth.Find | auth.Insert | auth.CreateCollection, Help: "copy a collection into a new capped collection"},
	{Name: "drop", Run: drop, Write: true, Needs: auth.DropCollection, Help: "drop a collection"},
	{Name: "dropDatabase", Run: dropDatabase, Write: true, Needs: auth.DropDatabase, Help: "drop a database"},
	{Name: "listDatabases", Run: listDatabases, AdminOnly: true, Needs: auth.Authenticated, Help: "databases with sizes"},
	{Name: "listCollections", Run: listCollections, Needs: auth.ListCollections, Help: "collections of a database"},
	{Name: "listIndexes", Run: listIndexes, Needs: auth.ListIndexes, Help: "indexes of a collection"},
	{Name: "createIndexes", Run: createIndexes, Write: true, Needs: auth.CreateIndex, Help: "build indexes (scan, sort, bulk load)"},
	{Name: "dropIndexes", Aliases: []string{"deleteIndexes"}, Run: dropIndexes, Write: true, Needs: auth.DropIndex, Help: "drop indexes"},
	// mongod's createSearchIndexes, updateSearchIndex and dropSearchIndex
	// actions (readWrite and dbAdmin have them) are Cairn's createIndex and
	// dropIndex, which the same roles grant.
	{Name: "createSearchIndexes", Run: searchIndexCommand, Needs: auth.CreateIndex, Help: "Atlas Search indexes: only supported with Atlas (CommandNotSupported)"},
	{Name: "updateSearchIndex", Run: searchIndexCommand, Needs: auth.CreateIndex, Help: "Atlas Search indexes: only supported with Atlas (CommandNotSupported)"},
	{Name: "dropSearchIndex", Run: searchIndexCommand, Needs: auth.DropIndex, Help: "Atlas Search indexes: only supported with Atlas (CommandNotSupported)"},
	{Name: "setClusterParameter", Run: setClusterParameter, AdminOnly: true, Write: true, Needs: auth.SetClusterParameter, Help: "set a cluster parameter (changeStreamOptions)"},
	{Name: "getClusterParameter", Run: getClusterParameter, AdminOnly: true, Needs: auth.GetClusterParameter, Help: "read cluster parameters (changeStreamOptions)"},
	{Name: "replSetResizeOplog", Run: replSetResizeOplog, AdminOnly: true, Write: true, Needs: auth.ReplSetResizeOplog, Help: "resize the oplog (size MB, minRetentionHours)"},
	{Name: "renameCollection", Run: renameCollection, AdminOnly: true, Write: true, Needs: auth.RenameCollectionSameDB, Help: "rename a collection"},
	{Name: "collStats", Aliases: []string{"collstats"}, Run: collStats, Needs: auth.CollStats, Help: "collection statistics"},
	{Name: "dbStats", Aliases: []string{"dbstats"}, Run: dbStats, Needs: auth.DBStats, Help: "database statistics"},
	{Name: "dataSize", Aliases: []string{"datasize"}, Run: dataSize, Needs: auth.Find, Help: "documents and bytes of a namespace, or of an index key range"},
	{Name: "collMod", Run: collMod, Write: true, Needs: auth.CollMod, Help: "modify collection options"},
	{Name: "planCacheClear", Run: planCacheClear, Needs: auth.PlanCacheWrite, Help: "drop a collection's cached query plans"},
	{Name: "validate", Run: validate, Needs: auth.Validate, Help: "check a collection against its indexes (full: also the storage engine)"},
	{Name: "compact", Run: compact, Write: true, Needs: auth.Compact, Help: "return free space to the file system"},
	{Name: "dbHash", Aliases: []string{"dbhash"}, Run: dbHash, Needs: auth.DBHash, Help: "hashes of collections' contents"},
	{Name: "top", Run: top, AdminOnly: true, Needs: auth.Top, Help: "time and count of operations per namespace"},
	{Name: "currentOp", Run: currentOp, AdminOnly: true, Needs: auth.InProg, Help: "operations in progress"},
	{Name: "killOp", Run: killOp, AdminOnly: true, Needs: auth.KillOp, Help: "interrupt an operation"},
	{Name: "getDefaultRWConcern", Run: getDefaultRWConcern, AdminOnly: true, Needs: auth.GetDefaultRWConcern, Help: "default read and write concerns"},
	{Name: "setDefaultRWConcern", Run: setDefaultRWConcern, AdminOnly: true, Write: true, Needs: auth.SetDefaultRWConcern, Help: "set the default read and write concerns"},
	{Name: "replSetInitiate", Run: replSetInitiate, AdminOnly: true, Needs: auth.ReplSetConfigure, Help: "initiate the replica set (one member)"},
	{Name: "replSetGetStatus", Run: replSetGetStatus, AdminOnly: true, Needs: auth.ReplSetGetStatus, Help: "the replica set's members and optimes"},
	{Name: "replSetGetConfig", Run: replSetGetConfig, AdminOnly: true, Needs: auth.ReplSetGetConfig, Help: "the replica set's configuration"},
	{Name: "replSetReconfig", Run: replSetReconfig, AdminOnly: true, Needs: auth.ReplSetConfigure, Help: "install a new replica set configuration"},
	{Name: "replSetStepDown", Run: replSetStepDown, AdminOnly: true, Needs: auth.ReplSetStateChange, Help: "step down as primary"},
	{Name: "replSetFreeze", Run: replSetFreeze, AdminOnly: true, Needs: auth.ReplSetStateChange, Help: "do not run for election for a while"},
	{Name: "fsync", Run: fsyncCmd, AdminOnly: true, Needs: auth.Fsync, Help: "make every write durable and checkpoint"},

	{Name: "insert", Run: insert, Write: true, Needs: auth.Insert, Help: "insert documents"},
	{Name: "find", Run: find, Needs: auth.Find, Help: "query documents"},
	{Name: "getMore", Run: getMore, Needs: auth.Authenticated, Help: "next batch of a cursor"},
	{Name: "killCursors", Run: killCursors, Needs: auth.Authenticated, Help: "close cursors"},
	{Name: "update", Run: update, Write: true, Needs: auth.Update, Help: "update documents"},
	{Name: "delete", Run: deleteCmd, Write: true, Needs: auth.Remove, Help: "delete documents"},
	{Name: "findAndModify", Aliases: []string{"findandmodify"}, Run: findAndModify, Write: true, Needs: auth.Find | auth.Update, Help: "update or remove one document and return it"},
	{Name: "count", Run: count, Needs: auth.Find, Help: "count matching documents"},
	{Name: "distinct", Run: distinct, Needs: auth.Find, Help: "distinct values of a field"},
	{Name: "aggregate", Run: aggregate, Needs: auth.Find, Help: "run an aggregation pipeline"},
	{Name: "mapReduce", Aliases: []string{"mapreduce"}, Run: mapReduceCmd, Needs: auth.Find, Help: "run map and reduce JavaScript functions over a collection (mapreduce.go; the engine is internal/js)"},
	{Name: "saslStart", Run: saslStart, Needs: auth.Open, Help: "begin a SASL (SCRAM) authentication"},
	{Name: "saslContinue", Run: saslContinue, Needs: auth.Open, Help: "continue a SASL authentication"},
	{Name: "logout", Run: logout, Needs: auth.Open, Help: "end the connection's authentication on this database"},
	{Name: "createUser", Run: createUser, Needs: auth.CreateUser, Help: "create a user"},
	{Name: "updateUser", Run: updateUser, Needs: auth.Authenticated, Help: "change a user's password, roles or custom data"},
	{Name: "dropUser", Run: dropUser, Needs: auth.DropUser, Help: "remove a user"},
	{Name: "dropAllUsersFromDatabase", Run: dropAllUsersFromDatabase, Needs: auth.DropUser, Help: "remove every user of a database"},
	{Name: "usersInfo", Run: usersInfo, Needs: auth.Authenticated, Help: "users and their roles"},
	{Name: "grantRolesToUser", Run: grantRolesToUser, Needs: auth.Authenticated, Help: "add roles to a user"},
	{Name: "revokeRolesFromUser", Run: revokeRolesFromUser, Needs: auth.Authenticated, Help: "remove roles from a user"},
	{Name: "createRole", Run: createRole, Needs: auth.CreateRole, Help: "create a user-defined role"},
	{Name: "updateRole", Run: updateRole, Needs: auth.Authenticated, Help: "replace a user-defined role's privileges or roles"},
	{Name: "dropRole", Run: dropRole, Needs: auth.DropRole, Help: "remove a user-defined role (and every grant of it)"},
	{Name: "dropAllRolesFromDatabase", Run: dropAllRolesFromDatabase, Needs: auth.DropRole, Help: "remove every user-defined role of a database"},
	{Name: "grantPrivilegesToRole", Run: grantPrivilegesToRole, Needs: auth.Authenticated, Help: "add privileges to a user-defined role"},
	{Name: "revokePrivilegesFromRole", Run: revokePrivilegesFromRole, Needs: auth.Authenticated, Help: "remove privileges from a user-defined role"},
	{Name: "grantRolesToRole", Run: grantRolesToRole, Needs: auth.Authenticated, Help: "make a user-defined role inherit roles"},
	{Name: "revokeRolesFromRole", Run: revokeRolesFromRole, Needs: auth.Authenticated, Help: "remove inherited roles from a user-defined role"},
	{Name: "rolesInfo", Run: rolesInfo, Needs: auth.Authenticated, Help: "roles, their inherited roles and privileges"},

	{Name: "explain", Run: explain, Needs: auth.Authenticated, Help: "the plan of find, count, aggregate, distinct, update, delete or findAndModify"},
}

// byName indexes table by every name and alias. It is filled in init
// because listCommands, which the table holds, reads it.
var byName map[string]*Command

func init() {
	byName = make(map[string]*Command)
	for _, c := range table {
		byName[c.Name] = c
		for _, a := range c.Aliases {
			byName[a] = c
		}
	}
	dispatch.Register(byName)
}
