package kv

// Concurrent write transactions with snapshot isolation.
//
// A write transaction of BeginWrite holds the one writer lock from begin
// to commit. A MongoDB multi-document transaction lives across client
// round trips, seconds long; it must not keep every other writer waiting
// while the client thinks. DB.BeginConcurrent starts a transaction that
// holds the writer lock only inside Commit:
//
//   - It reads the snapshot current when it began (registered on it as a
//     reader, so its pages stay pinned) plus its own writes: it works on a
//     private copy-on-write of the snapshot's trees with the ordinary
//     write path (path copying, splits, merges, deferred puts into empty
//     trees, tree creation and drop), whose new nodes carry a private id
//     (concIDBase + n) that no commit ever uses. Nothing of it is
//     journaled or checkpointed, and it never frees or retires a shared
//     node (Tx.retire ignores it): rolling back is dropping the Tx.
//     Its puts into a tree that is not empty wait in the tree's later
//     list until it reads the tree (later.go): the commit does not need
//     the private trees, only the transaction's own reads do.
//   - It records its logical operations (journalOps, with no size limit:
//     Options.ConcurrentTxMemory bounds it instead) and claims every key
//     it writes in the coordinator (conflict.go).
//   - First writer wins, at once, as in WiredTiger: a Put or Delete of a
//     key that another live concurrent transaction wrote, or that a
//     transaction committed after this one's snapshot wrote, fails with a
//     *WriteConflictError (errors.Is ErrWriteConflict) and changes
//     nothing. The key stays its first writer's until that one commits or
//     ends. Creating or dropping a tree claims the tree (the empty key),
//     which conflicts with every key of it. Ordinary write transactions
//     respect the same ownership: their Put, Delete, DeleteRange,
//     CreateTree, DropTree and BulkLoad of something a live concurrent
//     transaction owns fail the same way; WriteConflictError.Wait waits
//     for the owner to end (after rolling back, which releases the writer
//     lock the owner needs to commit).
//   - Commit takes the writer lock, re-validates (nothing it owns was
//     committed by others since its snapshot: claims made that nearly
//     certain; only an ordinary transaction already running when the
//     first concurrent transaction began can have slipped a write in),
//     replays the operations onto the current trees in an ordinary write
//     transaction and commits that with the durability asked; publishing
//     logs its keys and releases them (recordCommit). Because no key it
//     wrote changed since its snapshot, the replay produces exactly its
//     writes on top of the newer state. A Delete that found nothing and a
//     DeleteRange are logged as deletes of the keys the transaction saw,
//     so a replay never removes a key it did not see.
//   - Abort, safe from any goroutine, ends the transaction at once: its
//     keys are released and waiters woken; its next operation (and
//     Commit) fails with ErrTxAborted. The owner must still call Rollback,
//     which unpins its snapshot. A transaction also aborts when the
//     context given to BeginConcurrent is done.
//
// The isolation is snapshot isolation: every read sees the snapshot, a
// commit succeeds only if no key it wrote was written by a transaction
// that committed after the snapshot (no lost update), and its writes
// appear at once. Write skew is permitted (two transactions that each
// read what the other writes both commit), as in MongoDB: a constraint
// over several keys needs a write to a common key to be enforced.
//
// Cost to ordinary writers: with no concurrent transaction live, a Put
// pays one atomic load (coordinator.live) and commits record nothing.
// While one is live, each write of an ordinary transaction takes the
// coordinator's mutex for an ownership lookup and its commit records its
// keys (decoded from its journal operations) in the commit log, which
// keeps every key committed since the oldest live snapshot: a long-lived
// concurrent transaction costs memory in proportion to the writes
// committed during its life (MongoDB's snapshot history is pinned the
// same way).

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
)

// concTx is the state of a concurrent transaction shared with the
// coordinator and with Abort.
type concTx struct {
	snap    uint64
	done    chan struct{} // closed when the transaction ends
	aborted atomic.Bool   // set when it ends (the owner's next operation fails)
	stop    func() bool   // stops the abort on the context of BeginConcurrent

	// Guarded by coordinator.mu.
	state      int
	cause      error // why it ended
	claimed    []ownKey
	claimBytes int64

	// The owner goroutine's.
	onCommit func(*Tx) error // run in the replay transaction (OnCommit)
	arena    int64           // bytes of key/value copies
	nodes    int64           // bytes of private node copies
	limit    int64
}

const (
	concLive = iota
	concCommitting
	concEnded
)

// BeginConcurrent starts a concurrent write transaction on the current
// snapshot, without taking the writer lock (see the top of this file): it
// never waits for the writer. The transaction is aborted when ctx is done.
// End it with Commit, CommitWith or Rollback (defer tx.Rollback()).
func (db *DB) BeginConcurrent(ctx context.Context) (*Tx, error) {
	if db.closed.Load() {
		return nil, ErrClosed
	}
	if db.readOnly {
		return nil, ErrReadOnly
	}
	if err := db.failedErr(); err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("kv: begin concurrent transaction: %w", err)
	}
	cc := &db.cc
	c := &concTx{done: make(chan struct{}), limit: db.opts.ConcurrentTxMemory}
	cc.live.Add(1) // before loading the snapshot: see conflict.go
	cc.mu.Lock()
	var s *snapshot
	for {
		s = db.current.Load()
		if cc.publishing.Load() > s.txid {
			// A commit is between deciding whether to log its keys and
			// publishing: take its snapshot.
			cc.mu.Unlock()
			runtime.Gosched()
			cc.mu.Lock()
			continue
		}
		if r := s.refs.Load(); r >= 0 && s.refs.CompareAndSwap(r, r+1) {
			break
		}
	}
	c.snap = s.txid
	if cc.txs == nil {
		cc.txs = map[*concTx]struct{}{}
	}
	cc.txs[c] = struct{}{}
	cc.mu.Unlock()
	cc.begun.Add(1)
	tx := &Tx{db: db, snap: s, writable: true, id: concIDBase + cc.nextID.Add(1), trees: s.trees, conc: c}
	tx.log.reset(math.MaxInt)
	c.stop = context.AfterFunc(ctx, func() {
		db.cc.abort(c, fmt.Errorf("%w: %w", ErrTxAborted, context.Cause(ctx)))
	})
	return tx, nil
}

// Concurrent reports whether tx is a concurrent write transaction
// (BeginConcurrent).
func (tx *Tx) Concurrent() bool { return tx.conc != nil }

// Abort ends concurrent transaction tx from any goroutine: its keys are
// released at once, and its next operation, and Commit, fail with
// ErrTxAborted. Its snapshot stays pinned until the owner calls Rollback.
// Abort of a transaction that is committing (its commit has validated) or
// ended does nothing; Abort of a transaction that is not concurrent does
// nothing.
func (tx *Tx) Abort() {
	if tx.conc != nil {
		tx.db.cc.abort(tx.conc, ErrTxAborted)
	}
}

func (cc *coordinator) abort(c *concTx, cause error) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if c.state == concLive {
		cc.aborted.Add(1)
		cc.endLocked(c, cause)
	}
}

// OnCommit sets fn to run inside the commit of concurrent transaction tx:
// in the ordinary write transaction that replays its operations, after the
// replay and before that transaction commits, while it holds the writer
// lock. What fn writes in wt commits atomically with tx's writes, and fn
// runs in commit order (a stamp it takes under the writer lock orders the
// commit among all others: MongoDB's oplog entry of a transaction). An
// error from fn fails the commit: nothing of tx is written. fn runs only
// when tx wrote something. Not for other transactions (it does nothing).
func (tx *Tx) OnCommit(fn func(wt *Tx) error) {
	if tx.conc != nil {
		tx.conc.onCommit = fn
	}
}

// Lend marks concurrent transaction tx as lent (lent true) to code that
// ends every transaction it is handed: while lent, Commit and Rollback do
// nothing and answer ErrTxManaged, as inside DB.Update, so that a
// statement of a multi-statement transaction can hand it to readers and
// writers that end what they are given. Lend(false) gives it back to its
// owner, who commits or rolls it back. Not for other transactions.
func (tx *Tx) Lend(lent bool) {
	if tx.conc != nil {
		tx.managed = lent
	}
}

// MemoryUsage reports the bytes a concurrent transaction holds privately:
// its node copies, key and value copies, operation log and claims. It is 0
// for other transactions.
func (tx *Tx) MemoryUsage() int64 {
	if tx.conc == nil {
		return 0
	}
	return tx.conc.memory(tx)
}

func (c *concTx) memory(tx *Tx) int64 {
	return c.arena + c.nodes + int64(tx.log.size()) + c.claimBytes
}

// reserve refuses an operation of n more bytes of data that would take a
// concurrent transaction over its memory limit.
func (tx *Tx) reserve(n int) error {
	c := tx.conc
	if c.limit <= 0 {
		return nil
	}
	if used := c.memory(tx); used+3*int64(n)+1024 > c.limit {
		return fmt.Errorf("%w: %d bytes held, the write needs about %d more, limit %d (Options.ConcurrentTxMemory)",
			ErrTxTooLarge, used, 3*n+1024, c.limit)
	}
	return nil
}

// notePrivate accounts a node copy of a concurrent transaction.
func (tx *Tx) notePrivate(n *node) {
	if tx.conc != nil {
		tx.conc.nodes += nodeCost(n)
	}
}

// nodeCost estimates the memory of an unpacked node: the struct, its
// slice headers and search prefixes.
func nodeCost(n *node) int64 {
	per := int64(24 + 8 + 8) // key header, prefix, kid pointer
	if n.leaf {
		per = 24 + 24 + 8 // key and value headers, prefix
	}
	return 208 + per*int64(n.count()+1)
}

// concCheck is the check of every operation of a concurrent transaction.
func (tx *Tx) concCheck() error {
	if c := tx.conc; c != nil && c.aborted.Load() {
		tx.db.cc.mu.Lock()
		defer tx.db.cc.mu.Unlock()
		return c.cause
	}
	return nil
}

// coordinated reports whether a write of tx must consult the coordinator:
// tx is concurrent, or a concurrent transaction is live (then an ordinary
// transaction checks ownership). A replay does not (its keys are its
// concurrent transaction's).
func (tx *Tx) coordinated() bool {
	return tx.conc != nil || (tx.db.cc.live.Load() != 0 && tx.replayOf == nil)
}

// claimKeys claims keys of tree for concurrent tx (nil: the tree), or
// checks them for an ordinary one.
func (tx *Tx) claimKeys(tree string, keys ...[]byte) error {
	if tx.conc == nil {
		if keys == nil {
			return tx.db.cc.checkOrdinary(tree, nil)
		}
		for _, k := range keys {
			if err := tx.db.cc.checkOrdinary(tree, k); err != nil {
				return err
			}
		}
		return nil
	}
	return tx.db.cc.claim(tx.conc, tree, keys)
}

// claimPut is Put's check (tx.coordinated()): a concurrent transaction
// claims the key within its memory limit, an ordinary one checks it.
func (t *Tree) claimPut(key, value []byte) error {
	if t.tx.conc != nil {
		if err := t.tx.reserve(len(key) + len(value)); err != nil {
			return fmt.Errorf("kv: put in %q: %w", t.tr.name, err)
		}
	}
	if err := t.tx.claimKeys(t.tr.name, key); err != nil {
		return fmt.Errorf("kv: put in %q: %w", t.tr.name, err)
	}
	return nil
}

// claimDelete is Delete's check (tx.coordinated()). It reports whether
// the delete goes on: a concurrent transaction claims only a key it sees
// (a delete that finds nothing writes nothing, and is not replayed).
func (t *Tree) claimDelete(key []byte) (bool, error) {
	if t.tx.conc != nil {
		v, err := t.Get(key)
		if err != nil || v == nil {
			return false, err
		}
		if err := t.tx.reserve(len(key)); err != nil {
			return false, fmt.Errorf("kv: delete in %q: %w", t.tr.name, err)
		}
	}
	if err := t.tx.claimKeys(t.tr.name, key); err != nil {
		return false, fmt.Errorf("kv: delete in %q: %w", t.tr.name, err)
	}
	return true, nil
}

// deleteRangeConcurrent is DeleteRange in a concurrent transaction: it
// claims every key of the range that the transaction sees, all or none,
// and deletes and logs them one by one, so that the commit's replay
// deletes exactly those (not keys others committed into the range since).
func (t *Tree) deleteRangeConcurrent(start, end []byte) (int64, error) {
	var keys [][]byte
	size := 0
	c := t.Cursor()
	var k []byte
	if start == nil {
		k, _ = c.First()
	} else {
		k, _ = c.Seek(start)
	}
	for ; k != nil && (end == nil || bytes.Compare(k, end) < 0); k, _ = c.Next() {
		keys = append(keys, k)
		size += len(k)
	}
	if err := c.Err(); err != nil {
		return 0, fmt.Errorf("kv: delete range in %q: %w", t.tr.name, err)
	}
	if len(keys) == 0 {
		return 0, nil
	}
	if err := t.tx.reserve(size); err != nil {
		return 0, fmt.Errorf("kv: delete range in %q: %w", t.tr.name, err)
	}
	if err := t.tx.claimKeys(t.tr.name, keys...); err != nil {
		return 0, fmt.Errorf("kv: delete range in %q: %w", t.tr.name, err)
	}
	for i, k := range keys {
		found, err := t.tx.treeDelete(t.tr, k)
		if err == nil && !found {
			err = corruptf(dataFileName, 0, "tree %q: a key found by a cursor is not found by search (bad key order)", t.tr.name)
		}
		if err != nil {
			return int64(i), fmt.Errorf("kv: delete range in %q: %w", t.tr.name, err)
		}
		t.tx.dirty = true
		t.tx.log.del(t.tr.name, k)
	}
	return int64(len(keys)), nil
}

// commitConcurrent commits concurrent transaction tx (see the top of this
// file).
func (db *DB) commitConcurrent(tx *Tx, d Durability) error {
	c := tx.conc
	defer tx.endConcurrent()
	if err := tx.concCheck(); err != nil {
		return err
	}
	cc := &db.cc
	if !tx.dirty {
		cc.mu.Lock()
		cc.committed.Add(1)
		cc.endLocked(c, ErrTxClosed)
		cc.mu.Unlock()
		if d == Sync && db.failedErr() == nil {
			// As a write transaction that changed nothing: every earlier
			// commit is durable when a Sync commit returns.
			if err := db.journal.flush(); err != nil {
				db.fail(err)
				return fmt.Errorf("kv: commit: %w (%w)", err, ErrDatabaseFailed)
			}
		}
		return nil
	}
	if err := db.acquireWriterFor(c); err != nil {
		cc.abort(c, err)
		return err
	}
	if err := db.failedErr(); err != nil {
		db.releaseWriter()
		cc.abort(c, err)
		return err
	}
	cc.mu.Lock()
	if c.state != concLive {
		err := c.cause
		cc.mu.Unlock()
		db.releaseWriter()
		return err
	}
	if err := cc.validate(c); err != nil {
		cc.rolledBack.Add(1)
		cc.endLocked(c, ErrTxClosed)
		cc.mu.Unlock()
		db.releaseWriter()
		return fmt.Errorf("kv: commit: %w", err)
	}
	c.state = concCommitting
	cc.mu.Unlock()
	wt := db.newWriteTx()
	wt.replayOf = c
	// The puts keep the log's bytes (never pooled or reused: see
	// journalOps.putRef) instead of copying them again.
	err := replayParts(wt, tx.log.parts(), true)
	if err == nil && c.onCommit != nil {
		err = c.onCommit(wt)
	}
	if err != nil {
		// Validation makes a replay error impossible short of an engine
		// bug or a read error; an OnCommit hook may fail. The write
		// transaction is discarded.
		wt.Rollback()
		cc.mu.Lock()
		cc.rolledBack.Add(1)
		cc.endLocked(c, ErrTxClosed)
		cc.mu.Unlock()
		return fmt.Errorf("kv: commit of a concurrent transaction: %w", err)
	}
	wt.SetMark(tx.mark)
	err = db.commit(wt, d)
	cc.mu.Lock()
	if c.state != concEnded { // the commit failed before publishing
		cc.rolledBack.Add(1)
		cc.endLocked(c, ErrTxClosed)
	}
	cc.mu.Unlock()
	return err
}

// acquireWriterFor waits for the writer lock on behalf of concurrent
// transaction c: until it is free, c ends (Abort, its context) or the DB
// closes.
func (db *DB) acquireWriterFor(c *concTx) error {
	if db.closed.Load() {
		return ErrClosed
	}
	select {
	case db.writer <- struct{}{}:
	case <-c.done:
		db.cc.mu.Lock()
		defer db.cc.mu.Unlock()
		return c.cause
	}
	if db.closed.Load() {
		db.releaseWriter()
		return ErrClosed
	}
	return nil
}

// endConcurrent ends concurrent transaction tx for its owner (Commit,
// Rollback): it releases its keys if it still holds them and unpins its
// snapshot.
func (tx *Tx) endConcurrent() {
	c := tx.conc
	tx.closed = true
	c.stop()
	cc := &tx.db.cc
	cc.mu.Lock()
	if c.state != concEnded {
		cc.rolledBack.Add(1)
		cc.endLocked(c, ErrTxClosed)
	}
	cc.mu.Unlock()
	tx.snap.refs.Add(-1)
	tx.trees, tx.log, tx.chunk = nil, journalOps{}, nil
}

// abortAll ends every live concurrent transaction (Close).
func (cc *coordinator) abortAll(cause error) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for c := range cc.txs {
		if c.state == concLive {
			cc.aborted.Add(1)
			cc.endLocked(c, cause)
		}
	}
}

// ConcurrentStats describes the concurrent transactions of a DB.
type ConcurrentStats struct {
	Live       int    // concurrent transactions live now
	Begun      uint64 // since Open
	Committed  uint64 // committed (including those that changed nothing)
	RolledBack uint64 // rolled back, or refused at commit
	Aborted    uint64 // aborted by Abort, their context or Close
	Conflicts  uint64 // writes refused with ErrWriteConflict (ordinary ones too)
	OwnedKeys  int    // keys (and trees) owned by live transactions
	LogKeys    int    // keys in the commit log (committed since the oldest live snapshot)
}

func (cc *coordinator) stats() ConcurrentStats {
	s := ConcurrentStats{
		Begun: cc.begun.Load(), Committed: cc.committed.Load(), RolledBack: cc.rolledBack.Load(),
		Aborted: cc.aborted.Load(), Conflicts: cc.conflicts.Load(),
	}
	cc.mu.Lock()
	s.Live = len(cc.txs)
	for _, o := range cc.owners {
		s.OwnedKeys += len(o.keys)
		if o.tree != nil {
			s.OwnedKeys++
		}
	}
	s.LogKeys = cc.logged
	cc.mu.Unlock()
	return s
}
