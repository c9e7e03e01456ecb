package index

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sync"
)

// External merge sort for builds larger than the memory budget: when a
// worker's runs outgrow its share of the budget, each run is sorted and
// written to a temporary file as records (uvarint key length, uvarint
// value length, key, value), and the worker starts afresh. The load then
// merges the files with the runs still in memory.

// DefaultBuildMemory is BuildOptions.MemoryBudget's default, MongoDB's
// maxIndexBuildMemoryUsageMegabytes (200 MB).
const DefaultBuildMemory = 200 << 20

// entryOverhead is the memory an entry costs besides its bytes.
const entryOverhead = 16

// spillDir creates the build's temporary directory on first use.
type spillDir struct {
	once   sync.Once
	parent string
	dir    string
	err    error
}

func (s *spillDir) get() (string, error) {
	s.once.Do(func() {
		if err := os.MkdirAll(s.parent, 0o700); err != nil {
			s.err = fmt.Errorf("index build spill directory: %w", err)
			return
		}
		s.dir, s.err = os.MkdirTemp(s.parent, "indexbuild-")
		if s.err != nil {
			s.err = fmt.Errorf("index build spill directory: %w", s.err)
		}
	})
	return s.dir, s.err
}

func (s *spillDir) remove() {
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// memSize is the memory the worker's runs hold.
func (x *extractor) memSize() int {
	n := 0
	for i := range x.runs {
		n += len(x.runs[i].arena) + entryOverhead*len(x.runs[i].es)
	}
	return n
}

// spill sorts each run and writes it to a file, emptying the runs.
func (x *extractor) spill() error {
	dir, err := x.spillDir.get()
	if err != nil {
		return err
	}
	for ti := range x.runs {
		r := &x.runs[ti]
		if len(r.es) == 0 {
			continue
		}
		r.sort()
		f, err := os.CreateTemp(dir, "run-")
		if err != nil {
			return fmt.Errorf("index build spill: %w", err)
		}
		w := bufio.NewWriterSize(f, 256<<10)
		var hdr [2 * binary.MaxVarintLen64]byte
		unique := x.targets[ti].Spec.Unique
		for _, e := range r.es {
			k, v := r.key(e), r.value(e, unique)
			n := binary.PutUvarint(hdr[:], uint64(len(k)))
			n += binary.PutUvarint(hdr[n:], uint64(len(v)))
			w.Write(hdr[:n])
			w.Write(k)
			w.Write(v)
		}
		if err := w.Flush(); err != nil {
			f.Close()
			return fmt.Errorf("index build spill: %w", err)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			f.Close()
			return fmt.Errorf("index build spill: %w", err)
		}
		x.files[ti] = append(x.files[ti], f)
		x.spilled[ti] += int64(len(r.es))
		r.arena, r.es = r.arena[:0], r.es[:0]
	}
	return nil
}

// source is one sorted stream of entries the load merges.
type source interface {
	// head is the current entry (ok false at the end); the slices are
	// valid until advance.
	head() (key, val []byte, pfx uint64, ok bool)
	advance() error
}

// memSource streams a sorted in-memory run.
type memSource struct {
	r      *run
	i      int
	unique bool
}

func (m *memSource) head() ([]byte, []byte, uint64, bool) {
	if m.i == len(m.r.es) {
		return nil, nil, 0, false
	}
	e := m.r.es[m.i]
	return m.r.key(e), m.r.value(e, m.unique), e.pfx, true
}

func (m *memSource) advance() error { m.i++; return nil }

// fileSource streams a spilled run.
type fileSource struct {
	f        *os.File
	br       *bufio.Reader
	key, val []byte
	pfx      uint64
	ok       bool
}

func newFileSource(f *os.File) (*fileSource, error) {
	s := &fileSource{f: f, br: bufio.NewReaderSize(f, 128<<10)}
	return s, s.advance()
}

func (s *fileSource) head() ([]byte, []byte, uint64, bool) { return s.key, s.val, s.pfx, s.ok }

func (s *fileSource) advance() error {
	kl, err := binary.ReadUvarint(s.br)
	if err == io.EOF {
		s.ok = false
		return nil
	}
	if err != nil {
		return fmt.Errorf("index build spill: %w", err)
	}
	vl, err := binary.ReadUvarint(s.br)
	if err != nil {
		return fmt.Errorf("index build spill: %w", err)
	}
	n := int(kl + vl)
	if cap(s.key) < n {
		s.key = make([]byte, n, max(n, 2*cap(s.key)))
	}
	buf := s.key[:n]
	if _, err := io.ReadFull(s.br, buf); err != nil {
		return fmt.Errorf("index build spill: %w", err)
	}
	s.key, s.val = buf[:kl:kl], buf[kl:]
	s.pfx = keyPrefix(s.key)
	s.ok = true
	return nil
}
