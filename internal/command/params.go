package command

import (
	"log/slog"
	"time"

	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/wire"
)

// MinPreAuthMaxMessageSize is the smallest preAuthMaximumMessageSizeBytes
// accepted: below it a driver's first hello would not fit.
const MinPreAuthMaxMessageSize = 4096

// setParameter changes server parameters at run time: every parameter
// getParameter lists that mongod sets at run time (logLevel,
// minSnapshotHistoryWindowInSeconds, ttlMonitorSleepSecs,
// transactionLifetimeLimitSeconds, cursorTimeoutMillis,
// internalQueryMaxBlockingSortMemoryUsageBytes,
// preAuthMaximumMessageSizeBytes) and Cairn's authFailuresPerMinute and
// authFailureBurst; the startup-only ones it lists answer BadValue.
// It answers each parameter's previous value as "was", as mongod does.
func setParameter(c *Ctx) error {
	set := 0
	it := c.Body.Iter()
	it.Next()
	for it.Next() {
		e := it.Element()
		if genericFields[e.Key] {
			continue
		}
		switch e.Key {
		case "logLevel":
			n, ok := e.Value.AsInt64()
			if !ok || n < 0 || n > 5 {
				return mongoerr.New(mongoerr.BadValue, "logLevel must be a number from 0 to 5")
			}
			c.Reply.AppendInt32("was", c.Env.state.logLevel.Load())
			c.Env.state.logLevel.Store(int32(n))
			if c.Env.LogLevel != nil {
				if n > 0 {
					c.Env.LogLevel.Set(slog.LevelDebug)
				} else {
					c.Env.LogLevel.Set(slog.LevelInfo)
				}
			}
			set++
		case "preAuthMaximumMessageSizeBytes":
			n, ok := e.Value.AsInt64()
			if !ok || n < MinPreAuthMaxMessageSize || n > wire.MaxMessageSize {
				return mongoerr.New(mongoerr.BadValue, "preAuthMaximumMessageSizeBytes must be a number from %d to %d", MinPreAuthMaxMessageSize, wire.MaxMessageSize)
			}
			c.Reply.AppendInt64("was", int64(c.Env.PreAuthMaxMessageSizeBytes()))
			c.Env.PreAuthMaxMessageSize.Store(n)
			set++
		case "authFailuresPerMinute", "authFailureBurst":
			if c.Env.Auth == nil {
				return mongoerr.New(mongoerr.InvalidOptions, "unrecognized parameter: %s", e.Key)
			}
			n, ok := e.Value.AsInt64()
			perMinute, burst := c.Env.Auth.FailureLimit()
			was := perMinute
			if e.Key == "authFailuresPerMinute" {
				if !ok || n < 0 {
					return mongoerr.New(mongoerr.BadValue, "authFailuresPerMinute must be a number of at least 0 (0: no limit)")
				}
				perMinute = n
			} else {
				if !ok || n < 1 {
					return mongoerr.New(mongoerr.BadValue, "authFailureBurst must be a number of at least 1")
				}
				was, burst = burst, n
			}
			c.Reply.AppendInt64("was", was)
			c.Env.Auth.SetFailureLimit(perMinute, burst)
			set++
		case "minSnapshotHistoryWindowInSeconds":
			n, ok := e.Value.AsInt64()
			if !ok || n < 0 || n > 1<<31-1 {
				return mongoerr.New(mongoerr.BadValue, "minSnapshotHistoryWindowInSeconds must be a number of at least 0")
			}
			c.Reply.AppendInt32("was", int32(c.Env.snapWindow()/time.Second))
			c.Env.state.snapWindowSecs.Store(n + 1)
			set++
		case "ttlMonitorSleepSecs", "transactionLifetimeLimitSeconds":
			n, ok := e.Value.AsInt64()
			if !ok || n < 1 || n > 1<<31-1 {
				return mongoerr.New(mongoerr.BadValue, "%s must be a number of at least 1", e.Key)
			}
			if e.Key == "ttlMonitorSleepSecs" {
				c.Reply.AppendInt32("was", int32(c.Env.TTLInterval()/time.Second))
				c.Env.state.ttlSleepSecs.Store(n)
			} else {
				c.Reply.AppendInt32("was", int32(c.Env.txnLifetime()/time.Second))
				c.Env.state.txnLifetimeSecs.Store(n)
			}
			set++
		case "cursorTimeoutMillis":
			n, ok := e.Value.AsInt64()
			if !ok || n < 0 {
				return mongoerr.New(mongoerr.BadValue, "cursorTimeoutMillis must be a number of at least 0")
			}
			c.Reply.AppendInt64("was", int64(c.Env.Cursors.Timeout()/time.Millisecond))
			c.Env.Cursors.SetTimeout(time.Duration(n) * time.Millisecond)
			set++
		case "internalQueryMaxBlockingSortMemoryUsageBytes":
			n, ok := e.Value.AsInt64()
			if !ok || n < 1 || n > 1<<31-1 {
				return mongoerr.New(mongoerr.BadValue, "internalQueryMaxBlockingSortMemoryUsageBytes must be a number of at least 1")
			}
			c.Reply.AppendInt32("was", int32(exec.SortMemoryBudget()))
			exec.SetSortMemoryBudget(n)
			set++
		default:
			if _, listed := parameters()[e.Key]; listed || e.Key == "enableTestCommands" {
				// Listed by getParameter but set at startup only, as in mongod.
				return mongoerr.New(mongoerr.BadValue, "not allowed to change [%s] at runtime", e.Key)
			}
			return mongoerr.New(mongoerr.InvalidOptions, "unrecognized parameter: %s", e.Key)
		}
	}
	if set == 0 {
		return mongoerr.New(mongoerr.InvalidOptions, "no option found to set, use help:true to see options ")
	}
	return nil
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
