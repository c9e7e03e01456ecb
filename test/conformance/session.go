//lint:file-ignore SA1019 the unified format asserts session state (pinned, transaction state, dirty) that only the driver's internal session package holds, as the driver's own unified runner reads it

package conformance

// Session entities and their operations (startTransaction, commitTransaction,
// abortTransaction, withTransaction, endSession, getSnapshotTime).
//
// The unified format asserts client-side session state the Go driver keeps
// private (assertSessionPinned, assertSessionTransactionState,
// assertSessionDirty): it is read from mongo.Session's unexported
// clientSession field by reflection, as the driver's own unified runner does.
// A session's lsid is captured when it is created, since $$sessionLsid must
// still name it after endSession returned the server session to the pool.

import (
	"context"
	"fmt"
	"reflect"
	"unsafe"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/session"
)

type sessionEntity struct {
	s      *mongo.Session
	client *clientEntity
	lsid   bson.Raw
	ended  bool
}

func (se *sessionEntity) end(ctx context.Context) {
	if !se.ended {
		se.ended = true
		se.s.EndSession(ctx)
	}
}

// driverSession is the Go driver's client-side session state.
func driverSession(s *mongo.Session) *session.Client {
	f := reflect.ValueOf(s).Elem().FieldByName("clientSession")
	return (*session.Client)(unsafe.Pointer(f.Pointer()))
}

// sessionOps is filled by init: withTransaction runs operations itself.
var sessionOps map[string]opFunc

func init() {
	sessionOps = map[string]opFunc{
		"startTransaction":  startTransaction,
		"commitTransaction": commitTransaction,
		"abortTransaction":  abortTransaction,
		"withTransaction":   withTransaction,
		"endSession":        endSession,
		"getSnapshotTime":   getSnapshotTime,
	}
}

func (em *entityMap) createSession(ctx context.Context, id string, a *args) error {
	c, err := em.client(a.str("client"))
	if err != nil {
		return err
	}
	opts := options.Session()
	if o, ok := a.doc("sessionOptions"); ok {
		so := newArgs(o)
		if so.has("causalConsistency") {
			opts.SetCausalConsistency(so.bool("causalConsistency"))
		}
		if so.has("snapshot") {
			opts.SetSnapshot(so.bool("snapshot"))
		}
		if v := so.raw("snapshotTime"); !isMissing(v) {
			if name, ok := v.StringValueOK(); ok {
				// The name of a saved entity (getSnapshotTime's result).
				saved, err := em.bsonEntity(name)
				if err != nil {
					return fmt.Errorf("snapshotTime: %w", err)
				}
				v = saved
			}
			t, i, ok := v.TimestampOK()
			if !ok {
				return fmt.Errorf("snapshotTime: want a timestamp, got %s", v.Type)
			}
			opts.SetSnapshotTime(bson.Timestamp{T: t, I: i})
		}
		if d, ok := so.doc("defaultTransactionOptions"); ok {
			to, err := transactionOptions(newArgs(d))
			if err != nil {
				return err
			}
			opts.SetDefaultTransactionOptions(to)
		}
		if err := so.done(); err != nil {
			return skipf("session option: %v", err)
		}
	}
	if err := a.done(); err != nil {
		return err
	}
	s, err := c.client.StartSession(opts)
	if err != nil {
		return err
	}
	if err := em.add(id, "session"); err != nil {
		s.EndSession(ctx)
		return err
	}
	em.sessions[id] = &sessionEntity{s: s, client: c, lsid: cloneRaw(s.ID())}
	return nil
}

// transactionOptions reads readConcern, writeConcern and readPreference;
// the caller checks that nothing else was given.
func transactionOptions(a *args) (*options.TransactionOptionsBuilder, error) {
	to := options.Transaction()
	if d, ok := a.doc("readConcern"); ok {
		to.SetReadConcern(&readconcern.ReadConcern{Level: newArgs(d).str("level")})
	}
	if d, ok := a.doc("writeConcern"); ok {
		wc, err := parseWriteConcern(d)
		if err != nil {
			return nil, err
		}
		to.SetWriteConcern(wc)
	}
	if d, ok := a.doc("readPreference"); ok {
		rp, err := parseReadPref(d)
		if err != nil {
			return nil, err
		}
		to.SetReadPreference(rp)
	}
	if a.has("maxCommitTimeMS") {
		return nil, skipf("maxCommitTimeMS (the Go driver v2 has no per-transaction maxCommitTime)")
	}
	return to, nil
}

func startTransaction(_ context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	se, err := em.session(obj)
	if err != nil {
		return opResult{}, err
	}
	to, err := transactionOptions(a)
	if err != nil {
		return opResult{}, err
	}
	return opResult{err: se.s.StartTransaction(to)}, nil
}

func commitTransaction(ctx context.Context, em *entityMap, obj string, _ *args) (opResult, error) {
	se, err := em.session(obj)
	if err != nil {
		return opResult{}, err
	}
	return opResult{err: se.s.CommitTransaction(ctx)}, nil
}

func abortTransaction(ctx context.Context, em *entityMap, obj string, _ *args) (opResult, error) {
	se, err := em.session(obj)
	if err != nil {
		return opResult{}, err
	}
	return opResult{err: se.s.AbortTransaction(ctx)}, nil
}

func endSession(ctx context.Context, em *entityMap, obj string, _ *args) (opResult, error) {
	se, err := em.session(obj)
	if err != nil {
		return opResult{}, err
	}
	se.end(ctx)
	return opResult{}, nil
}

func getSnapshotTime(_ context.Context, em *entityMap, obj string, _ *args) (opResult, error) {
	se, err := em.session(obj)
	if err != nil {
		return opResult{}, err
	}
	ts := se.s.SnapshotTime()
	return opResult{value: mustValue(ts)}, nil
}

// withTransaction runs the callback's operations inside the driver's
// convenient transaction API. As in the driver's own runner, the first
// operation error (expected or not) is the callback's error, so the driver
// retries or aborts on it; a failed expectation stops the callback and fails
// the test.
func withTransaction(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	se, err := em.session(obj)
	if err != nil {
		return opResult{}, err
	}
	var ops []operation
	v := a.raw("callback")
	arr, ok := v.ArrayOK()
	if !ok {
		return opResult{}, fmt.Errorf("withTransaction: callback must be an array")
	}
	vals, _ := arr.Values()
	for _, e := range vals {
		var op operation
		if err := bson.Unmarshal(e.Document(), &op); err != nil {
			return opResult{}, fmt.Errorf("withTransaction callback: %w", err)
		}
		ops = append(ops, op)
	}
	to, err := transactionOptions(a)
	if err != nil {
		return opResult{}, err
	}
	m := matcher{entities: em}
	var runnerErr error
	_, txErr := se.s.WithTransaction(ctx, func(ctx context.Context) (any, error) {
		var cbErr error
		for i, op := range ops {
			res, err := runOperation(ctx, em, op)
			if err == nil {
				err = checkOperation(em, m, op, res, em.notes)
			}
			if err != nil {
				if _, ok := skipReason(err); ok {
					runnerErr = err
				} else {
					runnerErr = fmt.Errorf("callback operation %d (%s on %s): %w", i, op.Name, op.Object, err)
				}
				return nil, nil
			}
			if cbErr == nil {
				cbErr = res.err
			}
		}
		return nil, cbErr
	}, to)
	if runnerErr != nil {
		return opResult{}, runnerErr
	}
	return opResult{err: txErr}, nil
}

// Test runner operations on sessions and commands.

func sessionArg(em *entityMap, a *args) (*sessionEntity, error) {
	return em.session(a.str("session"))
}

func assertSessionPinned(want bool) opFunc {
	return func(_ context.Context, em *entityMap, _ string, a *args) (opResult, error) {
		se, err := sessionArg(em, a)
		if err != nil {
			return opResult{}, err
		}
		if pinned := driverSession(se.s).PinnedServerAddr != nil; pinned != want {
			return opResult{}, fmt.Errorf("session pinned: %v, want %v", pinned, want)
		}
		return opResult{}, nil
	}
}

var transactionStates = map[string]session.TransactionState{
	"none": session.None, "starting": session.Starting, "in_progress": session.InProgress,
	"committed": session.Committed, "aborted": session.Aborted,
}

func assertSessionTransactionState(_ context.Context, em *entityMap, _ string, a *args) (opResult, error) {
	se, err := sessionArg(em, a)
	if err != nil {
		return opResult{}, err
	}
	name := a.str("state")
	want, ok := transactionStates[name]
	if !ok {
		return opResult{}, fmt.Errorf("unknown transaction state %q", name)
	}
	if got := driverSession(se.s).TransactionState; got != want {
		return opResult{}, fmt.Errorf("session transaction state %s, want %s", got, name)
	}
	return opResult{}, nil
}

func assertSessionDirty(want bool) opFunc {
	return func(_ context.Context, em *entityMap, _ string, a *args) (opResult, error) {
		se, err := sessionArg(em, a)
		if err != nil {
			return opResult{}, err
		}
		cs := driverSession(se.s)
		dirty := cs.Server != nil && cs.Server.Dirty
		if dirty != want {
			return opResult{}, fmt.Errorf("session dirty: %v, want %v", dirty, want)
		}
		return opResult{}, nil
	}
}

// assertLsidOnLastTwoCommands compares the lsid of the client's last two
// commandStartedEvents.
func assertLsidOnLastTwoCommands(same bool) opFunc {
	return func(_ context.Context, em *entityMap, _ string, a *args) (opResult, error) {
		c, err := em.client(a.str("client"))
		if err != nil {
			return opResult{}, err
		}
		var lsids []bson.RawValue
		for _, e := range c.observed() {
			if e.kind == "commandStartedEvent" {
				lsids = append(lsids, e.doc.Lookup("lsid"))
			}
		}
		if len(lsids) < 2 {
			return opResult{}, fmt.Errorf("%d commandStartedEvents observed, need 2", len(lsids))
		}
		x, y := lsids[len(lsids)-2], lsids[len(lsids)-1]
		if isMissing(x) || isMissing(y) {
			return opResult{}, fmt.Errorf("a command without an lsid: %s, %s", show(x), show(y))
		}
		if x.Equal(y) != same {
			return opResult{}, fmt.Errorf("lsids %s and %s: same is %v, want %v", x, y, !same, same)
		}
		return opResult{}, nil
	}
}
