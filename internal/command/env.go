package command

import (
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/internal/replset"
)

// envState is the commands' mutable state that is neither configuration,
// counters nor another layer's (opctx, exec): it lives in the server's
// Env, so that two servers in one process (the tests start many) never
// share it, and the package has no mutable variables.
type envState struct {
	// logLevel is mongod's logLevel (0 = informational, 1+ = debug), as
	// setParameter set it.
	logLevel atomic.Int32
	// The tests' hooks: findHook runs between a find's planning and its
	// first batch, updateHook before each document of an update,
	// indexBuildHook as a build enters each phase; noExpress turns the
	// _id express path off (tests compare both paths).
	findHook       func(c *Ctx)
	updateHook     func(c *Ctx)
	indexBuildHook func(index.Phase)
	noExpress      bool
	// txnLifetimeSecs is transactionLifetimeLimitSeconds (0: the
	// default).
	txnLifetimeSecs atomic.Int64
	// ttlSleepSecs is ttlMonitorSleepSecs as setParameter set it (0:
	// Env.TTLMonitorSleep, the startup value).
	ttlSleepSecs atomic.Int64
	// rs is the replica-set member's state: its Raft node and the
	// snapshots retained for snapshot reads (replset_multi.go).
	rs replset.State
}

// TTLInterval is ttlMonitorSleepSecs: how long the TTL monitor sleeps
// between passes (setParameter's value, else the startup one, else 60 s).
func (e *Env) TTLInterval() time.Duration {
	if s := e.state.ttlSleepSecs.Load(); s > 0 {
		return time.Duration(s) * time.Second
	}
	if e.TTLMonitorSleep > 0 {
		return e.TTLMonitorSleep
	}
	return 60 * time.Second
}
