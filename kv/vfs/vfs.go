// Package vfs is the file-system seam of the kv storage engine.
//
// kv performs every file operation through the FS and File interfaces
// defined here. Three implementations are provided:
//
//   - OS: the real operating-system file system (fdatasync, flock).
//   - Mem: an in-memory file system that remembers which bytes were made
//     durable by Sync/Datasync and can simulate a power loss (Crash),
//     keeping only synced data and, optionally, a random subset of the
//     writes that were not yet synced.
//     Mem can be given a capacity (SetCapacity): writes and allocations
//     beyond it fail with ENOSPC, as on a small file system.
//   - Fault: a wrapper around any FS that injects errors: failing
//     fsync/fdatasync, short writes and ENOSPC.
package vfs

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// File is an open file. ReadAt and WriteAt must be safe for concurrent use.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
	// Sync flushes data and metadata (fsync).
	Sync() error
	// Datasync flushes data and only the metadata needed to read it back
	// (fdatasync).
	Datasync() error
	// Truncate changes the size of the file.
	Truncate(size int64) error
	// Size returns the current size of the file.
	Size() (int64, error)
	// Name returns the name the file was opened with.
	Name() string
}

// FS is a file system.
type FS interface {
	// OpenFile opens a file like os.OpenFile.
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	// Remove removes a file.
	Remove(name string) error
	// MkdirAll creates a directory and its parents.
	MkdirAll(dir string, perm os.FileMode) error
	// Stat reports whether name exists and its size.
	Stat(name string) (os.FileInfo, error)
	// SyncDir makes the directory entries of dir durable.
	SyncDir(dir string) error
	// Lock takes an exclusive, non-blocking lock on the file name (created
	// if needed). The error of a failed Lock names the holder when known.
	// Closing the returned io.Closer releases the lock.
	Lock(name string) (io.Closer, error)
}

// ErrLocked is wrapped by the error of a Lock that failed because another
// owner holds the lock.
var ErrLocked = errors.New("vfs: locked by another owner")

// ErrCrashed is returned by operations on handles that were open when a
// Mem file system simulated a crash.
var ErrCrashed = errors.New("vfs: file handle invalidated by simulated crash")

// WritebackStarter is implemented by files that can start writing a range
// back to the device without waiting for it (Linux sync_file_range with
// SYNC_FILE_RANGE_WRITE). It is only a hint: durability still requires
// Sync or Datasync. kv uses it during checkpoints so that the disk writes
// overlap with encoding and the final fdatasync has less left to do.
type WritebackStarter interface {
	StartWriteback(off, n int64) error
	// WaitWriteback writes the range back and waits until it is on the
	// device (sync_file_range with WAIT_BEFORE|WRITE|WAIT_AFTER; data
	// only, not a durability guarantee). kv paces background checkpoints
	// with it so that journal flushes are not stuck behind a flood of
	// checkpoint writes.
	WaitWriteback(off, n int64) error
}

// Allocator is implemented by files that can reserve disk space for a
// range without writing it (fallocate(2) on Linux; mode 0, so the file
// grows to off+n if it was shorter). kv reserves the space a checkpoint
// will write before it writes anything, so that running out of space is
// found before any state changes instead of in the middle of a checkpoint.
// A failed Allocate may leave part of the range allocated; the caller
// truncates the file back.
type Allocator interface {
	Allocate(off, n int64) error
}

// IsNoSpace reports whether err is an out-of-space error from the file
// system (ENOSPC, or EDQUOT for an exhausted quota).
func IsNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
