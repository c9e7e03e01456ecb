package dispatch

import (
	"context"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/concern"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/internal/session"
)

// Conn describes the client connection a command arrived on.
type Conn struct {
	ID         int64
	Remote     string
	Local      string
	ClientMeta bson.Doc // hello's "client" document from the handshake
	// Compressors the connection negotiated in hello.
	Compressors []string
	// OfferedCompressors is filled by the server with what it supports.
	OfferedCompressors []string
	// Auth is the connection's authentication state.
	Auth auth.Session
}

// Ctx is one command invocation.
type Ctx struct {
	context.Context
	Env  *Env
	Conn *Conn
	// Name is the command name as the client spelled it.
	Name string
	// DB is the request's $db.
	DB   string
	Body bson.Doc
	// Seqs holds OP_MSG kind-1 document sequences by identifier.
	Seqs map[string][]bson.Doc
	// Reply receives the reply's fields; "ok" is appended by Dispatch.
	Reply *bson.Builder
	// Unacknowledged is set for w:0 writes (moreToCome): no reply is sent.
	Unacknowledged bool
	// Explain is set when the command runs inside explain: it describes
	// its plan (and, with executionStats, runs it) instead of answering.
	Explain *Explain
	// Cmd is the command being run (set by Dispatch).
	Cmd *Command
	// CloseConnection is set by a failCommand fail point with
	// closeConnection: the server drops the connection instead of replying.
	CloseConnection bool
	// labelled is set when a failCommand's errorLabels gave the error its
	// labels: fail adds none of its own.
	labelled bool
	// Snap is the command's read snapshot, opened by its first read and
	// ended by Dispatch (storage.go).
	Snap exec.Snapshot
	// Sess is the request's session (nil: none), Stmt the retryable
	// statement being written (retry.go).
	Sess *SessionInfo
	Stmt *repl.Stmt
	// Txn is the session's open transaction the command is a statement
	// of (nil: none; session.go).
	Txn *session.Slot
	// txnStart is the transaction the command starts, begun by openTxn
	// (nil: none).
	txnStart *session.Start
	// Replica-set mode (replset_reply.go): the parsed write concern and
	// the error a one-member set reports after the write (nil: met), the
	// stamp of the write transaction in progress and of the last one
	// committed, and whether the read is linearizable.
	WC               concern.Write
	WCPending        *mongoerr.Error
	TxTS, LastOpTime repl.Timestamp
	// SnapAt is a snapshot read's cluster time (replset_reply.go; 0: not
	// one), reported as atClusterTime.
	SnapAt       repl.Timestamp
	linearizable bool
	// On a set of several members: the rollback epoch the command
	// started in, and whether it reads with readConcern "majority"
	// (replset.go).
	raftEpoch    uint64
	majorityRead bool
	// wcTimeout: the write concern's wait ran out of wtimeout
	// (writeConcernError.errInfo.wtimeout).
	wcTimeout bool
	// applying is set on a command a member runs to apply a DDL entry of
	// the primary's (replset.go): not refused as a write on a
	// secondary, and it waits for no write concern.
	applying bool
}

// Handler runs a command.
type Handler func(c *Ctx) error

// Command describes one command.
type Command struct {
	Name string
	// Aliases are other names that reach the same handler.
	Aliases []string
	Run     Handler
	Help    string
	// AdminOnly commands must be run against the admin database.
	AdminOnly bool
	// Write commands modify data (counted, refused on read-only servers).
	Write bool
	// Needs is what access control requires (authz.go): the privilege
	// actions on the request's database (cluster actions on the server),
	// auth.Open or auth.Authenticated. Zero means root only, so a command
	// added without a declaration fails closed.
	Needs auth.Action
	// TestOnly commands exist only with enableTestCommands.
	TestOnly bool
}

// Explain carries explain's verbosity into the explained command.
type Explain struct {
	Verbosity string // queryPlanner, executionStats or allPlansExecution
}
