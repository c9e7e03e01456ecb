package kv

// MVCC and transactions.
//
// The state of the database is a chain of immutable snapshots. A snapshot
// is a txid and a map from tree name to an immutable root record; the
// trees are copy-on-write B+trees of immutable nodes (node.go). The current
// snapshot is published through one atomic pointer.
//
// Readers: BeginRead loads the current snapshot and registers on it by
// incrementing that snapshot's reference count (a CAS that fails only if the
// snapshot was concurrently retired, see below). From then on every Get or
// cursor move is lock-free: it follows atomic child pointers, loading
// missing nodes from disk on demand (concurrent loaders race benignly with a
// CAS). Nothing a reader does takes a lock the writer holds, and nothing the
// writer does waits for readers.
//
// The writer: one write transaction at a time (a channel semaphore, so
// BeginWrite honours its context). The write transaction copies every node
// it changes, and its parents up to the root (path copying), stamping the
// copies with its txid so that later changes in the same transaction modify
// them in place.
//
// Commit (DB.commit), in this order: under the writer lock it reserves the
// record's place in the journal (a sequence number and an upper bound of
// its size: journal.reserve), publishes the new snapshot (from then on new
// readers see the commit) and releases the writer lock. Outside the lock it
// compresses and writes the record, in reservation order (journal.write),
// and then, for a Sync commit, waits until the journal is durable up to
// the record's end, sharing the fdatasync with concurrent committers
// (journal.waitDurable); a Lazy commit only nudges the flusher. A
// transaction too big for the journal (or committed while the disk is
// full, or one that bulk loaded) reserves the disk space of a checkpoint
// instead, publishes, and commits by checkpointing with the writer lock
// held. So a commit is visible before it is durable; if its write or flush
// fails, the DB enters the failed state and reopening shows what is
// durable.
//
// Reclaiming pages: when a write transaction replaces a node version that
// lives on disk, the extent is "freed by tx F". A reader whose snapshot is
// older than F may still need to load it, and the last durable checkpoint
// may reference it. It therefore becomes reusable only when (1) a
// checkpoint after F has completed, so neither the newest meta nor the
// fallback used while writing the next one references it, and (2) every
// registered reader's snapshot is >= F. To compute (2) without racing with
// BeginRead, the checkpoint retires every superseded snapshot whose
// reference count is zero with a CAS 0 -> -1; a reader can never register on
// a retired snapshot, so the minimum txid over the surviving snapshots is a
// safe bound.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/kv/internal/invariants"
	"github.com/cairndb/cairn/kv/vfs"
)

// snapshot is one committed state.
type snapshot struct {
	txid  uint64
	trees map[string]*treeRoot
	refs  atomic.Int64 // registered readers; -1 once retired
}

// txFree lists the extents freed by one committed transaction.
type txFree struct {
	txid  uint64
	pages []extent
}

// DB is an open database.
type DB struct {
	// watches are the trees readers wait on (watch.go).
	watches   watches
	dir       string
	opts      Options
	fs        vfs.FS
	lock      io.Closer
	pageSize  int
	pageCodec int // codec of compressed leaves (Options.PageCompression)
	pager     *pager
	journal   *journal
	readOnly  bool
	openSize  int64 // data file size when Open began (undoOpen)
	created   bool  // this Open created the database

	current atomic.Pointer[snapshot]
	writer  chan struct{}
	ckptMu  sync.Mutex // held by checkpoints and Check

	// Writer-lock protected.
	snaps       []*snapshot // published snapshots that may have readers, oldest first
	freeMu      sync.Mutex  // guards pendingFree (appended by commits, taken by checkpoints)
	pendingFree []txFree    // freed by commits since the last checkpoint
	freedAt     []ckptFree  // freed by commits included in a checkpoint
	alloc       allocator
	meta        meta

	failed atomic.Pointer[error]
	// noSpace holds the error of the last checkpoint refused for lack of
	// disk space, until a checkpoint succeeds (space.go).
	noSpace atomic.Pointer[error]
	closed  atomic.Bool
	// journalPressure is set when commits fill the journal; the next
	// checkpoint then grows a journal that Compact shrank back to
	// Options.JournalSize.
	journalPressure atomic.Bool

	ckptCh  chan struct{}
	flushCh chan struct{}
	done    chan struct{}
	wg      sync.WaitGroup

	st    stats
	cache nodeCache
	cc    coordinator // concurrent transactions (concurrent.go, conflict.go)
}

// ckptFree lists extents freed by tx txid and first unreferenced by
// checkpoint ckpt.
type ckptFree struct {
	ckpt  uint64
	txid  uint64
	pages []extent
}

func (db *DB) failedErr() error {
	if p := db.failed.Load(); p != nil {
		return fmt.Errorf("%w: %w", ErrDatabaseFailed, *p)
	}
	return nil
}

// fail puts the database into the failed state (first cause wins).
func (db *DB) fail(cause error) {
	if db.failed.CompareAndSwap(nil, &cause) {
		db.opts.Logger.Error("kv: database failed; refusing writes until reopened", "dir", db.dir, "err", cause)
	}
}

// BeginRead starts a read transaction on the current snapshot. It never
// blocks.
func (db *DB) BeginRead() (*Tx, error) {
	if db.closed.Load() {
		return nil, ErrClosed
	}
	for {
		s := db.current.Load()
		if r := s.refs.Load(); r >= 0 && s.refs.CompareAndSwap(r, r+1) {
			return &Tx{db: db, snap: s, trees: s.trees}, nil
		}
	}
}

// Clone begins another read transaction on tx's snapshot: the same data,
// whatever has been committed since, ended by its own Rollback. A command
// that reads in several steps (choosing a plan, then reading its first
// batch, then its getMores) reads one snapshot through clones of one
// transaction. tx must be an open read transaction.
func (tx *Tx) Clone() (*Tx, error) {
	if tx.closed {
		return nil, ErrTxClosed
	}
	if tx.db.closed.Load() {
		return nil, ErrClosed
	}
	if tx.writable {
		return nil, fmt.Errorf("kv: Clone of a write transaction")
	}
	tx.snap.refs.Add(1) // tx holds a reference: the snapshot is live
	return &Tx{db: tx.db, snap: tx.snap, trees: tx.snap.trees}, nil
}

// BeginWrite starts the write transaction, waiting for the writer lock or
// ctx.
func (db *DB) BeginWrite(ctx context.Context) (*Tx, error) {
	if db.readOnly {
		return nil, ErrReadOnly
	}
	if err := db.acquireWriter(ctx); err != nil {
		return nil, err
	}
	if err := db.failedErr(); err != nil {
		db.releaseWriter()
		return nil, err
	}
	return db.newWriteTx(), nil
}

func (db *DB) newWriteTx() *Tx {
	s := db.current.Load()
	tx := &Tx{db: db, snap: s, writable: true, id: s.txid + 1, trees: s.trees}
	tx.log.reset(int(db.journal.size / 4))
	tx.log.take()
	return tx
}

func (db *DB) acquireWriter(ctx context.Context) error {
	if db.closed.Load() {
		return ErrClosed
	}
	if ctx == nil {
		ctx = context.Background()
	}
	select {
	case db.writer <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("kv: waiting for the writer lock: %w", ctx.Err())
	}
	if db.closed.Load() {
		db.releaseWriter()
		return ErrClosed
	}
	return nil
}

func (db *DB) releaseWriter() { <-db.writer }

// View runs fn in a read transaction, which it ends when fn returns or
// panics. fn may not commit or roll back the transaction itself
// (ErrTxManaged).
func (db *DB) View(fn func(*Tx) error) error {
	tx, err := db.BeginRead()
	if err != nil {
		return err
	}
	tx.managed = true
	defer tx.endManaged()
	return fn(tx)
}

// Update runs fn in a write transaction and commits it with the default
// durability if fn returns nil; otherwise, and if fn panics, it rolls back
// (releasing the writer lock before the panic goes on). fn may not commit
// or roll back the transaction itself (ErrTxManaged), as with bbolt's
// managed transactions.
func (db *DB) Update(ctx context.Context, fn func(*Tx) error) error {
	tx, err := db.BeginWrite(ctx)
	if err != nil {
		return err
	}
	tx.managed = true
	defer tx.endManaged()
	if err := fn(tx); err != nil {
		return err
	}
	tx.managed = false
	return tx.Commit()
}

// publish makes snap, the commit of tx (nil if it changed no entries),
// current. Called with the writer lock held. While a concurrent
// transaction is live it first records what tx wrote (conflict.go).
func (db *DB) publish(snap *snapshot, freed []extent, tx *Tx) {
	db.cc.publishing.Store(snap.txid)
	if db.cc.live.Load() != 0 {
		db.cc.recordCommit(tx, snap.txid)
	}
	if h := db.opts.testing.beforePublish; h != nil {
		h(db)
	}
	for _, tr := range snap.trees {
		if tr.txid == snap.txid {
			if n := tr.root.ptr.Load(); n != nil && invariants.Enabled {
				n.checkSealed(snap.txid, tr.height, nil, nil)
			}
			if tr.ver == 0 || tr.mod != tr.baseMod {
				tr.ver = snap.txid // created or changed by this commit
			}
		}
	}
	db.pruneSnapshots()
	db.snaps = append(db.snaps, snap)
	db.current.Store(snap)
	db.watches.notify(func(yield func(string)) {
		for name, tr := range snap.trees {
			if tr.ver == snap.txid {
				yield(name)
			}
		}
	})
	if len(freed) > 0 {
		db.freeMu.Lock()
		db.pendingFree = append(db.pendingFree, txFree{txid: snap.txid, pages: freed})
		db.freeMu.Unlock()
	}
}

// pruneSnapshots retires superseded snapshots without readers and returns
// the oldest txid a registered reader may still see.
func (db *DB) pruneSnapshots() uint64 {
	cur := db.current.Load()
	kept := db.snaps[:0]
	for _, s := range db.snaps {
		if s != cur && s.refs.CompareAndSwap(0, -1) {
			continue
		}
		kept = append(kept, s)
	}
	clear(db.snaps[len(kept):])
	db.snaps = kept
	oldest := cur.txid
	for _, s := range db.snaps {
		oldest = min(oldest, s.txid)
	}
	return oldest
}

// commit finishes write transaction tx, which holds the writer lock: it
// publishes the transaction and releases the lock, then makes the commit
// durable as d asks (see the top of this file for the order of the
// steps).
func (db *DB) commit(tx *Tx, d Durability) error {
	tx.closed = true
	defer tx.log.release() // the record is written (or not) when commit returns
	if err := db.failedErr(); err != nil {
		db.releaseWriter()
		return err
	}
	if !tx.dirty {
		db.releaseWriter()
		if d == Sync {
			// Nothing to write, but a Sync commit still guarantees that
			// every earlier commit is durable when it returns.
			if err := db.journal.flush(); err != nil {
				db.fail(err)
				return fmt.Errorf("kv: commit %d: %w (%w)", tx.id, err, ErrDatabaseFailed)
			}
		}
		return nil
	}
	if err := tx.settleAllDiscards(); err != nil {
		db.releaseWriter()
		return fmt.Errorf("kv: commit %d: %w", tx.id, err)
	}
	tx.settleAll()
	snap := &snapshot{txid: tx.id, trees: tx.trees}
	start := time.Now()
	noSpace := db.noSpace.Load() != nil
	if tx.forceCkpt || tx.log.off || noSpace || !db.journal.fits(tx.log.size()) {
		if !tx.forceCkpt && !noSpace && (!tx.log.off || db.journal.size < db.opts.JournalSize) {
			db.journalPressure.Store(true) // the journal is too small for the load
		}
		// Too big for the journal (or the last checkpoint found no disk
		// space): commit by checkpointing, once the space for it is
		// reserved; else the commit is refused and leaves no trace
		// (space.go).
		db.ckptMu.Lock()
		err := db.reserveCheckpointSpace(snap)
		db.ckptMu.Unlock()
		if err != nil {
			db.releaseWriter()
			if errors.Is(err, ErrNoSpace) {
				db.setNoSpace(err)
			} else {
				db.fail(err)
			}
			return fmt.Errorf("kv: commit %d: %w", tx.id, err)
		}
		tx.settleRetired()
		db.publish(snap, tx.freed, tx)
		err = db.checkpointLocked()
		if err != nil && errors.Is(err, ErrNoSpace) {
			// The transaction is published and its space was reserved;
			// should the checkpoint still find none (its own plan, after
			// releasing extents, differs), the commit is neither refused
			// without trace nor durable: fail the database rather than
			// answer an error for a write a later checkpoint could make
			// durable.
			db.fail(fmt.Errorf("checkpoint of a reserved commit: %w", err))
		}
		if err == nil {
			// The checkpoint made this commit, and every one before
			// it, durable.
			db.journal.checkpointedMark(tx.mark)
		}
		db.releaseWriter()
		if err != nil {
			return fmt.Errorf("kv: commit %d: %w", tx.id, err)
		}
		db.st.commits.Add(1)
		db.st.commitNanos.Add(uint64(time.Since(start)))
		return nil
	}
	tx.settleRetired()
	slot := db.journal.reserve(tx.id, tx.log.size(), tx.mark)
	db.publish(snap, tx.freed, tx)
	db.releaseWriter()
	// Compress and write the record outside the writer lock, in commit
	// order (journal.go).
	lsn, err := db.journal.write(slot, tx.log.parts()...)
	if err != nil {
		db.fail(err)
		return fmt.Errorf("kv: commit %d: %w (%w)", tx.id, err, ErrDatabaseFailed)
	}
	db.st.commits.Add(1)
	if db.journal.offset() > min(db.opts.CheckpointBytes, db.journal.fileSize.Load()/2) {
		db.journalPressure.Store(true)
		select {
		case db.ckptCh <- struct{}{}:
		default:
		}
	}
	switch d {
	case Sync:
		if err := db.journal.waitDurable(lsn); err != nil {
			db.fail(err)
			return fmt.Errorf("kv: commit %d not durable: %w (%w)", tx.id, err, ErrDatabaseFailed)
		}
	case Lazy:
		select {
		case db.flushCh <- struct{}{}:
		default:
		}
	}
	db.st.commitNanos.Add(uint64(time.Since(start)))
	return nil
}

// Sync makes every committed transaction durable.
func (db *DB) Sync(ctx context.Context) error {
	if db.readOnly {
		return nil
	}
	if err := db.failedErr(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- db.journal.flush() }()
	select {
	case err := <-done:
		if err != nil {
			db.fail(err)
		}
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// checkpointer runs timed and size-triggered checkpoints.
func (db *DB) checkpointer() {
	defer db.wg.Done()
	var tick <-chan time.Time
	if db.opts.CheckpointInterval > 0 {
		t := time.NewTicker(db.opts.CheckpointInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-db.done:
			return
		case <-tick:
		case <-db.ckptCh:
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			select {
			case <-db.done:
			case <-ctx.Done():
			}
			cancel()
		}()
		if err := db.Checkpoint(ctx); err != nil && !db.closed.Load() {
			db.opts.Logger.Warn("kv: background checkpoint failed", "err", err)
		}
		cancel()
	}
}

// flusher makes Lazy commits durable within CommitInterval.
func (db *DB) flusher() {
	defer db.wg.Done()
	for {
		select {
		case <-db.done:
			return
		case <-db.flushCh:
		}
		t := time.NewTimer(db.opts.CommitInterval)
		select {
		case <-db.done:
			t.Stop()
			return
		case <-t.C:
		}
		if db.failed.Load() == nil {
			if err := db.journal.flush(); err != nil {
				db.fail(err)
			}
		}
	}
}

// Close checkpoints (if anything changed) and releases the database. It
// waits for an active write transaction to finish. Read transactions still
// open must not be used afterwards.
func (db *DB) Close() error {
	if !db.closed.CompareAndSwap(false, true) {
		return nil
	}
	close(db.done)
	db.cc.abortAll(fmt.Errorf("%w: %w", ErrTxAborted, ErrClosed))
	db.wg.Wait()
	db.writer <- struct{}{} // wait for the active writer
	var err error
	if !db.readOnly && db.failed.Load() == nil && db.needsCheckpoint() {
		err = db.checkpointLocked()
	}
	if db.journal != nil {
		if cerr := db.journal.close(); err == nil && cerr != nil {
			err = cerr
		}
	}
	if cerr := db.pager.f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if cerr := db.lock.Close(); err == nil && cerr != nil {
		err = cerr
	}
	<-db.writer // let blocked BeginWrite calls see ErrClosed
	if err != nil {
		return fmt.Errorf("kv: close %s: %w", db.dir, err)
	}
	return nil
}

func (db *DB) needsCheckpoint() bool {
	db.freeMu.Lock()
	pending := len(db.pendingFree) > 0
	db.freeMu.Unlock()
	return db.current.Load().txid != db.meta.txid || pending || db.journal.offset() > 0
}
