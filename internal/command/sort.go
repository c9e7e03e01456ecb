package command

import (
	"bufio"
	"bytes"
	"container/heap"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// External sort for find. Documents are collected with their sort keys
// (query.Sort.Key: byte order is MongoDB's order). While they fit in
// sortMemoryBudget they stay in memory; beyond it each full batch is sorted
// and written to a temporary file as a run, and the result is a k-way merge
// of the runs, so a sort holds at most the budget in memory whatever the
// input size. With a limit, only the best skip+limit documents are kept
// (a top-k), which never spills. Ties keep scan order: runs are written in
// scan order and the merge prefers the earlier run.

// sortMemoryBudget is MongoDB's internalQueryMaxBlockingSortMemoryUsageBytes.
var sortMemoryBudget int64 = 100 * 1024 * 1024

type sortItem struct {
	key []byte
	doc bson.Doc
}

type sorter struct {
	items     []sortItem
	bytes     int64
	keep      int64 // top-k size, 0 = all
	allowDisk bool
	runs      []string
	dir       string
	// parent is where the run directory is made.
	parent string
}

func (s *sorter) sortItems() {
	sort.SliceStable(s.items, func(i, j int) bool { return bytes.Compare(s.items[i].key, s.items[j].key) < 0 })
}

// add takes a copy of doc with its key.
func (s *sorter) add(key []byte, doc bson.Doc) error {
	s.items = append(s.items, sortItem{key: key, doc: bson.Doc(append([]byte(nil), doc...))})
	s.bytes += int64(len(key) + len(doc))
	if s.keep > 0 && int64(len(s.items)) >= 2*s.keep+64 {
		s.sortItems()
		clear(s.items[s.keep:])
		s.items = s.items[:s.keep]
		s.bytes = 0
		for _, it := range s.items {
			s.bytes += int64(len(it.key) + len(it.doc))
		}
	}
	if s.bytes <= sortMemoryBudget {
		return nil
	}
	if !s.allowDisk {
		return mongoerr.New(mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed, "Executor error during find command :: caused by :: Sort exceeded memory limit of %d bytes, but did not opt in to external sorting.", sortMemoryBudget)
	}
	return s.spill()
}

// spill writes the sorted in-memory items as a run.
func (s *sorter) spill() error {
	s.sortItems()
	if s.dir == "" {
		d, err := os.MkdirTemp(s.parent, "cairn-sort-")
		if err != nil {
			return fmt.Errorf("sort: %w", err)
		}
		s.dir = d
	}
	f, err := os.CreateTemp(s.dir, "run-")
	if err != nil {
		return fmt.Errorf("sort: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var hdr [8]byte
	for _, it := range s.items {
		binary.LittleEndian.PutUint32(hdr[:4], uint32(len(it.key)))
		binary.LittleEndian.PutUint32(hdr[4:], uint32(len(it.doc)))
		w.Write(hdr[:])
		w.Write(it.key)
		w.Write(it.doc)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("sort: writing a run: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("sort: %w", err)
	}
	s.runs = append(s.runs, f.Name())
	clear(s.items)
	s.items = s.items[:0]
	s.bytes = 0
	return nil
}

// finish returns the documents in order.
func (s *sorter) finish() (sortedStream, error) {
	s.sortItems()
	if len(s.runs) == 0 {
		return &memStream{items: s.items}, nil
	}
	if len(s.items) > 0 {
		if err := s.spill(); err != nil {
			return nil, err
		}
	}
	m := &mergeStream{dir: s.dir}
	for i, name := range s.runs {
		f, err := os.Open(name)
		if err != nil {
			m.close()
			return nil, fmt.Errorf("sort: %w", err)
		}
		r := &runReader{f: f, r: bufio.NewReaderSize(f, 256<<10), idx: i}
		m.files = append(m.files, f)
		if ok, err := r.next(); err != nil {
			m.close()
			return nil, err
		} else if ok {
			m.h = append(m.h, r)
		}
	}
	heap.Init(&m.h)
	return m, nil
}

// sortedStream yields sorted documents; a document is valid until the next
// call.
type sortedStream interface {
	next() (bson.Doc, error) // nil at the end
	close()
}

type memStream struct {
	items []sortItem
	pos   int
}

func (m *memStream) next() (bson.Doc, error) {
	if m.pos >= len(m.items) {
		return nil, nil
	}
	d := m.items[m.pos].doc
	m.items[m.pos] = sortItem{}
	m.pos++
	return d, nil
}

func (m *memStream) close() { m.items = nil }

type runReader struct {
	f        *os.File
	r        *bufio.Reader
	idx      int
	key, doc []byte
}

func (r *runReader) next() (bool, error) {
	var hdr [8]byte
	if _, err := io.ReadFull(r.r, hdr[:]); err != nil {
		if err == io.EOF {
			return false, nil
		}
		return false, fmt.Errorf("sort: reading a run: %w", err)
	}
	kl, dl := binary.LittleEndian.Uint32(hdr[:4]), binary.LittleEndian.Uint32(hdr[4:])
	buf := make([]byte, kl+dl)
	if _, err := io.ReadFull(r.r, buf); err != nil {
		return false, fmt.Errorf("sort: reading a run: %w", err)
	}
	r.key, r.doc = buf[:kl], buf[kl:]
	return true, nil
}

type runHeap []*runReader

func (h runHeap) Len() int { return len(h) }
func (h runHeap) Less(i, j int) bool {
	if c := bytes.Compare(h[i].key, h[j].key); c != 0 {
		return c < 0
	}
	return h[i].idx < h[j].idx
}
func (h runHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)   { *h = append(*h, x.(*runReader)) }
func (h *runHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type mergeStream struct {
	h     runHeap
	files []*os.File
	dir   string
}

func (m *mergeStream) next() (bson.Doc, error) {
	if len(m.h) == 0 {
		return nil, nil
	}
	top := m.h[0]
	doc := top.doc
	ok, err := top.next()
	if err != nil {
		return nil, err
	}
	if ok {
		heap.Fix(&m.h, 0)
	} else {
		heap.Pop(&m.h)
	}
	return doc, nil
}

func (m *mergeStream) close() {
	for _, f := range m.files {
		f.Close()
	}
	m.files, m.h = nil, nil
	if m.dir != "" {
		os.RemoveAll(m.dir)
	}
}

// sortedSource serves a finished sort to a cursor: skip, limit, projection.
type sortedSource struct {
	stream  sortedStream
	spec    *findSpec
	skip    int64
	pending bson.Doc // a document the last batch could not take
	buf     []byte
}

func (s *sortedSource) Close() { s.stream.close() }

func (s *sortedSource) Fill(ctx context.Context, emit func(bson.Doc) bool) (bool, error) {
	for {
		d := s.pending
		s.pending = nil
		if d == nil {
			var err error
			if d, err = s.stream.next(); err != nil {
				return false, err
			}
			if d == nil {
				return true, nil
			}
			if s.skip > 0 {
				s.skip--
				continue
			}
			if s.spec.proj != nil {
				var md query.MatchDetails
				s.spec.filter.MatchDetails(d, &md)
				out, err := s.spec.proj.Apply(s.buf[:0], d, &md)
				if err != nil {
					return false, err
				}
				s.buf = out
				d = out
			}
		}
		if !emit(d) {
			s.pending = bson.Doc(append([]byte(nil), d...))
			return false, nil
		}
	}
}
