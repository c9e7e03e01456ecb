package command

// table lists every command Cairn answers. A name that is not here gets
// CommandNotFound (59), as MongoDB answers unknown commands.
var table = []*Command{
	{Name: "hello", Run: hello, Help: "the handshake: server role and limits"},
	{Name: "isMaster", Aliases: []string{"ismaster"}, Run: hello, Help: "legacy name of hello"},
	{Name: "ping", Run: ping, Help: "round trip"},
	{Name: "buildInfo", Aliases: []string{"buildinfo"}, Run: buildInfo, Help: "version and build information"},
	{Name: "hostInfo", Run: hostInfo, Help: "the host's hardware and OS"},
	{Name: "whatsmyuri", Run: whatsmyuri, Help: "the client's address as the server sees it"},
	{Name: "getParameter", Run: getParameter, AdminOnly: true, Help: "server parameters"},
	{Name: "setParameter", Run: setParameter, AdminOnly: true, Help: "change server parameters (logLevel)"},
	{Name: "logRotate", Run: logRotate, AdminOnly: true, Help: "rotate the log file"},
	{Name: "getCmdLineOpts", Run: getCmdLineOpts, AdminOnly: true, Help: "command line and parsed options"},
	{Name: "connectionStatus", Run: connectionStatus, Help: "authenticated users and roles"},
	{Name: "listCommands", Run: listCommands, Help: "this list"},
	{Name: "serverStatus", Run: serverStatus, Help: "server counters and engine statistics"},
	{Name: "getLog", Run: getLog, AdminOnly: true, Help: "recent log lines"},
	{Name: "endSessions", Run: endSessions, Help: "end sessions and close their cursors"},
	{Name: "killSessions", Run: killSessionCursors, Help: "kill sessions' cursors"},
	{Name: "killAllSessions", Run: killAllSessions, Help: "kill every session's cursors"},
	{Name: "dropConnections", Run: dropConnections, AdminOnly: true, Help: "drop outgoing connection pools (a standalone has none)"},

	{Name: "create", Run: create, Write: true, Help: "create a collection"},
	{Name: "drop", Run: drop, Write: true, Help: "drop a collection"},
	{Name: "dropDatabase", Run: dropDatabase, Write: true, Help: "drop a database"},
	{Name: "listDatabases", Run: listDatabases, AdminOnly: true, Help: "databases with sizes"},
	{Name: "listCollections", Run: listCollections, Help: "collections of a database"},
	{Name: "listIndexes", Run: listIndexes, Help: "indexes of a collection"},
	{Name: "createIndexes", Run: createIndexes, Write: true, Help: "build indexes (scan, sort, bulk load)"},
	{Name: "dropIndexes", Aliases: []string{"deleteIndexes"}, Run: dropIndexes, Write: true, Help: "drop indexes"},
	{Name: "renameCollection", Run: renameCollection, AdminOnly: true, Write: true, Help: "rename a collection"},
	{Name: "collStats", Run: collStats, Help: "collection statistics"},
	{Name: "dbStats", Run: dbStats, Help: "database statistics"},
	{Name: "collMod", Run: collMod, Write: true, Help: "modify collection options"},
	{Name: "validate", Run: validate, Help: "check a collection against its indexes (full: also the storage engine)"},
	{Name: "compact", Run: compact, Write: true, Help: "return free space to the file system"},
	{Name: "dbHash", Aliases: []string{"dbhash"}, Run: dbHash, Help: "hashes of collections' contents"},
	{Name: "top", Run: top, AdminOnly: true, Help: "time and count of operations per namespace"},
	{Name: "currentOp", Run: currentOp, AdminOnly: true, Help: "operations in progress"},
	{Name: "killOp", Run: killOp, AdminOnly: true, Help: "interrupt an operation"},
	{Name: "getDefaultRWConcern", Run: getDefaultRWConcern, AdminOnly: true, Help: "default read and write concerns"},
	{Name: "fsync", Run: fsyncCmd, AdminOnly: true, Help: "make every write durable and checkpoint"},

	{Name: "insert", Run: insert, Write: true, Help: "insert documents"},
	{Name: "find", Run: find, Help: "query documents"},
	{Name: "getMore", Run: getMore, Help: "next batch of a cursor"},
	{Name: "killCursors", Run: killCursors, Help: "close cursors"},
	{Name: "update", Run: update, Write: true, Help: "update documents"},
	{Name: "delete", Run: deleteCmd, Write: true, Help: "delete documents"},
	{Name: "findAndModify", Aliases: []string{"findandmodify"}, Run: findAndModify, Write: true, Help: "update or remove one document and return it"},
	{Name: "count", Run: count, Help: "count matching documents"},
	{Name: "distinct", Run: distinct, Help: "distinct values of a field"},
	{Name: "aggregate", Run: aggregate, Help: "run an aggregation pipeline"},
	{Name: "explain", Run: explain, Help: "the plan of find, count, aggregate, distinct, update, delete or findAndModify"},
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
}
