package vfs

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
)

// OS is the operating-system file system.
type OS struct{}

type osFile struct{ *os.File }

func (f osFile) Datasync() error { return datasync(f.File) }

func (f osFile) Size() (int64, error) {
	fi, err := f.File.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// OpenFile implements FS.
func (OS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

// Remove implements FS.
func (OS) Remove(name string) error { return os.Remove(name) }

// MkdirAll implements FS.
func (OS) MkdirAll(dir string, perm os.FileMode) error { return os.MkdirAll(dir, perm) }

// Stat implements FS.
func (OS) Stat(name string) (os.FileInfo, error) { return os.Stat(name) }

// SyncDir implements FS.
func (OS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("vfs: sync dir %s: %w", dir, err)
	}
	return nil
}

type osLock struct{ f *os.File }

func (l osLock) Close() error {
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	return l.f.Close()
}

// Lock implements FS with flock(2). The holder writes its pid into the file
// so that a failed Lock can name it.
func (OS) Lock(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		buf, _ := io.ReadAll(io.LimitReader(f, 64))
		f.Close()
		holder := "unknown process"
		if pid, perr := strconv.Atoi(string(bytes.TrimSpace(buf))); perr == nil {
			holder = "pid " + strconv.Itoa(pid)
		}
		return nil, fmt.Errorf("%w: %s is held by %s: %v", ErrLocked, name, holder, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return osLock{f}, nil
}

// allocateByWriting reserves off..off+n of f by writing zeros over the part
// beyond its current end (for file systems without fallocate).
func allocateByWriting(f File, off, n int64) error {
	size, err := f.Size()
	if err != nil {
		return err
	}
	from := max(size, off)
	zeros := make([]byte, min(n, 1<<20))
	for p := from; p < off+n; p += int64(len(zeros)) {
		c := min(int64(len(zeros)), off+n-p)
		if _, err := f.WriteAt(zeros[:c], p); err != nil {
			return err
		}
	}
	return nil
}
