package agg

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// item is a document with its ordering key.
type item struct {
	key []byte
	doc bson.Doc
}

func itemBytes(it item) int64 { return int64(len(it.key)+len(it.doc)) + 48 }

func sortItems(items []item) {
	slices.SortStableFunc(items, func(a, b item) int { return bytes.Compare(a.key, b.key) })
}

// errMemory is MongoDB's error for a blocking stage over its memory limit
// without allowDiskUse.
func errMemory(stage string) error {
	return mongoerr.New(mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed, "Exceeded memory limit for %s, but didn't allow external spilling; pass allowDiskUse:true to opt in.", stage)
}

// spiller writes sorted runs of items to temporary files and merges them
// back in key order (ties: earlier runs first, so merging is stable).
type spiller struct {
	dir  string
	runs []*os.File
}

// writeRun sorts items (stably) and writes them as a run.
func (s *spiller) writeRun(items []item) error {
	sortItems(items)
	return s.writeSorted(items)
}

// writeSorted writes items, already in key order, as a run.
func (s *spiller) writeSorted(items []item) error {
	f, err := os.CreateTemp(s.dir, "cairn-agg-spill-*")
	if err != nil {
		return fmt.Errorf("spilling to disk: %w", err)
	}
	os.Remove(f.Name()) // unlinked: the space is returned when f is closed
	s.runs = append(s.runs, f)
	w := bufio.NewWriterSize(f, 1<<16)
	var hdr [4]byte
	for _, it := range items {
		binary.LittleEndian.PutUint32(hdr[:], uint32(len(it.key)))
		w.Write(hdr[:])
		w.Write(it.key)
		if _, err := w.Write(it.doc); err != nil {
			return fmt.Errorf("spilling to disk: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("spilling to disk: %w", err)
	}
	_, err = f.Seek(0, io.SeekStart)
	return err
}

func (s *spiller) close() {
	for _, f := range s.runs {
		f.Close()
	}
	s.runs = nil
}

type runReader struct {
	r    *bufio.Reader
	idx  int
	cur  item
	slab []byte // holds the items read (see slabBytes)
	// peeked is the length of cur when it lies in r's buffer (nextPeek):
	// it is discarded when the reader moves on.
	peeked int
}

// nextPeek is next for a merge whose items are used before the next one
// is asked for (mergeLazy): an item that fits r's buffer is served from
// it without a copy, and stays valid until the reader moves on.
func (rr *runReader) nextPeek() (bool, error) {
	if rr.peeked > 0 {
		if _, err := rr.r.Discard(rr.peeked); err != nil {
			return false, err
		}
		rr.peeked = 0
	}
	hdr, err := rr.r.Peek(4)
	if err != nil {
		if err == io.EOF && len(hdr) == 0 {
			return false, nil
		}
		return false, err
	}
	klen := int(binary.LittleEndian.Uint32(hdr))
	b, err := rr.r.Peek(4 + klen + 4)
	if err == bufio.ErrBufferFull {
		return rr.next()
	} else if err != nil {
		return false, err
	}
	n := int(binary.LittleEndian.Uint32(b[4+klen:]))
	if n < 5 || n > 64<<20 {
		return false, fmt.Errorf("corrupt spill file")
	}
	total := 4 + klen + n
	if b, err = rr.r.Peek(total); err == bufio.ErrBufferFull {
		return rr.next()
	} else if err != nil {
		return false, err
	}
	rr.cur = item{key: b[4 : 4+klen : 4+klen], doc: bson.Doc(b[4+klen : total : total])}
	rr.peeked = total
	return true, nil
}

// slabSize is the size of the blocks slabBytes carves.
const slabSize = 64 << 10

// slabBytes returns an empty slice with capacity n carved from the block
// *slab (a new block when it has too little room), so that many small
// results share one allocation. A block stays alive while any slice of it
// does, so it suits results most of which are dropped soon.
func slabBytes(slab *[]byte, n int) []byte {
	if n > slabSize/8 {
		return make([]byte, 0, n)
	}
	if cap(*slab)-len(*slab) < n {
		*slab = make([]byte, 0, slabSize)
	}
	l := len(*slab)
	*slab = (*slab)[:l+n]
	return (*slab)[l : l : l+n]
}

func (rr *runReader) next() (bool, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(rr.r, hdr[:]); err != nil {
		if err == io.EOF {
			return false, nil
		}
		return false, err
	}
	key := slabBytes(&rr.slab, int(binary.LittleEndian.Uint32(hdr[:])))
	key = key[:cap(key)]
	if _, err := io.ReadFull(rr.r, key); err != nil {
		return false, err
	}
	if _, err := io.ReadFull(rr.r, hdr[:]); err != nil {
		return false, err
	}
	n := binary.LittleEndian.Uint32(hdr[:])
	if n < 5 || n > 64<<20 {
		return false, fmt.Errorf("corrupt spill file")
	}
	doc := slabBytes(&rr.slab, int(n))[:n]
	copy(doc, hdr[:])
	if _, err := io.ReadFull(rr.r, doc[4:]); err != nil {
		return false, err
	}
	rr.cur = item{key: key, doc: doc}
	return true, nil
}

type runHeap []*runReader

func (h runHeap) Len() int { return len(h) }
func (h runHeap) Less(i, j int) bool {
	if c := bytes.Compare(h[i].cur.key, h[j].cur.key); c != 0 {
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

// mergeLazy is merge for a caller that is done with an item when it asks
// for the next one: items are served from the readers' buffers and are
// valid only until the next call.
//
// The readers' buffers share budget bytes (each between 16 KiB and 256
// KiB), so that a merge of many runs stays within its memory.
func (s *spiller) mergeLazy(budget int64) (func() (item, bool, error), error) {
	size := int(min(max(budget/int64(max(len(s.runs), 1)), 16<<10), 256<<10))
	h, err := s.openRuns(size, (*runReader).nextPeek)
	if err != nil {
		return nil, err
	}
	var last *runReader // at the top of the heap: its item was served
	return func() (item, bool, error) {
		if last != nil {
			if err := h.advanceTop((*runReader).nextPeek); err != nil {
				return item{}, false, err
			}
			last = nil
		}
		if h.Len() == 0 {
			return item{}, false, nil
		}
		last = (*h)[0]
		return last.cur, true, nil
	}, nil
}

// merge returns a function yielding the items of every run in key order;
// it returns ok=false at the end.
func (s *spiller) merge() (func() (item, bool, error), error) {
	h, err := s.openRuns(1<<16, (*runReader).next)
	if err != nil {
		return nil, err
	}
	return func() (item, bool, error) {
		if h.Len() == 0 {
			return item{}, false, nil
		}
		out := (*h)[0].cur
		if err := h.advanceTop((*runReader).next); err != nil {
			return item{}, false, err
		}
		return out, true, nil
	}, nil
}

// openRuns opens a reader with a buffer of size bytes on every run, reads
// its first item with next, and returns the heap of the readers that have
// one.
func (s *spiller) openRuns(size int, next func(*runReader) (bool, error)) (*runHeap, error) {
	h := &runHeap{}
	for i, f := range s.runs {
		rr := &runReader{r: bufio.NewReaderSize(f, size), idx: i}
		ok, err := next(rr)
		if err != nil {
			return nil, err
		}
		if ok {
			*h = append(*h, rr)
		}
	}
	heap.Init(h)
	return h, nil
}

// advanceTop moves the reader at the top of h to its next item, and
// restores the heap (dropping the reader at the end of its run).
func (h *runHeap) advanceTop(next func(*runReader) (bool, error)) error {
	ok, err := next((*h)[0])
	if err != nil {
		return err
	}
	if ok {
		heap.Fix(h, 0)
	} else {
		heap.Pop(h)
	}
	return nil
}
