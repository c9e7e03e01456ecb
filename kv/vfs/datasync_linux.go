package vfs

import (
	"os"
	"syscall"
)

func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}

// StartWriteback implements WritebackStarter with sync_file_range(2).
func (f osFile) StartWriteback(off, n int64) error {
	const syncFileRangeWrite = 0x2 // SYNC_FILE_RANGE_WRITE
	return syscall.SyncFileRange(int(f.Fd()), off, n, syncFileRangeWrite)
}

// WaitWriteback implements WritebackStarter with sync_file_range(2).
func (f osFile) WaitWriteback(off, n int64) error {
	const flags = 0x1 | 0x2 | 0x4 // WAIT_BEFORE | WRITE | WAIT_AFTER
	return syscall.SyncFileRange(int(f.Fd()), off, n, flags)
}

// Allocate implements Allocator with fallocate(2) (mode 0: the file grows
// when off+n is beyond its end).
func (f osFile) Allocate(off, n int64) error {
	for {
		err := syscall.Fallocate(int(f.Fd()), 0, off, n)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EOPNOTSUPP {
			return allocateByWriting(f, off, n)
		}
		if err != nil {
			return &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
		}
		return nil
	}
}
