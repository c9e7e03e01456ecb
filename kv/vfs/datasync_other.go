//go:build !linux

package vfs

import "os"

func datasync(f *os.File) error { return f.Sync() }

// StartWriteback implements WritebackStarter as a no-op.
func (f osFile) StartWriteback(off, n int64) error { return nil }

// WaitWriteback implements WritebackStarter as a no-op.
func (f osFile) WaitWriteback(off, n int64) error { return nil }

// Allocate implements Allocator by writing zeros beyond the end of the file.
func (f osFile) Allocate(off, n int64) error { return allocateByWriting(f, off, n) }
