package colcache

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// Columns can be built from stored columns (a column store index) rather
// than from the documents: a Source lists every document's key, and each
// field's cells (the field's ordinal among the document's elements and
// its BSON type byte and value bytes) in the same key order, for the
// documents that have it. Building a field then reads that field's
// entries only — a few bytes per document — where a document scan reads
// every document whole. The chunks are the same as a document scan makes,
// so the narrow documents a Scan serves, and every answer, are too.
//
// The build first lists the keys (the row-id column), then fills each
// field's chunks by merging its cells with the keys: a document without a
// cell gets an empty value. A cell whose key is not a document's, or keys
// not in the tree's number, mean the source is out of step with the tree:
// the build fails with an error rather than serve wrong answers.

// Source reads stored columns of one tree version, in the tree's key
// order.
type Source interface {
	// Name names the source in errors (the index name).
	Name() string
	// Rows calls fn with every document's key.
	Rows(ctx context.Context, fn func(key []byte) error) error
	// Column calls fn with the key, ordinal and value (type byte and
	// value bytes) of every document that has field. The slices are
	// valid during the call.
	Column(ctx context.Context, field string, fn func(key []byte, ord int, val []byte) error) error
	// Parallel reports whether Column may run on several goroutines at
	// once.
	Parallel() bool
}

// keyList is the documents' keys, one after another.
type keyList struct {
	buf []byte
	end []uint32
}

func (l *keyList) key(i int) []byte {
	start := uint32(0)
	if i > 0 {
		start = l.end[i-1]
	}
	return l.buf[start:l.end[i]]
}

// errOverBudget ends a source build whose columns passed the budget.
var errOverBudget = fmt.Errorf("colcache: over budget")

// buildFrom is build reading src instead of the tree: the columns of
// fields, the number of documents, and whether they fit the budget.
// rows is the tree's number of documents.
func (c *Cache) buildFrom(ctx context.Context, src Source, rows int64, fields []string) ([]*column, int, bool, error) {
	var keys keyList
	err := src.Rows(ctx, func(k []byte) error {
		if len(keys.end) > 0 && bytes.Compare(keys.key(len(keys.end)-1), k) >= 0 {
			return fmt.Errorf("colcache: column store %s: row keys out of order", src.Name())
		}
		keys.buf = append(keys.buf, k...)
		if len(keys.buf) > 1<<32-1 {
			return errOverBudget
		}
		keys.end = append(keys.end, uint32(len(keys.buf)))
		return nil
	})
	if err == errOverBudget {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	n := len(keys.end)
	if int64(n) != rows {
		return nil, 0, false, fmt.Errorf("colcache: column store %s holds %d documents, the collection %d", src.Name(), n, rows)
	}
	var size atomic.Int64
	cols := make([]*column, len(fields))
	errs := make([]error, len(fields))
	fill := func(i int) {
		cols[i], errs[i] = c.columnFrom(ctx, src, &keys, fields[i], &size)
	}
	if src.Parallel() && c.workers > 1 && len(fields) > 1 {
		var wg sync.WaitGroup
		next := atomic.Int64{}
		for range min(c.workers, len(fields)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := int(next.Add(1) - 1); i < len(fields); i = int(next.Add(1) - 1) {
					fill(i)
				}
			}()
		}
		wg.Wait()
	} else {
		for i := range fields {
			fill(i)
		}
	}
	for _, err := range errs {
		if err == errOverBudget {
			return nil, n, false, nil
		}
	}
	for _, err := range errs {
		if err != nil {
			return nil, 0, false, err
		}
	}
	return cols, n, true, nil
}

// columnFrom builds one field's column from src's cells, aligned with
// keys.
func (c *Cache) columnFrom(ctx context.Context, src Source, keys *keyList, field string, size *atomic.Int64) (*column, error) {
	n := len(keys.end)
	col := &column{field: field}
	var cur *chunk
	varies := false
	row := 0 // the next row to fill
	finish := func() error {
		if cur == nil {
			return nil
		}
		if !varies {
			cur.pos = nil
		}
		cur.data = bytes.Clone(cur.data)
		b := cur.bytes()
		col.size += b
		col.chunks = append(col.chunks, cur)
		cur, varies = nil, false
		if size.Add(b) > c.budget {
			return errOverBudget
		}
		return ctx.Err()
	}
	// advance fills rows up to (not including) to with missing values.
	advance := func(to int) error {
		for row < to {
			if cur == nil {
				rowsIn := min(chunkRows, n-row)
				cur = &chunk{off: make([]uint32, 1, rowsIn+1), pos: make([]uint16, rowsIn), cpos: -1}
			}
			cur.off = append(cur.off, uint32(len(cur.data)))
			row++
			if row%chunkRows == 0 || row == n {
				if err := finish(); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err := src.Column(ctx, field, func(k []byte, ord int, val []byte) error {
		// The row of k: the first at or after row whose key is k.
		lo := row
		for lo < n && bytes.Compare(keys.key(lo), k) < 0 {
			lo++
		}
		if lo == n || !bytes.Equal(keys.key(lo), k) {
			return fmt.Errorf("colcache: column store %s: field %q has a cell of key %x, which no document has", src.Name(), field, k)
		}
		if ord > 1<<16-1 {
			return errOverBudget // too many elements to record the field order
		}
		if err := advance(lo); err != nil {
			return err
		}
		if cur == nil {
			rowsIn := min(chunkRows, n-row)
			cur = &chunk{off: make([]uint32, 1, rowsIn+1), pos: make([]uint16, rowsIn), cpos: -1}
		}
		i := row % chunkRows
		cur.pos[i] = uint16(ord)
		if cur.cpos < 0 {
			cur.cpos = ord
		} else if ord != cur.cpos {
			varies = true
		}
		cur.data = append(cur.data, val...)
		if len(cur.data) > 1<<32-1 {
			return errOverBudget
		}
		return advance(row + 1)
	})
	if err == nil {
		err = advance(n)
	}
	if err != nil {
		return nil, err
	}
	return col, nil
}
