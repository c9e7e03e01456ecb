package dispatch

import (
	"fmt"
	"time"

	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// WriteTx runs fn in a write transaction and commits it with the given
// durability; if fn fails (or panics) the transaction is rolled back, so a
// command's statements are applied together or not at all. After a commit
// the command's read snapshot is dropped: what it reads next sees its own
// writes.
//
// In a multi-document transaction fn runs in the transaction's kv
// transaction, and nothing commits (commitTransaction does). Outside one,
// a write that meets a key an open transaction owns (kv's
// ErrWriteConflict) rolls back, waits for the owner to end (or the
// command's context: maxTimeMS, killOp, disconnect) and runs fn again,
// as mongod's non-transactional writes wait out a transaction's lock: fn
// must start from scratch each time it is called.
func (c *Ctx) WriteTx(d exec.Durability, fn func(tx *exec.Tx) error) error {
	if c.Txn != nil && c.Txn.Tx != nil {
		c.Txn.Wrote = true
		return fn(c.Txn.Tx)
	}
	for {
		err := c.writeTxOnce(d, fn)
		wait, conflict := exec.ConflictWait(err)
		if !conflict {
			return err
		}
		c.Env.Stats.TxnConflictWaits.Add(1)
		if err := wait(c); err != nil {
			return ctxErr(err)
		}
	}
}

func (c *Ctx) writeTxOnce(d exec.Durability, fn func(tx *exec.Tx) error) error {
	tx, err := c.beginWrite()
	if err != nil {
		return ctxErr(err)
	}
	defer c.Env.Stats.WritersActive.Add(-1)
	defer tx.Rollback()
	c.TxTS = 0
	before := c.Env.Oplog.LastAppended()
	if err := fn(tx); err != nil {
		c.TxTS = 0
		return err
	}
	if last := c.Env.Oplog.LastAppended(); last != before {
		c.NoteOpTime(last) // the transaction's last oplog entry
	}
	c.stampTx()
	if err := tx.CommitWith(d); err != nil {
		c.TxTS = 0
		return fmt.Errorf("commit: %w", err)
	}
	c.CommittedTx()
	c.ReleaseSnapshot()
	return nil
}

// beginWrite takes the engine's writer lock, counting the commands that
// wait for it and hold it for serverStatus's globalLock and locks. An
// acquisition waited when another command held or awaited the lock as it
// asked.
func (c *Ctx) beginWrite() (*exec.Tx, error) {
	s := &c.Env.Stats
	contended := s.WritersQueued.Add(1) > 1 || s.WritersActive.Load() > 0
	start := time.Now()
	tx, err := c.Env.KV.BeginWrite(c)
	s.WritersQueued.Add(-1)
	if err != nil {
		return nil, err
	}
	s.WritersActive.Add(1)
	s.WriterAcquires.Add(1)
	if contended {
		s.WriterWaits.Add(1)
		s.WriterWaitMicros.Add(time.Since(start).Microseconds())
	}
	return tx, nil
}

// The command's snapshot (exec.Snapshot): the catalog entry, the view,
// the default collation, the hint check, the plan choice and the first
// batch all read it; Dispatch releases it. A cursor left open keeps a
// clone, and its getMores read that snapshot (cursors.go).

// ReadSnapshot begins a read of the command's snapshot
// (exec.Snapshotter, exec.BuildCmd).
func (c *Ctx) ReadSnapshot() (*exec.Tx, error) { return c.Snap.Read(&c.Env.Engine) }

// Snapshot is the command's snapshot itself, for a read that ends with
// the command (the caller must not end it).
func (c *Ctx) Snapshot() (*exec.Tx, error) { return c.Snap.Shared(&c.Env.Engine) }

// CurrentTx begins a read of the data as it is now, not of the command's
// snapshot: for loops that wait for another command's commit.
func (c *Ctx) CurrentTx() (*exec.Tx, error) { return c.Env.Current() }

// ReleaseSnapshot ends the command's snapshot (clones live on).
func (c *Ctx) ReleaseSnapshot() { c.Snap.Release() }

// ctxErr maps a context error to MongoDB's error for the reason.
func ctxErr(err error) error { return mongoerr.FromContext(err) }

// asMongoErr is the MongoDB error for err, storage-engine errors included
// (exec.AsMongoErr).
func asMongoErr(err error) *mongoerr.Error { return exec.AsMongoErr(err) }

// SnapshotCollection begins a snapshot read and looks up c.DB.name in it
// (nil if it does not exist). The caller must roll the transaction back.
func (c *Ctx) SnapshotCollection(name string) (*exec.Tx, *catalog.Collection, error) {
	tx, err := c.ReadSnapshot()
	if err != nil {
		return nil, nil, err
	}
	coll, err := catalog.Get(tx, c.DB, name)
	if err != nil {
		tx.Rollback()
		return nil, nil, err
	}
	return tx, coll, nil
}

// CollectionMeta returns the catalog entry of db.name as it is now (nil
// if there is none), for decisions made before the command's own
// transaction.
func (c *Ctx) CollectionMeta(name string) (*catalog.Collection, error) {
	tx, coll, err := c.SnapshotCollection(name)
	if err != nil {
		return nil, err
	}
	tx.Rollback()
	return coll, nil
}
