package extsort

import "sync"

// Prefetching: a sorted source whose records are scattered in memory (an
// index build's run too large to be laid out again in order) or stored in
// a file costs a merge a cache miss or a decode at almost every record,
// on the merging goroutine (which, for an index build, holds the writer
// lock). A prefetched source reads its source ahead on a goroutine of its
// own, copying batches of records into small buffers in order, so that
// the misses and decodes of every source are taken in parallel with the
// merge, within a few buffers' memory.

// prefetchBatch is how many entries, and prefetchBytes about how many
// bytes, a batch holds; prefetchDepth batches per source are in flight.
const (
	prefetchBatch = 2048
	prefetchBytes = 64 << 10
	prefetchDepth = 3
)

type batch struct {
	buf []byte
	es  []batchEntry
	err error
}

type batchEntry struct {
	off, klen, vlen uint32
}

// prefetched streams a source read ahead by a goroutine.
type prefetched struct {
	ch   chan *batch
	free chan *batch
	cur  *batch
	i    int
}

// Prefetcher starts prefetched sources and stops their goroutines.
type Prefetcher struct {
	done chan struct{}
	wg   sync.WaitGroup
}

// NewPrefetcher returns a Prefetcher; Stop must be called once the
// sources it started are done with.
func NewPrefetcher() *Prefetcher { return &Prefetcher{done: make(chan struct{})} }

// Stop ends the goroutines and waits for them (the sources they read may
// then be closed).
func (p *Prefetcher) Stop() {
	close(p.done)
	p.wg.Wait()
}

// Start returns src read ahead, positioned on its first record; its
// records are valid until it advances.
func (p *Prefetcher) Start(src Source) (Source, error) {
	s := &prefetched{ch: make(chan *batch, prefetchDepth), free: make(chan *batch, prefetchDepth)}
	for range prefetchDepth {
		s.free <- &batch{buf: make([]byte, 0, prefetchBytes), es: make([]batchEntry, 0, prefetchBatch)}
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(s.ch)
		for {
			var b *batch
			select {
			case b = <-s.free:
			case <-p.done:
				return
			}
			b.buf, b.es, b.err = b.buf[:0], b.es[:0], nil
			for len(b.es) < prefetchBatch && len(b.buf) < prefetchBytes {
				k, v, ok := src.Head()
				if !ok {
					break
				}
				b.es = append(b.es, batchEntry{off: uint32(len(b.buf)), klen: uint32(len(k)), vlen: uint32(len(v))})
				b.buf = append(append(b.buf, k...), v...)
				if b.err = src.Advance(); b.err != nil {
					break
				}
			}
			select {
			case s.ch <- b:
			case <-p.done:
				return
			}
			if len(b.es) == 0 || b.err != nil {
				return // the end (an empty batch) or a failure
			}
		}
	}()
	return s, s.next()
}

// next moves to the next batch, handing the current one back.
func (s *prefetched) next() error {
	if s.cur != nil {
		s.free <- s.cur
	}
	s.cur, s.i = <-s.ch, 0
	if s.cur == nil {
		return nil
	}
	if s.cur.err != nil && len(s.cur.es) == 0 {
		return s.cur.err
	}
	return nil
}

// Head is the current record.
func (s *prefetched) Head() ([]byte, []byte, bool) {
	if s.cur == nil || s.i == len(s.cur.es) {
		return nil, nil, false
	}
	e := s.cur.es[s.i]
	k := s.cur.buf[e.off : e.off+e.klen : e.off+e.klen]
	v := s.cur.buf[e.off+e.klen : e.off+e.klen+e.vlen : e.off+e.klen+e.vlen]
	return k, v, true
}

// Advance moves to the next record.
func (s *prefetched) Advance() error {
	if s.cur == nil {
		return nil // past the end
	}
	if s.i++; s.i < len(s.cur.es) {
		return nil
	}
	if err := s.cur.err; err != nil {
		return err
	}
	return s.next()
}
