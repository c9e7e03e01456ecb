package colcache

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cairndb/cairn/kv"
)

// build scans t once and returns a column per field, the number of
// documents, and whether the columns fit the budget (they are incomplete
// when not). The chunks of chunkRows documents are built by c.workers
// goroutines while the caller's goroutine walks the tree; the documents
// alias the caller's transaction, which stays open throughout.
func (c *Cache) build(ctx context.Context, t *kv.Tree, fields []string) ([]*column, int, bool, error) {
	type job struct {
		idx  int
		docs [][]byte
	}
	var (
		size    atomic.Int64
		overrun atomic.Bool
		mu      sync.Mutex
		chunks  [][]*chunk // [chunk index][field]
		wg      sync.WaitGroup
	)
	jobs := make(chan job, c.workers)
	for range c.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := newChunkBuilder(fields)
			for j := range jobs {
				if overrun.Load() {
					continue
				}
				cs, ok := b.build(j.docs)
				if !ok {
					overrun.Store(true)
					continue
				}
				var n int64
				for _, ch := range cs {
					n += ch.bytes()
				}
				if size.Add(n) > c.budget {
					overrun.Store(true)
					continue
				}
				mu.Lock()
				for len(chunks) <= j.idx {
					chunks = append(chunks, nil)
				}
				chunks[j.idx] = cs
				mu.Unlock()
			}
		}()
	}
	rows := 0
	cur := t.Cursor()
	batch := make([][]byte, 0, chunkRows)
	var err error
	for _, v := cur.First(); v != nil && !overrun.Load(); _, v = cur.Next() {
		batch = append(batch, v)
		rows++
		if len(batch) == chunkRows {
			if err = ctx.Err(); err != nil {
				break
			}
			jobs <- job{idx: rows/chunkRows - 1, docs: batch}
			batch = make([][]byte, 0, chunkRows)
		}
	}
	if err == nil && len(batch) > 0 && !overrun.Load() {
		jobs <- job{idx: (rows - 1) / chunkRows, docs: batch}
	}
	close(jobs)
	wg.Wait()
	if err == nil {
		err = cur.Err()
	}
	if err != nil {
		return nil, 0, false, fmt.Errorf("colcache: scanning %q: %w", t.Name(), err)
	}
	if overrun.Load() {
		return nil, rows, false, nil
	}
	cols := make([]*column, len(fields))
	for i, f := range fields {
		col := &column{field: f, chunks: make([]*chunk, len(chunks))}
		for k, cs := range chunks {
			col.chunks[k] = cs[i]
			col.size += cs[i].bytes()
		}
		cols[i] = col
	}
	return cols, rows, true, nil
}
