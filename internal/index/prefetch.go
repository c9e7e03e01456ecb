package index

import "sync"

// Prefetching: a sorted run whose entries are scattered over its arena (a
// run too large to be laid out again in order, see run.reorder) or stored
// in a file costs the load a cache miss or a decode at almost every entry,
// on the one goroutine that holds the writer lock. A prefetched source
// reads its run ahead on a goroutine of its own, copying batches of
// entries into small buffers in order, so that the misses and decodes of
// every source are taken in parallel with the merge, within a few
// buffers' memory.

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
	pfx             uint64
}

// prefetched streams a source read ahead by a goroutine.
type prefetched struct {
	ch   chan *batch
	free chan *batch
	cur  *batch
	i    int
}

// prefetcher starts prefetched sources and stops their goroutines.
type prefetcher struct {
	done chan struct{}
	wg   sync.WaitGroup
}

func newPrefetcher() *prefetcher { return &prefetcher{done: make(chan struct{})} }

// stop ends the goroutines and waits for them (the sources they read may
// then be closed).
func (p *prefetcher) stop() {
	close(p.done)
	p.wg.Wait()
}

// start returns src read ahead.
func (p *prefetcher) start(src source) (source, error) {
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
				k, v, pfx, ok := src.head()
				if !ok {
					break
				}
				b.es = append(b.es, batchEntry{off: uint32(len(b.buf)), klen: uint32(len(k)), vlen: uint32(len(v)), pfx: pfx})
				b.buf = append(append(b.buf, k...), v...)
				if b.err = src.advance(); b.err != nil {
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

func (s *prefetched) head() ([]byte, []byte, uint64, bool) {
	if s.cur == nil || s.i == len(s.cur.es) {
		return nil, nil, 0, false
	}
	e := s.cur.es[s.i]
	k := s.cur.buf[e.off : e.off+e.klen : e.off+e.klen]
	v := s.cur.buf[e.off+e.klen : e.off+e.klen+e.vlen : e.off+e.klen+e.vlen]
	return k, v, e.pfx, true
}

func (s *prefetched) advance() error {
	if s.i++; s.i < len(s.cur.es) {
		return nil
	}
	if err := s.cur.err; err != nil {
		return err
	}
	return s.next()
}
