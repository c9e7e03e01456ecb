package replset

// Waiting for the concerns: a readConcern's afterClusterTime and
// atClusterTime (WaitRead), a linearizable or majority read's
// confirmation through Raft (BeginRead, FinishRead), and a write concern
// on a set of several members (WaitWrite).

import (
	"context"
	"errors"
	"time"

	"github.com/cairndb/cairn/internal/concern"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/raftrepl"
	"github.com/cairndb/cairn/internal/repl"
	"go.etcd.io/raft/v3"
)

// Noop commits an empty write transaction with durability d, stamped as
// any write (the command's Ctx.WriteTx): the no-op a primary writes so that a
// wait for a cluster time ends.
type Noop func(d exec.Durability) error

// WaitRead waits for what the parsed readConcern r asks before the read:
// every write stamped up to afterClusterTime (afterOpTime) or, for a
// snapshot read (snapshotRead: level snapshot outside a transaction), up
// to atClusterTime. It returns whether the command opens a snapshot read
// and at which cluster time (0: the current data).
func (m Member) WaitRead(ctx context.Context, r concern.Read, snapshotRead bool, noop Noop) (open bool, at repl.Timestamp, err error) {
	set := m.Set
	if r.HasAt && snapshotRead {
		now := set.Clock.Now()
		if r.At > now {
			return false, 0, mongoerr.New(mongoerr.InvalidOptions, "readConcern atClusterTime value must not be greater than the current clusterTime. Requested clusterTime: %s; current clusterTime: %s", r.At, now)
		}
		if err := m.waitApplied(ctx, r.At, noop); err != nil {
			return false, 0, err
		}
		return true, r.At, nil
	}
	after := r.After
	if after == 0 {
		return snapshotRead, 0, nil
	}
	if r.Linearizable && r.AfterOpTime {
		return false, 0, mongoerr.New(mongoerr.FailedToParse, "afterOpTime not compatible with linearizable read concern")
	}
	now := set.Clock.Now()
	if now == 0 {
		return false, 0, mongoerr.New(mongoerr.NotPrimaryOrSecondary, "Current clusterTime is uninitialized, cannot service the requested clusterTime. Requested clusterTime: %s; current clusterTime: %s", after, now)
	}
	if after > now && !r.AfterOpTime {
		return false, 0, mongoerr.New(mongoerr.InvalidOptions, "readConcern afterClusterTime value must not be greater than the current clusterTime. Requested clusterTime: %s; current clusterTime: %s", after, now)
	}
	if after > now {
		// An optime this member never wrote cannot be reached by a no-op.
		return false, 0, mongoerr.New(mongoerr.InvalidOptions, "readConcern afterOpTime %s is later than this member's last optime %s", after, now)
	}
	if err := m.waitApplied(ctx, after, noop); err != nil {
		return false, 0, err
	}
	return snapshotRead, 0, nil
}

// waitApplied waits until every write stamped up to ts is committed.
func (m Member) waitApplied(ctx context.Context, ts repl.Timestamp, noop Noop) error {
	set := m.Set
	for {
		done, next := set.AppliedAt(ts)
		if done {
			return nil
		}
		if set.IsWritablePrimary() {
			// The no-op write: the writer lock waits for any write holding
			// an earlier stamp; the empty transaction's own stamp is later
			// than ts (the clock has passed it) and marks it applied.
			if err := noop(exec.Lazy); err != nil {
				return err
			}
			continue
		}
		_, topo := set.Topology()
		select {
		case <-next:
		case <-topo:
		case <-ctx.Done():
			return mongoerr.FromContext(ctx.Err())
		}
	}
}

// FinishRead makes a read linearizable once it has read: the journal
// holds every write acknowledged before the read (mongod writes a
// majority no-op). On a set of several members, a linearizable or
// majority read waits instead until the commit point covers everything
// the read could have seen (epoch: BeginRead's).
func (m Member) FinishRead(ctx context.Context, linearizable bool, epoch uint64, noop Noop) error {
	if n := m.Raft(); n != nil {
		if err := n.ReadCommitted(ctx, epoch); err != nil {
			return readErr(err)
		}
		return nil
	}
	if !linearizable {
		return nil
	}
	return noop(exec.Sync)
}

// readIndexWait bounds a linearizable read's leadership confirmation.
const readIndexWait = 5 * time.Second

// BeginRead returns the rollback epoch the command starts in and, for a
// linearizable read, confirms the leadership through Raft's ReadIndex
// before the read (internal/raftrepl/reads.go). A member of no set of
// several members returns 0.
func (m Member) BeginRead(ctx context.Context, linearizable bool) (uint64, error) {
	n := m.Raft()
	if n == nil {
		return 0, nil
	}
	epoch := n.Epoch()
	if !linearizable {
		return epoch, nil
	}
	// Raft drops a ReadIndex request of a leader that lost its
	// leadership: the wait is bounded.
	rctx, cancel := context.WithTimeout(ctx, readIndexWait)
	defer cancel()
	if err := n.ReadIndex(rctx); err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			err = raftrepl.ErrNotPrimary
		}
		return epoch, readErr(err)
	}
	return epoch, nil
}

func readErr(err error) error {
	switch {
	case errors.Is(err, raftrepl.ErrRolledBack):
		return mongoerr.New(mongoerr.InterruptedDueToReplStateChange, "operation was interrupted because the member rolled back writes while it read")
	case errors.Is(err, raftrepl.ErrNotPrimary), errors.Is(err, raft.ErrProposalDropped):
		return mongoerr.New(mongoerr.PrimarySteppedDown, "the member stopped being primary before the read was confirmed")
	}
	return mongoerr.FromContext(err)
}

// WaitWrite waits, on a member of a set of several members, until the
// command's writes meet its write concern wc: w: "majority" once Raft
// committed the entry carrying them, w: N once N members hold it. ts is
// the optime of the command's last write (0: none; then what the client
// may have seen), epoch the rollback epoch the command started in. It
// returns the write concern error to report (nil: met) and whether the
// wait ran out of wtimeout (writeConcernError.errInfo.wtimeout).
func (m Member) WaitWrite(ctx context.Context, wc concern.Write, ts repl.Timestamp, epoch uint64) (*mongoerr.Error, bool) {
	n := m.Raft()
	if n == nil || !wc.NeedsWait() {
		return nil, false
	}
	// Wait for the command's last oplog entry or, without a write, for
	// what the client may have seen: at most the last entry this member
	// appended. A write transaction without an oplog entry (a drop of a
	// missing collection, a write to an unreplicated namespace) is
	// stamped with a ts of the member's clock that no entry carries:
	// the commit point would pass it only with the next write.
	if ts == 0 {
		ts, _ = m.Set.Applied()
	}
	if m.Engine.Oplog != nil {
		if last := m.Engine.Oplog.LastAppended(); ts > last {
			ts = last
		}
	}
	if wc.WTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(wc.WTimeout)*time.Millisecond)
		defer cancel()
	}
	var err error
	if wc.Majority || wc.Mode != "" {
		err = n.WaitCommitted(ctx, ts, epoch)
	} else {
		err = n.WaitReplicated(ctx, ts, int(wc.W))
	}
	switch {
	case err == nil:
		return nil, false
	case errors.Is(err, context.DeadlineExceeded) && wc.WTimeout > 0:
		return mongoerr.New(mongoerr.WriteConcernTimeout, "waiting for replication timed out"), true
	case errors.Is(err, raftrepl.ErrNotPrimary):
		return mongoerr.New(mongoerr.PrimarySteppedDown, "Primary stepped down while waiting for replication"), false
	default:
		return exec.AsMongoErr(mongoerr.FromContext(err)), false
	}
}
