package command

import (
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/dispatch"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/params"
	"github.com/cairndb/cairn/internal/wire"
)

// The server parameters (internal/params): getParameter lists them,
// setParameter changes those mongod changes at run time (logLevel,
// minSnapshotHistoryWindowInSeconds, ttlMonitorSleepSecs,
// transactionLifetimeLimitSeconds, cursorTimeoutMillis,
// internalQueryMaxBlockingSortMemoryUsageBytes,
// preAuthMaximumMessageSizeBytes) and Cairn's authFailuresPerMinute and
// authFailureBurst; the others are startup-only.

// MinPreAuthMaxMessageSize is the smallest preAuthMaximumMessageSizeBytes
// accepted: below it a driver's first hello would not fit.
const MinPreAuthMaxMessageSize = 4096

// parameters is the registry over the server's state.
func parameters(e *Env) *params.Registry {
	secs := func(d time.Duration) int64 { return int64(d / time.Second) }
	ps := []params.Param{
		params.Fixed("featureCompatibilityVersion", func(b *bson.Builder, key string) {
			b.StartDocument(key)
			b.AppendString("version", "7.0")
			b.End()
		}),
		params.Fixed("authenticationMechanisms", func(b *bson.Builder, key string) {
			b.StartArray(key)
			b.AppendString("0", "SCRAM-SHA-1")
			b.AppendString("1", "SCRAM-SHA-256")
			b.End()
		}),
		params.Fixed("maxBSONDepth", func(b *bson.Builder, key string) { b.AppendInt32(key, bson.MaxDepth) }),
		params.Fixed("enableTestCommands", func(b *bson.Builder, key string) { b.AppendBool(key, e.TestCommands) }),
		params.Int{Name: "internalQueryMaxBlockingSortMemoryUsageBytes", Min: 1, Max: math.MaxInt32,
			Msg:  "internalQueryMaxBlockingSortMemoryUsageBytes must be a number of at least 1",
			Load: func() int64 { return int64(int32(exec.SortMemoryBudget())) }, Store: exec.SetSortMemoryBudget}.Param(),
		params.Int{Name: "logLevel", Min: 0, Max: 5, Msg: "logLevel must be a number from 0 to 5",
			Load: func() int64 { return int64(e.State.LogLevel.Load()) }, Store: func(n int64) { setLogLevel(e, n) }}.Param(),
		params.Int{Name: "minSnapshotHistoryWindowInSeconds", Min: 0, Max: math.MaxInt32,
			Msg:  "minSnapshotHistoryWindowInSeconds must be a number of at least 0",
			Load: func() int64 { return secs(e.State.RS.SnapWindow()) }, Store: func(n int64) { e.State.RS.SnapWindowSecs.Store(n + 1) }}.Param(),
		params.Int{Name: "transactionLifetimeLimitSeconds", Min: 1, Max: math.MaxInt32,
			Msg:  "transactionLifetimeLimitSeconds must be a number of at least 1",
			Load: func() int64 { return secs(e.TxnLifetime()) }, Store: e.State.TxnLifetimeSecs.Store}.Param(),
		params.Int{Name: "ttlMonitorSleepSecs", Min: 1, Max: math.MaxInt32, Msg: "ttlMonitorSleepSecs must be a number of at least 1",
			Load: func() int64 { return secs(e.TTLInterval()) }, Store: e.State.TTLSleepSecs.Store}.Param(),
		params.Int{Name: "cursorTimeoutMillis", Min: 0, Max: math.MaxInt64, Wide: true, Msg: "cursorTimeoutMillis must be a number of at least 0",
			Load:  func() int64 { return int64(e.Cursors.Timeout() / time.Millisecond) },
			Store: func(n int64) { e.Cursors.SetTimeout(time.Duration(n) * time.Millisecond) }}.Param(),
		params.Int{Name: "preAuthMaximumMessageSizeBytes", Min: MinPreAuthMaxMessageSize, Max: wire.MaxMessageSize, Wide: true,
			Msg:  fmt.Sprintf("preAuthMaximumMessageSizeBytes must be a number from %d to %d", MinPreAuthMaxMessageSize, wire.MaxMessageSize),
			Load: func() int64 { return int64(e.PreAuthMaxMessageSizeBytes()) }, Store: e.PreAuthMaxMessageSize.Store}.Param(),
	}
	if m := e.Auth; m != nil {
		perMinute := func() int64 { n, _ := m.FailureLimit(); return n }
		burst := func() int64 { _, n := m.FailureLimit(); return n }
		ps = append(ps,
			params.Int{Name: "authFailuresPerMinute", Min: 0, Max: math.MaxInt64, Wide: true,
				Msg:  "authFailuresPerMinute must be a number of at least 0 (0: no limit)",
				Load: perMinute, Store: func(n int64) { m.SetFailureLimit(n, burst()) }}.Param(),
			params.Int{Name: "authFailureBurst", Min: 1, Max: math.MaxInt64, Wide: true, Msg: "authFailureBurst must be a number of at least 1",
				Load: burst, Store: func(n int64) { m.SetFailureLimit(perMinute(), n) }}.Param())
	}
	return params.NewRegistry(ps...)
}

// setLogLevel is setParameter's logLevel: mongod's level, and the log's
// debug lines on from 1.
func setLogLevel(e *Env, n int64) {
	e.State.LogLevel.Store(int32(n))
	if e.LogLevel != nil {
		if n > 0 {
			e.LogLevel.Set(slog.LevelDebug)
		} else {
			e.LogLevel.Set(slog.LevelInfo)
		}
	}
}

func getParameter(c *Ctx) error {
	return parameters(c.Env).Get(c.Reply, newArgs(c).First(), c.Body, dispatch.IsGenericField)
}

func setParameter(c *Ctx) error {
	return parameters(c.Env).Set(c.Reply, c.Body, dispatch.IsGenericField)
}

// logRotate rotates the log file, as SIGUSR1 does.
func logRotate(c *Ctx) error {
	if c.Env.RotateLog == nil {
		return nil // logging to standard error: nothing to rotate
	}
	if err := c.Env.RotateLog(); err != nil {
		return mongoerr.New(mongoerr.OperationFailed, "log rotation failed: %v", err)
	}
	return nil
}

// testAPICommand is mongod's testVersion2, testVersions1And2,
// testDeprecation and testDeprecationInVersion2: test commands that do
// nothing, for drivers' Stable API tests.
func testAPICommand(c *Ctx) error { return nil }
