package exec

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/kv"
)

// The transactions the layers above hold. The command handlers reach the
// storage engine only through the execution layer: they hold a Tx that exec
// opened (a command's Snapshot, or the write transaction of
// Engine.KV.BeginWrite) and hand it to the catalog, the planner, the
// executors and the collection writer, so that a command's reads and writes
// go through one transaction. The names below are that one door: internal/lint
// checks that internal/command does not import kv.

// Tx is a storage-engine transaction (a read snapshot or the write
// transaction).
type Tx = kv.Tx

// Tree is a tree of a transaction (a collection's data, an index).
type Tree = kv.Tree

// Durability is how a write transaction's commit reaches the disk.
type Durability = kv.Durability

// The durabilities a command's write concern chooses (internal/concern/write.go).
const (
	// Sync returns once the commit is in the journal on disk (j: true).
	Sync = kv.Sync
	// Lazy returns once the commit is published; the journal reaches the
	// disk within the commit interval.
	Lazy = kv.Lazy
)

// Snapshot is a command's read snapshot. A command reads one snapshot from
// its first read to its reply: the catalog entry, the view, the default
// collation, the hint check, the plan choice and the first batch all see
// the same data, whatever commits meanwhile (a plan cannot be chosen in one
// snapshot and run in another). Read opens it on first use and hands out
// clones (each ended by its own Rollback); the command ends it with
// Release. A cursor left open keeps a clone, and its getMores read that
// snapshot. A write the command commits releases the snapshot, so that its
// later reads see it. The zero Snapshot is ready to use.
//
// In a multi-document transaction the snapshot is the transaction's
// concurrent kv transaction itself (UseTxn), lent (kv.Tx.Lend) so that the
// readers' Rollback of what Read hands them does nothing: a clone of a
// write transaction cannot be taken, and the statement must read the
// transaction's own writes.
type Snapshot struct {
	tx  *kv.Tx
	txn bool // tx is a transaction's, not the snapshot's own
}

// UseTxn makes the snapshot the (lent) kv transaction of a
// multi-document transaction.
func (s *Snapshot) UseTxn(tx *kv.Tx) {
	s.Release()
	s.tx, s.txn = tx, true
}

// Adopt makes tx, a read transaction the caller hands over, the
// snapshot (a snapshot read at a cluster time: a retained snapshot's
// clone); Release ends it.
func (s *Snapshot) Adopt(tx *kv.Tx) {
	s.Release()
	s.tx = tx
}

// InTxn reports whether the snapshot is a transaction's.
func (s *Snapshot) InTxn() bool { return s.txn }

// open begins the snapshot if it is not open yet.
func (s *Snapshot) open(e *Engine) error {
	if s.tx != nil {
		return nil
	}
	tx, err := e.KV.BeginRead()
	if err != nil {
		return fmt.Errorf("begin read: %w", err)
	}
	s.tx = tx
	return nil
}

// Read begins a read of the snapshot: a clone the caller ends.
func (s *Snapshot) Read(e *Engine) (*Tx, error) {
	if err := s.open(e); err != nil {
		return nil, err
	}
	if s.txn {
		return s.tx, nil
	}
	return s.tx.Clone()
}

// Shared is the snapshot itself, for a read that ends with the command
// (the caller must not end it): the request path's _id finds read through
// it without a clone.
func (s *Snapshot) Shared(e *Engine) (*Tx, error) {
	if err := s.open(e); err != nil {
		return nil, err
	}
	return s.tx, nil
}

// Release ends the snapshot (clones live on); the next Read opens a new
// one.
func (s *Snapshot) Release() {
	if s.tx != nil {
		if !s.txn {
			s.tx.Rollback()
		}
		s.tx, s.txn = nil, false
	}
}

// Current begins a read of the data as it is now, not of a command's
// snapshot: for loops that wait for another command's commit.
func (e *Engine) Current() (*Tx, error) {
	tx, err := e.KV.BeginRead()
	if err != nil {
		return nil, fmt.Errorf("begin read: %w", err)
	}
	return tx, nil
}

// AsMongoErr is mongoerr.As for errors that may come from the storage
// engine: a write refused for lack of disk space (kv.ErrNoSpace) is
// OutOfDiskSpace (14031), as mongod reports it (the write may be retried
// once space is freed); other engine errors are InternalError.
func AsMongoErr(err error) *mongoerr.Error {
	var e *mongoerr.Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, kv.ErrWriteConflict) {
		return &mongoerr.Error{Code: mongoerr.WriteConflict, Message: "Write conflict during plan execution and yielding is disabled. :: Please retry your operation or multi-document transaction."}
	}
	if errors.Is(err, kv.ErrTxAborted) {
		return &mongoerr.Error{Code: mongoerr.NoSuchTransaction, Message: "Transaction has been aborted."}
	}
	if errors.Is(err, kv.ErrTxTooLarge) {
		return &mongoerr.Error{Code: mongoerr.TransactionTooLarge, Message: err.Error()}
	}
	if errors.Is(err, kv.ErrNoSpace) {
		return &mongoerr.Error{Code: mongoerr.OutOfDiskSpace, Message: err.Error()}
	}
	return mongoerr.As(err)
}

// Open reports whether the snapshot has been opened.
func (s *Snapshot) Open() bool { return s.tx != nil }

// Clone begins a read of the open snapshot (a cursor keeps one for its
// getMores).
func (s *Snapshot) Clone() (*Tx, error) {
	if s.txn {
		return s.tx, nil
	}
	return s.tx.Clone()
}

// Resume makes the (released) snapshot a clone of tx: a getMore reads the
// snapshot its cursor was opened on.
func (s *Snapshot) Resume(tx *Tx) error {
	if s.txn || tx.Concurrent() {
		// A transaction's cursor reads the transaction, in its statements
		// only.
		if !s.txn || s.tx != tx {
			return mongoerr.New(mongoerr.CursorNotFound, "cursor opened in a transaction can only be read in that transaction")
		}
		return nil
	}
	s.Release()
	c, err := tx.Clone()
	if err != nil {
		return err
	}
	s.tx = c
	return nil
}

// ConflictWait returns, for an error wrapping kv.ErrWriteConflict met by
// an ordinary write transaction, the wait for the key's owner (a
// multi-document transaction) to end: roll back, wait, retry.
func ConflictWait(err error) (func(ctx context.Context) error, bool) {
	var wc *kv.WriteConflictError
	if errors.As(err, &wc) {
		return wc.Wait, true
	}
	return nil, false
}
