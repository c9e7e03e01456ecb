package vfs

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func write(t *testing.T, f File, off int64, s string) {
	t.Helper()
	if _, err := f.WriteAt([]byte(s), off); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, fs *Mem, name string) string {
	t.Helper()
	b, err := fs.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMemCrashKeepsOnlySynced(t *testing.T) {
	fs := NewMem()
	fs.MkdirAll("/d", 0o755)
	f, err := fs.OpenFile("/d/f", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	write(t, f, 0, "hello")
	if err := f.Datasync(); err != nil {
		t.Fatal(err)
	}
	write(t, f, 5, " world")
	write(t, f, 0, "J")
	if got := read(t, fs, "/d/f"); got != "Jello world" {
		t.Fatalf("before crash %q", got)
	}
	fs.Crash(CrashOptions{})
	if got := read(t, fs, "/d/f"); got != "hello" {
		t.Fatalf("after crash %q, want only the synced %q", got, "hello")
	}
	if _, err := f.WriteAt([]byte("x"), 0); !errors.Is(err, ErrCrashed) {
		t.Fatalf("old handle after crash: %v", err)
	}
	if _, err := f.ReadAt(make([]byte, 1), 0); !errors.Is(err, ErrCrashed) {
		t.Fatalf("old handle read after crash: %v", err)
	}
}

func TestMemCrashKeepsRandomSubset(t *testing.T) {
	seen := map[string]bool{}
	for seed := uint64(0); seed < 64; seed++ {
		fs := NewMem()
		fs.MkdirAll("/", 0o755)
		f, _ := fs.OpenFile("/f", os.O_RDWR|os.O_CREATE, 0o644)
		write(t, f, 0, "aaaa")
		f.Sync()
		write(t, f, 0, "b")
		write(t, f, 1, "c")
		write(t, f, 4, "dddd")
		fs.Crash(CrashOptions{KeepUnsynced: 0.5, Tear: true, Rand: rand.New(rand.NewPCG(seed, 1))})
		got := read(t, fs, "/f")
		if !strings.HasPrefix(got, "a") && !strings.HasPrefix(got, "b") {
			t.Fatalf("impossible content %q", got)
		}
		seen[got] = true
	}
	if len(seen) < 4 {
		t.Fatalf("crash outcomes not random enough: %v", seen)
	}
}

func TestMemTruncateAndLock(t *testing.T) {
	fs := NewMem()
	fs.MkdirAll("/d", 0o755)
	f, _ := fs.OpenFile("/d/f", os.O_RDWR|os.O_CREATE, 0o644)
	write(t, f, 0, "0123456789")
	f.Sync()
	f.Truncate(4)
	write(t, f, 8, "x")
	if got := read(t, fs, "/d/f"); got != "0123\x00\x00\x00\x00x" {
		t.Fatalf("truncate+extend %q", got)
	}
	l, err := fs.Lock("/d/LOCK")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Lock("/d/LOCK"); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock: %v", err)
	}
	l.Close()
	if l2, err := fs.Lock("/d/LOCK"); err != nil {
		t.Fatal(err)
	} else {
		l2.Close()
	}
	if _, err := fs.OpenFile("/nodir/f", os.O_RDWR|os.O_CREATE, 0o644); err == nil {
		t.Fatal("create in missing dir succeeded")
	}
}

func TestFaultInjection(t *testing.T) {
	mem := NewMem()
	mem.MkdirAll("/", 0o755)
	fs := NewFault(mem)
	f, _ := fs.OpenFile("/f", os.O_RDWR|os.O_CREATE, 0o644)
	eio := errors.New("EIO")
	fs.SetSyncError(func(string) error { return eio })
	if err := f.Datasync(); !errors.Is(err, eio) {
		t.Fatalf("datasync: %v", err)
	}
	if err := f.Sync(); !errors.Is(err, eio) {
		t.Fatalf("sync: %v", err)
	}
	fs.SetSyncError(nil)
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	fs.SetWriteHook(func(name string, off int64, n int) (int, error) { return n / 2, errors.New("short") })
	n, err := f.WriteAt([]byte("abcd"), 0)
	if err == nil || n != 2 {
		t.Fatalf("short write: %d %v", n, err)
	}
	fs.SetWriteHook(NoSpaceAfter(6))
	if _, err := f.WriteAt([]byte("1234"), 0); err != nil {
		t.Fatal(err)
	}
	n, err = f.WriteAt([]byte("5678"), 4)
	if !errors.Is(err, syscall.ENOSPC) || n != 2 {
		t.Fatalf("ENOSPC: %d %v", n, err)
	}
	if got := read(t, mem, "/f"); got != "123456" {
		t.Fatalf("content %q", got)
	}
}

func TestOSLockNamesHolder(t *testing.T) {
	dir := t.TempDir()
	fs := OS{}
	l, err := fs.Lock(filepath.Join(dir, "LOCK"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = fs.Lock(filepath.Join(dir, "LOCK"))
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid") {
		t.Fatalf("second lock: %v", err)
	}
	f, err := fs.OpenFile(filepath.Join(dir, "f"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteAt([]byte("data"), 0)
	if err := f.Datasync(); err != nil {
		t.Fatal(err)
	}
	if sz, _ := f.Size(); sz != 4 {
		t.Fatalf("size %d", sz)
	}
	b := make([]byte, 4)
	f.ReadAt(b, 0)
	if !bytes.Equal(b, []byte("data")) {
		t.Fatal(string(b))
	}
	if err := fs.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
}

// TestMemCapacity: a Mem with a capacity refuses growth beyond it with
// ENOSPC (short writes, refused allocations and truncations), counts every
// file, and gives space back on shrink, removal and crash.
func TestMemCapacity(t *testing.T) {
	mem := NewMem()
	mem.SetCapacity(100)
	f, _ := mem.OpenFile("/a", os.O_RDWR|os.O_CREATE, 0o644)
	g, _ := mem.OpenFile("/b", os.O_RDWR|os.O_CREATE, 0o644)
	steps := []struct {
		name    string
		do      func() (int, error)
		wantN   int
		noSpace bool
		used    int64
	}{
		{"write within", func() (int, error) { return f.WriteAt(make([]byte, 60), 0) }, 60, false, 60},
		{"overwrite costs nothing", func() (int, error) { return f.WriteAt(make([]byte, 60), 0) }, 60, false, 60},
		{"short write at the limit", func() (int, error) { return g.WriteAt(make([]byte, 50), 0) }, 40, true, 100},
		{"nothing fits", func() (int, error) { return g.WriteAt([]byte("x"), 40) }, 0, true, 100},
		{"write past a gap that does not fit", func() (int, error) { return g.WriteAt([]byte("x"), 70) }, 0, true, 100},
		{"allocate refused", func() (int, error) { return 0, f.(Allocator).Allocate(0, 61) }, 0, true, 100},
		{"shrink frees", func() (int, error) { return 0, f.Truncate(10) }, 0, false, 50},
		{"allocate grows", func() (int, error) { return 0, f.(Allocator).Allocate(0, 30) }, 0, false, 70},
		{"allocate inside is free", func() (int, error) { return 0, f.(Allocator).Allocate(5, 20) }, 0, false, 70},
		{"truncate up refused", func() (int, error) { return 0, g.Truncate(80) }, 0, true, 70},
		{"remove frees", func() (int, error) { return 0, mem.Remove("/b") }, 0, false, 30},
	}
	for _, s := range steps {
		n, err := s.do()
		if n != s.wantN || IsNoSpace(err) != s.noSpace || (!s.noSpace && err != nil) {
			t.Fatalf("%s: n %d err %v, want n %d noSpace %v", s.name, n, err, s.wantN, s.noSpace)
		}
		if u := mem.Used(); u != s.used {
			t.Fatalf("%s: used %d, want %d", s.name, u, s.used)
		}
	}
	if sz, _ := f.Size(); sz != 30 {
		t.Fatalf("size after allocate %d", sz)
	}
	// A crash drops the unsynced growth and recounts.
	mem.Crash(CrashOptions{})
	if u := mem.Used(); u != 0 {
		t.Fatalf("used after crash %d", u)
	}
	// Fault passes allocations through and budgets them like writes.
	fault := NewFault(mem)
	h, _ := fault.OpenFile("/c", os.O_RDWR|os.O_CREATE, 0o644)
	fault.SetWriteHook(NoSpaceAfter(10))
	if err := h.(Allocator).Allocate(0, 11); !IsNoSpace(err) {
		t.Fatalf("allocate beyond the hook's budget: %v", err)
	}
	fault.SetWriteHook(NoSpaceAfter(10)) // the refused request used the budget up
	if err := h.(Allocator).Allocate(0, 10); err != nil {
		t.Fatalf("allocate within: %v", err)
	}
	if sz, _ := h.Size(); sz != 10 {
		t.Fatalf("size %d", sz)
	}
}

func TestOSAllocate(t *testing.T) {
	f, err := OS{}.OpenFile(filepath.Join(t.TempDir(), "f"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.(Allocator).Allocate(0, 1<<20); err != nil {
		t.Fatal(err)
	}
	if sz, _ := f.Size(); sz != 1<<20 {
		t.Fatalf("size %d", sz)
	}
}
