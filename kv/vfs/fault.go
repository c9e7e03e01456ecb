package vfs

import (
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
)

// Fault wraps an FS and injects errors. The zero hooks inject nothing; set
// them with the Set methods at any time (they are safe for concurrent use).
type Fault struct {
	FS FS // the wrapped file system

	mu        sync.Mutex
	syncErr   func(name string) error
	writeHook func(name string, off int64, n int) (allowed int, err error)
}

// NewFault wraps fs.
func NewFault(fs FS) *Fault { return &Fault{FS: fs} }

// SetSyncError makes Sync and Datasync call fn; a non-nil result is returned
// instead of syncing. nil clears the hook.
func (f *Fault) SetSyncError(fn func(name string) error) {
	f.mu.Lock()
	f.syncErr = fn
	f.mu.Unlock()
}

// SetWriteHook makes WriteAt call fn first. If fn returns allowed < n, only
// the first allowed bytes are written (a short write) and err is returned.
// nil clears the hook.
func (f *Fault) SetWriteHook(fn func(name string, off int64, n int) (allowed int, err error)) {
	f.mu.Lock()
	f.writeHook = fn
	f.mu.Unlock()
}

// NoSpaceAfter returns a write hook that fails with ENOSPC once budget bytes
// have been written through it (the failing write is short).
func NoSpaceAfter(budget int64) func(string, int64, int) (int, error) {
	var mu sync.Mutex
	return func(name string, off int64, n int) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		if int64(n) <= budget {
			budget -= int64(n)
			return n, nil
		}
		allowed := int(budget)
		budget = 0
		return allowed, &os.PathError{Op: "write", Path: name, Err: syscall.ENOSPC}
	}
}

func (f *Fault) hooks() (func(string) error, func(string, int64, int) (int, error)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.syncErr, f.writeHook
}

type faultFile struct {
	File
	f *Fault
}

func (ff faultFile) WriteAt(p []byte, off int64) (int, error) {
	if _, wh := ff.f.hooks(); wh != nil {
		allowed, err := wh(ff.Name(), off, len(p))
		if err != nil {
			if allowed > len(p) {
				allowed = len(p)
			}
			n := 0
			if allowed > 0 {
				n, _ = ff.File.WriteAt(p[:allowed], off)
			}
			return n, err
		}
	}
	return ff.File.WriteAt(p, off)
}

func (ff faultFile) Sync() error {
	if se, _ := ff.f.hooks(); se != nil {
		if err := se(ff.Name()); err != nil {
			return fmt.Errorf("fsync %s: %w", ff.Name(), err)
		}
	}
	return ff.File.Sync()
}

func (ff faultFile) Datasync() error {
	if se, _ := ff.f.hooks(); se != nil {
		if err := se(ff.Name()); err != nil {
			return fmt.Errorf("fdatasync %s: %w", ff.Name(), err)
		}
	}
	return ff.File.Datasync()
}

// OpenFile implements FS.
func (f *Fault) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return faultFile{File: file, f: f}, nil
}

// Remove implements FS.
func (f *Fault) Remove(name string) error { return f.FS.Remove(name) }

// MkdirAll implements FS.
func (f *Fault) MkdirAll(dir string, perm os.FileMode) error { return f.FS.MkdirAll(dir, perm) }

// Stat implements FS.
func (f *Fault) Stat(name string) (os.FileInfo, error) { return f.FS.Stat(name) }

// SyncDir implements FS.
func (f *Fault) SyncDir(dir string) error {
	if se, _ := f.hooks(); se != nil {
		if err := se(dir); err != nil {
			return err
		}
	}
	return f.FS.SyncDir(dir)
}

// Lock implements FS.
func (f *Fault) Lock(name string) (io.Closer, error) { return f.FS.Lock(name) }

// StartWriteback passes the hint on when the wrapped file supports it.
func (ff faultFile) StartWriteback(off, n int64) error {
	if ws, ok := ff.File.(WritebackStarter); ok {
		return ws.StartWriteback(off, n)
	}
	return nil
}

// WaitWriteback passes the hint on when the wrapped file supports it.
func (ff faultFile) WaitWriteback(off, n int64) error {
	if ws, ok := ff.File.(WritebackStarter); ok {
		return ws.WaitWriteback(off, n)
	}
	return nil
}

// Allocate passes the reservation on (writing zeros when the wrapped file
// cannot allocate). The write hook sees the growth as a write of that many
// bytes at the old end, so NoSpaceAfter budgets allocations too; a refused
// allocation reserves nothing.
func (ff faultFile) Allocate(off, n int64) error {
	if _, wh := ff.f.hooks(); wh != nil {
		size, err := ff.File.Size()
		if err != nil {
			return err
		}
		if grow := off + n - size; grow > 0 {
			if allowed, err := wh(ff.Name(), size, int(grow)); err != nil || int64(allowed) < grow {
				if err == nil {
					err = &os.PathError{Op: "fallocate", Path: ff.Name(), Err: syscall.ENOSPC}
				}
				return err
			}
		}
	}
	if a, ok := ff.File.(Allocator); ok {
		return a.Allocate(off, n)
	}
	return allocateByWriting(ff.File, off, n)
}
