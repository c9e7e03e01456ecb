package vfs

import (
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"sync"
	"syscall"
	"time"
)

// Mem is an in-memory file system that tracks durability. Every file keeps
// the bytes made durable by its last Sync/Datasync plus the list of writes
// and truncations issued since. Crash simulates a power loss: each file goes
// back to its durable image, optionally with a random subset of the pending
// writes applied (possibly torn), and every handle open before the crash
// stops working.
//
// Directory entries are treated as durable as soon as they are created.
//
// SetCapacity bounds the bytes all files may hold together (the sum of
// their current sizes, as a file system without sparse files counts them):
// a write or truncation that would grow past it fails with ENOSPC (a write
// is short: the part that fits is written), as on a small disk.
type Mem struct {
	mu    sync.Mutex
	files map[string]*memNode
	dirs  map[string]bool
	locks map[string]*memLock
	gen   uint64 // bumped by Crash; handles of older generations are dead

	// capMu guards capacity and used; taken after a node's lock.
	capMu    sync.Mutex
	capacity int64 // 0: unlimited
	used     int64 // sum of len(data) of all files
}

// SetCapacity limits the total size of all files to bytes (0: unlimited).
// Files already larger keep their data; only growth is refused.
func (m *Mem) SetCapacity(bytes int64) {
	m.capMu.Lock()
	m.capacity = bytes
	m.capMu.Unlock()
}

// Used returns the bytes all files hold together.
func (m *Mem) Used() int64 {
	m.capMu.Lock()
	defer m.capMu.Unlock()
	return m.used
}

// grow accounts for a file growing from old to new bytes and returns how
// many of the requested bytes fit (new-old when all do). Called with the
// node's lock held.
func (m *Mem) grow(old, new int64) int64 {
	m.capMu.Lock()
	defer m.capMu.Unlock()
	d := new - old
	if d > 0 && m.capacity > 0 && m.used+d > m.capacity {
		d = max(m.capacity-m.used, 0)
	}
	m.used += d
	return d
}

func errNoSpace(op, name string) error {
	return &fs.PathError{Op: op, Path: name, Err: syscall.ENOSPC}
}

// NewMem returns an empty in-memory file system.
func NewMem() *Mem {
	return &Mem{files: map[string]*memNode{}, dirs: map[string]bool{"/": true, ".": true}, locks: map[string]*memLock{}}
}

type memOp struct {
	off      int64
	data     []byte // nil for a truncation
	truncate bool
	size     int64 // for a truncation
}

type memNode struct {
	mu      sync.RWMutex
	data    []byte
	durable []byte
	pending []memOp
}

func clean(name string) string { return path.Clean(name) }

type memFile struct {
	fs   *Mem
	node *memNode
	name string
	gen  uint64
	ro   bool
}

func (m *Mem) alive(gen uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.gen == gen
}

// OpenFile implements FS.
func (m *Mem) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.dirs[path.Dir(name)] {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	n, ok := m.files[name]
	if !ok {
		if flag&os.O_CREATE == 0 {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		n = &memNode{}
		m.files[name] = n
	} else if flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0 {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrExist}
	}
	f := &memFile{fs: m, node: n, name: name, gen: m.gen, ro: flag&(os.O_WRONLY|os.O_RDWR) == 0}
	if flag&os.O_TRUNC != 0 {
		n.mu.Lock()
		m.grow(int64(len(n.data)), 0)
		n.data = n.data[:0]
		n.pending = append(n.pending, memOp{truncate: true, size: 0})
		n.mu.Unlock()
	}
	return f, nil
}

// Remove implements FS.
func (m *Mem) Remove(name string) error {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.files[name]
	if !ok {
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	delete(m.files, name)
	n.mu.Lock()
	m.grow(int64(len(n.data)), 0)
	n.mu.Unlock()
	return nil
}

// MkdirAll implements FS.
func (m *Mem) MkdirAll(dir string, perm os.FileMode) error {
	dir = clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	for d := dir; ; d = path.Dir(d) {
		m.dirs[d] = true
		if d == "/" || d == "." {
			break
		}
	}
	return nil
}

type memInfo struct {
	name string
	size int64
	dir  bool
}

func (i memInfo) Name() string { return path.Base(i.name) }
func (i memInfo) Size() int64  { return i.size }
func (i memInfo) Mode() os.FileMode {
	return map[bool]os.FileMode{true: os.ModeDir | 0o755, false: 0o644}[i.dir]
}
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }

// Stat implements FS.
func (m *Mem) Stat(name string) (os.FileInfo, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dirs[name] {
		return memInfo{name: name, dir: true}, nil
	}
	n, ok := m.files[name]
	if !ok {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	return memInfo{name: name, size: int64(len(n.data))}, nil
}

// SyncDir implements FS (directory entries are always durable in Mem).
func (m *Mem) SyncDir(dir string) error { return nil }

type memLock struct {
	m    *Mem
	name string
	gen  uint64
}

func (l *memLock) Close() error {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	if cur := l.m.locks[l.name]; cur == l {
		delete(l.m.locks, l.name)
	}
	return nil
}

// Lock implements FS. Locks do not survive Crash.
func (m *Mem) Lock(name string) (io.Closer, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, held := m.locks[name]; held {
		return nil, fmt.Errorf("%w: %s is held by this process (pid %d)", ErrLocked, name, os.Getpid())
	}
	l := &memLock{m: m, name: name, gen: m.gen}
	m.locks[name] = l
	if _, ok := m.files[name]; !ok {
		m.files[name] = &memNode{}
	}
	return l, nil
}

// CrashOptions tune Crash.
type CrashOptions struct {
	// KeepUnsynced is the probability that each write issued since the
	// last sync of its file survives the crash anyway.
	KeepUnsynced float64
	// Tear allows a surviving unsynced write to survive only partly.
	Tear bool
	// Rand is the random source; nil means a fixed seed.
	Rand *rand.Rand
}

// Crash simulates a power loss. Every file reverts to its durable image;
// with o.KeepUnsynced > 0 some pending writes are applied anyway (in issue
// order, each independently). All handles and locks from before the crash
// become invalid.
func (m *Mem) Crash(o CrashOptions) {
	rng := o.Rand
	if rng == nil {
		rng = rand.New(rand.NewPCG(1, 2))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	m.locks = map[string]*memLock{}
	m.capMu.Lock()
	m.used = 0
	m.capMu.Unlock()
	defer func() {
		var used int64
		for _, n := range m.files {
			n.mu.RLock()
			used += int64(len(n.data))
			n.mu.RUnlock()
		}
		m.capMu.Lock()
		m.used = used
		m.capMu.Unlock()
	}()
	for _, n := range m.files {
		n.mu.Lock()
		img := append([]byte(nil), n.durable...)
		for _, op := range n.pending {
			if o.KeepUnsynced <= 0 || rng.Float64() >= o.KeepUnsynced {
				continue
			}
			if op.truncate {
				img = resize(img, op.size)
				continue
			}
			data := op.data
			if o.Tear && len(data) > 1 && rng.IntN(4) == 0 {
				data = data[:rng.IntN(len(data))]
			}
			img = writeInto(img, op.off, data)
		}
		n.data = img
		n.durable = append([]byte(nil), img...)
		n.pending = nil
		n.mu.Unlock()
	}
}

// Files returns the names of all files.
func (m *Mem) Files() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k := range m.files {
		out = append(out, k)
	}
	return out
}

// ReadFile returns a copy of the current contents of a file.
func (m *Mem) ReadFile(name string) ([]byte, error) {
	m.mu.Lock()
	n, ok := m.files[clean(name)]
	m.mu.Unlock()
	if !ok {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	return append([]byte(nil), n.data...), nil
}

// WriteFile replaces a file's contents durably (for tests that damage
// files).
func (m *Mem) WriteFile(name string, data []byte) error {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.files[name]
	if !ok {
		n = &memNode{}
		m.files[name] = n
	}
	n.mu.Lock()
	m.capMu.Lock()
	m.used += int64(len(data)) - int64(len(n.data))
	m.capMu.Unlock()
	n.data = append([]byte(nil), data...)
	n.durable = append([]byte(nil), data...)
	n.pending = nil
	n.mu.Unlock()
	return nil
}

func resize(b []byte, size int64) []byte {
	if int64(len(b)) >= size {
		clear(b[size:])
		return b[:size]
	}
	return append(b, make([]byte, size-int64(len(b)))...)
}

func writeInto(b []byte, off int64, p []byte) []byte {
	if end := off + int64(len(p)); end > int64(len(b)) {
		if end <= int64(cap(b)) {
			b = b[:end]
		} else {
			nb := make([]byte, end, end+end/4)
			copy(nb, b)
			b = nb
		}
	}
	copy(b[off:], p)
	return b
}

func (f *memFile) check() error {
	if !f.fs.alive(f.gen) {
		return &fs.PathError{Op: "io", Path: f.name, Err: ErrCrashed}
	}
	return nil
}

func (f *memFile) Name() string { return f.name }

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.check(); err != nil {
		return 0, err
	}
	f.node.mu.RLock()
	defer f.node.mu.RUnlock()
	if off >= int64(len(f.node.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.node.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.check(); err != nil {
		return 0, err
	}
	if f.ro {
		return 0, &fs.PathError{Op: "write", Path: f.name, Err: fs.ErrPermission}
	}
	f.node.mu.Lock()
	defer f.node.mu.Unlock()
	var err error
	if size, end := int64(len(f.node.data)), off+int64(len(p)); end > size {
		if got := f.fs.grow(size, end); got < end-size {
			err = errNoSpace("write", f.name)
			p = p[:max(size+got-off, 0)]
			if len(p) == 0 {
				// Nothing fits; a gap before off is not allocated either.
				f.fs.grow(size+got, size)
				return 0, err
			}
		}
	}
	f.node.data = writeInto(f.node.data, off, p)
	f.node.pending = append(f.node.pending, memOp{off: off, data: append([]byte(nil), p...)})
	return len(p), err
}

// Allocate implements Allocator: the file grows (with zeros) to off+n if it
// is shorter, within the capacity; otherwise nothing changes and the error
// is ENOSPC.
func (f *memFile) Allocate(off, n int64) error {
	if err := f.check(); err != nil {
		return err
	}
	f.node.mu.Lock()
	defer f.node.mu.Unlock()
	size, end := int64(len(f.node.data)), off+n
	if end <= size {
		return nil
	}
	if got := f.fs.grow(size, end); got < end-size {
		f.fs.grow(size+got, size)
		return errNoSpace("fallocate", f.name)
	}
	f.node.data = resize(f.node.data, end)
	f.node.pending = append(f.node.pending, memOp{truncate: true, size: end})
	return nil
}

func (f *memFile) Truncate(size int64) error {
	if err := f.check(); err != nil {
		return err
	}
	f.node.mu.Lock()
	defer f.node.mu.Unlock()
	if old := int64(len(f.node.data)); size > old {
		if got := f.fs.grow(old, size); got < size-old {
			f.fs.grow(old+got, old)
			return errNoSpace("truncate", f.name)
		}
	} else {
		f.fs.grow(old, size)
	}
	f.node.data = resize(f.node.data, size)
	f.node.pending = append(f.node.pending, memOp{truncate: true, size: size})
	return nil
}

func (f *memFile) Size() (int64, error) {
	if err := f.check(); err != nil {
		return 0, err
	}
	f.node.mu.RLock()
	defer f.node.mu.RUnlock()
	return int64(len(f.node.data)), nil
}

func (f *memFile) Sync() error {
	if err := f.check(); err != nil {
		return err
	}
	f.node.mu.Lock()
	defer f.node.mu.Unlock()
	d := f.node.durable
	for _, op := range f.node.pending {
		if op.truncate {
			d = resize(d, op.size)
		} else {
			d = writeInto(d, op.off, op.data)
		}
	}
	f.node.durable = d
	f.node.pending = nil
	return nil
}

func (f *memFile) Datasync() error { return f.Sync() }

func (f *memFile) Close() error { return nil }
