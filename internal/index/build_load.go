package index

// The two passes of an index build (build.go holds the entries and their
// runs): scan reads the collection once and extracts every target's
// entries; load merges a target's sorted runs into its tree bottom-up.

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cairndb/cairn/internal/extsort"
	"github.com/cairndb/cairn/kv"
)

// docRef is one document of a scan batch.
type docRef struct{ id, doc []byte }

// scanBatch is how many documents the scan hands a worker at a time.
const scanBatch = 256

// scan reads data once, feeding the extractors: directly with one, in
// batches over a channel with several (the documents stay valid until the
// transaction ends).
func scan(ctx context.Context, data *kv.Tree, ns string, xs []*extractor, p *Progress) error {
	cur := data.Cursor()
	if len(xs) == 1 {
		count := 0
		for id, doc := cur.First(); id != nil; id, doc = cur.Next() {
			if count++; count&1023 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
				p.Add(1024)
			}
			if err := xs[0].add(id, doc); err != nil {
				return err
			}
		}
		if err := cur.Err(); err != nil {
			return fmt.Errorf("scanning %s: %w", ns, err)
		}
		p.Add(int64(count & 1023))
		return nil
	}
	ch := make(chan []docRef, 2*len(xs))
	var failed atomic.Bool
	errs := make([]error, len(xs))
	var wg sync.WaitGroup
	for i, x := range xs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for batch := range ch {
				if failed.Load() {
					continue
				}
				for _, d := range batch {
					if err := x.add(d.id, d.doc); err != nil {
						errs[i] = err
						failed.Store(true)
						break
					}
				}
			}
		}()
	}
	var scanErr error
	batch := make([]docRef, 0, scanBatch)
	for id, doc := cur.First(); id != nil; id, doc = cur.Next() {
		batch = append(batch, docRef{id, doc})
		if len(batch) == scanBatch {
			if failed.Load() {
				break
			}
			if scanErr = ctx.Err(); scanErr != nil {
				break
			}
			ch <- batch
			p.Add(scanBatch)
			batch = make([]docRef, 0, scanBatch)
		}
	}
	if len(batch) > 0 && scanErr == nil {
		ch <- batch
		p.Add(int64(len(batch)))
	}
	close(ch)
	wg.Wait()
	if scanErr != nil {
		return scanErr
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("scanning %s: %w", ns, err)
	}
	return nil
}

// load merges the sorted runs of one index, checks uniqueness between
// neighbours (passing repeats to dup, if set) and bulk-loads the tree.
func load(tx *kv.Tx, ns string, t *BuildTarget, srcs []extsort.Source, fillFactor float64, dup func(key, val []byte) error, p *Progress) (int64, error) {
	spec := t.Spec
	// The merger moves past the entry it returned last when asked for
	// the next one, once BulkLoad has copied it.
	m := extsort.NewMerger(srcs, nil, nil)
	var prev []byte // the last key loaded, for unique indexes
	first := true
	var n int64
	var dupErr error
	_, err := bulkLoad(tx, t.TreeName, func() ([]byte, []byte, bool, error) {
		for {
			bk, bv, ok, err := m.Next()
			if err != nil || !ok {
				return nil, nil, false, err
			}
			if spec.Unique {
				if !first && bytes.Equal(prev, bk) {
					if dup == nil {
						dupErr = DuplicateKeyError(ns, spec, bk)
					} else {
						dupErr = dup(bk, bv)
					}
					if dupErr != nil {
						return nil, nil, false, dupErr
					}
					continue
				}
				first = false
				prev = append(prev[:0], bk...)
			}
			if n++; n&1023 == 0 {
				p.Add(1024)
			}
			return bk, bv, true, nil
		}
	}, fillFactor)
	if dupErr != nil {
		return 0, dupErr
	}
	if err != nil {
		return 0, fmt.Errorf("loading index %s of %s: %w", spec.Name, ns, err)
	}
	p.Add(n & 1023)
	return n, nil
}

// bulkLoad is kv's BulkLoad, except in a concurrent transaction (a
// multi-document transaction's index build on a collection it created),
// which cannot bulk-load: there the tree is created and the sorted
// entries are put one by one.
func bulkLoad(tx *kv.Tx, name string, next func() ([]byte, []byte, bool, error), fillFactor float64) (*kv.Tree, error) {
	if !tx.Concurrent() {
		return tx.BulkLoad(name, next, fillFactor)
	}
	t, err := tx.CreateTree(name)
	if err != nil {
		return nil, err
	}
	for {
		k, v, ok, err := next()
		if err != nil || !ok {
			return t, err
		}
		if err := t.Put(k, v); err != nil {
			return nil, err
		}
	}
}
