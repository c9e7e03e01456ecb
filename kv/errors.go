package kv

import (
	"errors"
	"fmt"
)

var (
	// ErrTreeNotFound is returned when a named tree does not exist.
	ErrTreeNotFound = errors.New("kv: tree not found")
	// ErrTreeExists is returned when creating a tree that already exists.
	ErrTreeExists = errors.New("kv: tree already exists")
	// ErrTxClosed is returned by operations on a committed or rolled back
	// transaction.
	ErrTxClosed = errors.New("kv: transaction closed")
	// ErrTxManaged: a transaction run by DB.View or DB.Update is ended by
	// them, not by the function they run.
	ErrTxManaged = errors.New("kv: managed transaction: DB.View and DB.Update end it")
	// ErrReadOnlyTx is returned by writes in a read transaction.
	ErrReadOnlyTx = errors.New("kv: write in read-only transaction")
	// ErrReadOnly is returned by BeginWrite on a database opened ReadOnly.
	ErrReadOnly = errors.New("kv: database opened read-only")
	// ErrDatabaseFailed is wrapped by every write after an I/O failure on
	// the write path (for example a failed fdatasync). The error also
	// wraps the original cause. Reopen the database to recover.
	ErrDatabaseFailed = errors.New("kv: database failed; reopen to recover")
	// ErrNoSpace is wrapped (by a *NoSpaceError) by checkpoints, commits
	// and opens refused because the file system has no room for the next
	// checkpoint. The database is not failed: nothing acknowledged is
	// lost, and writes resume by themselves once space is available
	// (space.go).
	ErrNoSpace = errors.New("kv: out of disk space")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("kv: database closed")
	// ErrKeyTooLarge is returned for keys longer than MaxKeySize.
	ErrKeyTooLarge = errors.New("kv: key too large")
	// ErrValueTooLarge is returned for values longer than MaxValueSize.
	ErrValueTooLarge = errors.New("kv: value too large")
	// ErrEmptyKey is returned for zero-length keys.
	ErrEmptyKey = errors.New("kv: empty key")
	// ErrWriteConflict is wrapped (by a *WriteConflictError) by a write
	// of a key that a live concurrent transaction owns, or, in a
	// concurrent transaction, that a transaction committed after its
	// snapshot wrote (concurrent.go). MongoDB's WriteConflict (112).
	ErrWriteConflict = errors.New("kv: write conflict")
	// ErrTxAborted is returned by the operations and Commit of a
	// concurrent transaction that was aborted (Tx.Abort, its context).
	ErrTxAborted = errors.New("kv: transaction aborted")
	// ErrTxTooLarge is wrapped by a write that would take a concurrent
	// transaction beyond Options.ConcurrentTxMemory (MongoDB's
	// TransactionTooLargeForCache, 10334). The write had no effect.
	ErrTxTooLarge = errors.New("kv: transaction too large for its memory limit")
	// ErrUnsorted is returned by BulkLoad when keys are not strictly
	// ascending.
	ErrUnsorted = errors.New("kv: bulk load keys not strictly ascending")
)

const (
	// MaxKeySize is the largest key accepted (64 MiB, as values): any
	// key a 16 MiB document can give, escaped or collated, fits. A key
	// longer than a page lives in a multi-page leaf extent of its own, and
	// branches hold only the prefix of it that separates it from its
	// left neighbour (btree.go, separator).
	MaxKeySize = 64 << 20
	// MaxValueSize is the largest value accepted (64 MiB).
	MaxValueSize = 64 << 20
)

// CorruptionError reports damaged on-disk state.
type CorruptionError struct {
	File    string // file name within the database directory
	Page    uint64 // page number (0 when not page related)
	Problem string // what is wrong
}

// Error names the file, the page and the problem.
func (e *CorruptionError) Error() string {
	return fmt.Sprintf("kv: corruption in %s page %d: %s", e.File, e.Page, e.Problem)
}

func corruptf(file string, page uint64, format string, args ...any) error {
	return &CorruptionError{File: file, Page: page, Problem: fmt.Sprintf(format, args...)}
}

// keyString quotes key for an error message, abbreviated beyond 64 bytes
// (keys may be up to MaxKeySize long).
func keyString(key []byte) string {
	const show = 64
	if len(key) <= show {
		return fmt.Sprintf("%q", key)
	}
	return fmt.Sprintf("%q… (%d bytes)", key[:show], len(key))
}
