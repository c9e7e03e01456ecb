package raftrepl

// Reads at the commit point.
//
// A secondary applies only entries Raft committed, so what it holds is
// committed; a primary holds its own writes before the set commits them
// (rollback.go). A read with readConcern "majority" or "linearizable"
// must return only committed data, so after the read the member waits
// until the commit point covers the last entry the read could have seen
// (ReadCommitted): on a primary, a Raft round trip at most; on a
// secondary, nothing. A rollback that began since the read started fails
// it (the read may have seen writes taken back). A linearizable read also
// confirms, before it reads, that the member is still the leader with a
// majority and has applied everything committed when it asked (Raft's
// ReadIndex, node.go): no write acknowledged before the read began can
// be missing from it.

import (
	"context"
	"errors"

	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
)

// ErrRolledBack: a rollback began while the read ran.
var ErrRolledBack = errors.New("raftrepl: a rollback began during the read")

// ReadCommitted waits, after a read that started in epoch (Epoch), until
// everything the read could have seen is committed: the commit point
// reaches the member's last oplog entry. It fails with ErrRolledBack when
// a rollback began since epoch, ErrNotPrimary when the member stopped
// being primary with the read's data not committed, or ctx's error.
func (n *Node) ReadCommitted(ctx context.Context, epoch uint64) error {
	var last repl.Timestamp
	if err := n.opts.DB.View(func(tx *kv.Tx) error {
		ts, _, _, err := oplog.Last(tx)
		last = ts
		return err
	}); err != nil {
		return err
	}
	return n.waitCommitPoint(ctx, func() (bool, error) {
		if n.epoch != epoch {
			return true, ErrRolledBack
		}
		if !n.writable || n.commitTS >= last {
			// A member that does not take writes holds committed
			// entries only: it took back its own when it stopped.
			return true, nil
		}
		if !n.primary {
			return true, ErrNotPrimary
		}
		return false, nil
	})
}

// waitCommitPoint calls done, with n.mu held, until it reports that the
// wait is over (with its error, nil for success), waiting between calls
// for the commit point's channel (CommitPoint), ctx's end or the node's
// stop (ErrStopped). ReadCommitted and WaitCommitted wait through it.
func (n *Node) waitCommitPoint(ctx context.Context, done func() (bool, error)) error {
	for {
		n.mu.Lock()
		ch := n.commitCh
		over, err := done()
		n.mu.Unlock()
		if over {
			return err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-n.stopc:
			return ErrStopped
		}
	}
}
