package dispatch

import (
	"crypto/tls"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/changestream"
	"github.com/cairndb/cairn/internal/concern"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/failpoint"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/internal/opctx"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/internal/replset"
	"github.com/cairndb/cairn/internal/serverstatus"
	"github.com/cairndb/cairn/internal/session"
)

// State is the commands' mutable state that is neither configuration,
// counters nor another layer's (opctx, exec): it lives in the server's
// Env, so that two servers in one process (the tests start many) never
// share it, and the package has no mutable variables.
type State struct {
	// LogLevel is mongod's logLevel (0 = informational, 1+ = debug), as
	// setParameter set it.
	LogLevel atomic.Int32
	// The tests' hooks: FindHook runs between a find's planning and its
	// first batch, updateHook before each document of an update,
	// indexBuildHook as a build enters each phase; noExpress turns the
	// _id express path off (tests compare both paths).
	FindHook       func(c *Ctx)
	UpdateHook     func(c *Ctx)
	IndexBuildHook func(index.Phase)
	NoExpress      bool
	// TxnLifetimeSecs is transactionLifetimeLimitSeconds (0: the
	// default).
	TxnLifetimeSecs atomic.Int64
	// TTLSleepSecs is ttlMonitorSleepSecs as setParameter set it (0:
	// Env.TTLMonitorSleep, the startup value).
	TTLSleepSecs atomic.Int64
	// RS is the replica-set member's state: its Raft node and the
	// snapshots retained for snapshot reads (replset.go).
	RS replset.State
}

// TTLInterval is ttlMonitorSleepSecs: how long the TTL monitor sleeps
// between passes (setParameter's value, else the startup one, else 60 s).
func (e *Env) TTLInterval() time.Duration {
	if s := e.State.TTLSleepSecs.Load(); s > 0 {
		return time.Duration(s) * time.Second
	}
	if e.TTLMonitorSleep > 0 {
		return e.TTLMonitorSleep
	}
	return 60 * time.Second
}

// Env is the server state commands share. It is created once per server.
type Env struct {
	// Engine is what the executors share: the store, the spill
	// directory and the column cache.
	exec.Engine
	Cursors *exec.Cursors
	Log     *slog.Logger
	Started time.Time
	// Argv and Parsed are what getCmdLineOpts reports.
	Argv   []string
	Parsed bson.Doc
	// StartupWarnings are returned by getLog("startupWarnings").
	StartupWarnings []string
	Stats           Stats
	// MaxConns is the connection limit (serverStatus connections.available;
	// 0 means mongod's default, 1,000,000).
	MaxConns int
	// CommitInterval is the journal commit interval (for serverStatus).
	CommitInterval time.Duration
	// LogLevel is the log's level (setParameter logLevel); may be nil.
	LogLevel *slog.LevelVar
	// RotateLog rotates the log file (logRotate); may be nil.
	RotateLog func() error
	// RecentLog returns the most recent log lines and how many were
	// written in all (getLog global); may be nil.
	RecentLog func() ([]string, int)
	// ObserveLatency, if set, receives every command's duration by class
	// (0 reads, 1 writes, 2 other commands); the metrics endpoint sets it.
	ObserveLatency func(class int, d time.Duration)
	// Ops lists the operations in progress (currentOp, killOp).
	Ops opctx.Table
	// Top accumulates per-namespace usage (top).
	Top opctx.Top
	// RW holds the default read and write concerns (internal/command/rwconcern.go).
	RW concern.Defaults
	// MemberTLS is the TLS configuration of the connections to the other
	// members of the set (nil: plain; server.TLSOptions.MemberConfig).
	MemberTLS *tls.Config
	// Auth is access control: users, roles and whether commands are
	// checked (nil: no checks, no user commands).
	Auth *auth.Manager
	// SlowMS is the slow-operation log's threshold in milliseconds
	// (mongod's slowms; the profile command changes it). Commands that run
	// at least this long are logged; the server sets it, 0 logs every one.
	SlowMS atomic.Int64
	// Collations tells whether collections with default collations exist
	// (exec.DefaultCollations).
	Collations exec.DefaultCollations
	// Profiler holds the databases' profiling levels.
	Profiler opctx.Profiler
	// State is the commands' other mutable state (env.go).
	State State
	// Repl is the replica-set state in replica-set mode; nil on a
	// standalone server.
	Repl *repl.Set
	// ChangeStreams is what the change streams on Oplog share (a cache of
	// decoded entries and built events, one oplog watch); nil: each
	// stream decodes for itself and watches the oplog per getMore.
	ChangeStreams *changestream.Hub
	// Sessions are the logical sessions (nil: lsids are not tracked).
	Sessions *session.Registry
	// PreAuthMaxMessageSize is the largest message a connection may send
	// before it authenticates when access control is on (mongod's
	// preAuthMaximumMessageSizeBytes; 0 means the default, 16 KiB).
	PreAuthMaxMessageSize atomic.Int64
	// TestCommands is enableTestCommands: test-only commands
	// (configureFailPoint) exist only when it is set.
	TestCommands bool
	// FailPoints are the fail points configureFailPoint sets (internal/command/failpoint.go);
	// nil: none.
	FailPoints *failpoint.Registry
	// TTLMonitorSleep is the TTL monitor's interval (getParameter
	// ttlMonitorSleepSecs; 0: the default, 60 s).
	TTLMonitorSleep time.Duration
	// NoScripting is --noscripting (security.javascriptEnabled: false):
	// $where, $function, $accumulator and mapReduce are refused (internal/command/scripts.go).
	NoScripting bool
}

// DefaultPreAuthMaxMessageSize is preAuthMaximumMessageSizeBytes' default,
// as mongod's.
const DefaultPreAuthMaxMessageSize = 16 << 10

// PreAuthMaxMessageSizeBytes is the effective pre-authentication message
// size limit.
func (e *Env) PreAuthMaxMessageSizeBytes() int {
	if n := e.PreAuthMaxMessageSize.Load(); n > 0 {
		return int(n)
	}
	return DefaultPreAuthMaxMessageSize
}

// Stats are the server-wide counters serverStatus reports
// (internal/serverstatus).
type Stats = serverstatus.Stats
