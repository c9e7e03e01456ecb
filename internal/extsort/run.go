package extsort

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
)

// Stats counts what a sort spilled: runs written and their bytes. One
// Stats may be shared by several sorts (the stages of a pipeline, the
// workers of an index build); it is safe for concurrent use.
type Stats struct {
	runs, bytes atomic.Int64
}

// Runs is how many runs were written.
func (s *Stats) Runs() int64 {
	if s == nil {
		return 0
	}
	return s.runs.Load()
}

// Bytes is how many bytes the runs took on disk.
func (s *Stats) Bytes() int64 {
	if s == nil {
		return 0
	}
	return s.bytes.Load()
}

// Spilled reports whether anything was written to disk (explain's and
// the slow query log's usedDisk).
func (s *Stats) Spilled() bool { return s.Runs() > 0 }

// Spill owns the runs of one sort: it creates them in its directory and
// Close removes them. A run's file is unlinked as soon as it is created
// (its space returns when it is closed), so that neither an error, a
// cancellation nor a crash leaves a file behind; where the system refuses
// to unlink an open file, closing the run removes it. Safe for concurrent
// use.
type Spill struct {
	dir   string
	stats *Stats

	mu     sync.Mutex
	mkdir  bool
	runs   []*Run
	closed bool
}

// NewSpill returns a Spill whose runs go to dir (created on first use;
// "" is os.TempDir()), counting in stats (nil: a Stats of its own).
func NewSpill(dir string, stats *Stats) *Spill {
	if dir == "" {
		dir = os.TempDir()
	}
	if stats == nil {
		stats = &Stats{}
	}
	return &Spill{dir: dir, stats: stats}
}

// Stats is what the spill counts in.
func (s *Spill) Stats() *Stats { return s.stats }

// Create starts a new run.
func (s *Spill) Create() (*Writer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("extsort: spill used after Close")
	}
	if !s.mkdir {
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return nil, fmt.Errorf("extsort: creating the spill directory: %w", err)
		}
		s.mkdir = true
	}
	f, err := os.CreateTemp(s.dir, "cairn-sort-*")
	if err != nil {
		return nil, fmt.Errorf("extsort: creating a run: %w", err)
	}
	r := &Run{f: f}
	if os.Remove(f.Name()) != nil {
		r.name = f.Name() // removed when the run is closed
	}
	s.runs = append(s.runs, r)
	return &Writer{s: s, run: r, w: bufio.NewWriterSize(f, writeBuffer)}, nil
}

// Close closes every run and removes what is left of their files.
func (s *Spill) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.runs {
		r.Close()
	}
	s.runs, s.closed = nil, true
}

// OpenRuns is how many runs are open (tests check Close releases them).
func (s *Spill) OpenRuns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.runs {
		if r.f != nil {
			n++
		}
	}
	return n
}

// writeBuffer is a Writer's buffer size.
const writeBuffer = 256 << 10

// maxRecord bounds a record's key plus value (a corrupt length is
// reported instead of allocated).
const maxRecord = 1 << 30

// Writer writes one run: records (uvarint key length, uvarint value
// length, key, value) in the order they are added, which the caller
// makes its sort order.
type Writer struct {
	s   *Spill
	run *Run
	w   *bufio.Writer
	hdr [2 * binary.MaxVarintLen64]byte
	err error
}

// WriteRun writes items, already in key order, as one run of sp.
func (sp *Spill) WriteRun(items []Item) (*Run, error) {
	w, err := sp.Create()
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		if err := w.Add(it.Key, it.Val); err != nil {
			break // Finish reports it
		}
	}
	return w.Finish()
}

// Add appends a record.
func (w *Writer) Add(key, val []byte) error {
	if w.err != nil {
		return w.err
	}
	if len(key)+len(val) > maxRecord {
		w.err = fmt.Errorf("extsort: a record of %d bytes is over the limit of %d", len(key)+len(val), maxRecord)
		return w.err
	}
	n := binary.PutUvarint(w.hdr[:], uint64(len(key)))
	n += binary.PutUvarint(w.hdr[n:], uint64(len(val)))
	w.w.Write(w.hdr[:n])
	w.w.Write(key)
	if _, err := w.w.Write(val); err != nil {
		w.err = fmt.Errorf("extsort: writing a run: %w", err)
	}
	w.run.size += int64(n + len(key) + len(val))
	w.run.n++
	return w.err
}

// Finish flushes the run and returns it, ready to be read.
func (w *Writer) Finish() (*Run, error) {
	if w.err == nil {
		if err := w.w.Flush(); err != nil {
			w.err = fmt.Errorf("extsort: writing a run: %w", err)
		}
	}
	if w.err != nil {
		w.run.Close()
		return nil, w.err
	}
	w.s.stats.runs.Add(1)
	w.s.stats.bytes.Add(w.run.size)
	return w.run, nil
}

// Run is a sorted run on disk.
type Run struct {
	f    *os.File
	name string // set when the file could not be unlinked at once
	size int64
	n    int64
}

// Len is how many records the run holds.
func (r *Run) Len() int64 { return r.n }

// Close releases the run's file (Spill.Close closes every run; closing a
// run early returns its space sooner).
func (r *Run) Close() {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
	if r.name != "" {
		os.Remove(r.name)
		r.name = ""
	}
}

// Open returns a reader of the run from its start, with a buffer of
// bufSize bytes, positioned on its first record. With retain, the records
// it returns stay valid for good (carved from shared blocks); without,
// each is valid until the reader advances, and a record that fits the
// buffer is served from it without a copy.
func (r *Run) Open(bufSize int, retain bool) (*Reader, error) {
	if r.f == nil {
		return nil, errors.New("extsort: reading a closed run")
	}
	rd := &Reader{r: bufio.NewReaderSize(io.NewSectionReader(r.f, 0, r.size), bufSize), retain: retain}
	return rd, rd.Advance()
}

// Reader streams a run's records; it is a Source.
type Reader struct {
	r        *bufio.Reader
	retain   bool
	key, val []byte
	ok       bool
	peeked   int    // bytes of the current record still in r's buffer
	buf      []byte // the current record, when not served from r's buffer
	slab     []byte // with retain: the block records are carved from
}

// Head is the current record (ok false at the end).
func (rd *Reader) Head() (key, val []byte, ok bool) { return rd.key, rd.val, rd.ok }

// Advance moves to the next record.
func (rd *Reader) Advance() error {
	if rd.peeked > 0 {
		if _, err := rd.r.Discard(rd.peeked); err != nil {
			return fmt.Errorf("extsort: reading a run: %w", err)
		}
		rd.peeked = 0
	}
	hdr, err := rd.r.Peek(2 * binary.MaxVarintLen64)
	if len(hdr) == 0 {
		rd.key, rd.val, rd.ok = nil, nil, false
		if err == io.EOF {
			return nil
		}
		return fmt.Errorf("extsort: reading a run: %w", err)
	}
	kl, n1 := binary.Uvarint(hdr)
	if n1 <= 0 {
		return errors.New("extsort: corrupt run")
	}
	vl, n2 := binary.Uvarint(hdr[n1:])
	if n2 <= 0 || kl+vl > maxRecord {
		return errors.New("extsort: corrupt run")
	}
	h, total := n1+n2, n1+n2+int(kl+vl)
	if !rd.retain && total <= rd.r.Size() {
		b, err := rd.r.Peek(total)
		if err != nil {
			return fmt.Errorf("extsort: reading a run: %w", unexpected(err))
		}
		rd.key = b[h : h+int(kl) : h+int(kl)]
		rd.val = b[h+int(kl) : total : total]
		rd.peeked, rd.ok = total, true
		return nil
	}
	if _, err := rd.r.Discard(h); err != nil {
		return fmt.Errorf("extsort: reading a run: %w", err)
	}
	var b []byte
	if rd.retain {
		b = slabBytes(&rd.slab, int(kl+vl))
	} else {
		if cap(rd.buf) < int(kl+vl) {
			rd.buf = make([]byte, kl+vl)
		}
		b = rd.buf[:kl+vl]
	}
	if _, err := io.ReadFull(rd.r, b); err != nil {
		return fmt.Errorf("extsort: reading a run: %w", unexpected(err))
	}
	rd.key, rd.val, rd.ok = b[:kl:kl], b[kl:], true
	return nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// slabSize is the size of the blocks slabBytes carves.
const slabSize = 64 << 10

// slabBytes returns a slice of n bytes carved from the block *slab (a new
// block when it has too little room), so that many small records share
// one allocation. A block stays alive while any slice of it does.
func slabBytes(slab *[]byte, n int) []byte {
	if n > slabSize/8 {
		return make([]byte, n)
	}
	if cap(*slab)-len(*slab) < n {
		*slab = make([]byte, 0, slabSize)
	}
	l := len(*slab)
	*slab = (*slab)[:l+n]
	return (*slab)[l : l+n : l+n]
}
