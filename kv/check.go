package kv

// The consistency checker walks every page reachable from the durable meta
// (not the in-memory state): both meta slots, the catalog, and every node of
// every tree. For each node it verifies the checksum, header (type, page
// number, extent length), decoding, strict key order, that keys lie within
// the bounds given by the parent's separators, that all leaves are at the
// same depth, that no page is referenced twice or lies beyond the file, and
// that each tree's entry count matches its root record.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

const maxCheckErrors = 100

type checker struct {
	ctx      context.Context
	p        *pager
	end      uint64
	seen     map[uint64]bool
	errs     []error
	tooMany  bool
	ctxError error
}

func (c *checker) report(err error) {
	if len(c.errs) >= maxCheckErrors {
		c.tooMany = true
		return
	}
	c.errs = append(c.errs, err)
}

func (c *checker) claim(e extent, what string) bool {
	if e.pgid < 2 || e.npages == 0 || e.pgid+uint64(e.npages) > c.end {
		c.report(corruptf(dataFileName, e.pgid, "%s: extent %d+%d outside file of %d pages", what, e.pgid, e.npages, c.end))
		return false
	}
	ok := true
	for i := uint64(0); i < uint64(e.npages); i++ {
		if c.seen[e.pgid+i] {
			c.report(corruptf(dataFileName, e.pgid+i, "%s: page referenced twice", what))
			ok = false
		}
		c.seen[e.pgid+i] = true
	}
	return ok
}

// checkTree walks the subtree at e; lo/hi bound its keys (nil = open). It
// returns the number of leaf entries.
func (c *checker) checkTree(name string, e extent, height int, lo, hi []byte) int64 {
	if c.ctxError != nil || c.tooMany {
		return 0
	}
	if err := c.ctx.Err(); err != nil {
		c.ctxError = err
		return 0
	}
	what := fmt.Sprintf("tree %q", name)
	if !c.claim(e, what) {
		return 0
	}
	buf, err := c.p.read(e.pgid, e.npages)
	if err != nil {
		c.report(fmt.Errorf("%s: %w", what, err))
		return 0
	}
	n, err := decodeNode(buf, e.pgid, e.npages, dataFileName)
	if err != nil {
		c.report(fmt.Errorf("%s: %w", what, err))
		return 0
	}
	if n.leaf != (height == 1) {
		c.report(corruptf(dataFileName, e.pgid, "%s: leaf=%v at height %d (uneven depth)", what, n.leaf, height))
		return 0
	}
	first := 0
	if !n.leaf {
		first = 1
	}
	for i := first; i < n.count(); i++ {
		k := n.key(i)
		if i > first && bytes.Compare(n.key(i-1), k) >= 0 {
			c.report(corruptf(dataFileName, e.pgid, "%s: keys out of order at entry %d", what, i))
		}
		if (lo != nil && bytes.Compare(k, lo) < 0) || (hi != nil && bytes.Compare(k, hi) >= 0) {
			c.report(corruptf(dataFileName, e.pgid, "%s: key at entry %d outside the parent's separator bounds", what, i))
		}
		if n.leaf && len(k) == 0 {
			c.report(corruptf(dataFileName, e.pgid, "%s: empty key at entry %d", what, i))
		}
	}
	if n.leaf {
		return int64(n.count())
	}
	var total int64
	for i, k := range n.kids {
		clo, chi := lo, hi
		if i > 0 {
			clo = n.keys[i]
		}
		if i+1 < len(n.keys) {
			chi = n.keys[i+1]
		}
		total += c.checkTree(name, extent{k.pgid, k.npages}, height-1, clo, chi)
	}
	return total
}

// checkFile checks the data file f against its newest valid meta.
func checkFile(ctx context.Context, p *pager) error {
	_, err := checkPages(ctx, p)
	return err
}

// checkPages checks the file like checkFile and also returns the pages
// the last checkpoint references (meta pages excluded).
func checkPages(ctx context.Context, p *pager) (map[uint64]bool, error) {
	m, metaErrs := readMetas(p.f)
	if m == nil {
		return nil, errors.Join(append([]error{corruptf(dataFileName, 0, "no valid meta page")}, metaErrs...)...)
	}
	p.pageSize = m.pageSize
	c := &checker{ctx: ctx, p: p, end: m.filePages, seen: map[uint64]bool{}}
	if size, err := p.f.Size(); err == nil && uint64(size) < m.filePages*uint64(m.pageSize) {
		c.report(corruptf(dataFileName, 0, "file has %d bytes, meta says %d pages of %d", size, m.filePages, m.pageSize))
	}
	if m.catalog.pgid != 0 && c.claim(m.catalog, "catalog") {
		buf, err := p.read(m.catalog.pgid, m.catalog.npages)
		if err != nil {
			c.report(err)
		} else if trees, err := decodeCatalog(buf, m.catalog); err != nil {
			c.report(err)
		} else {
			for _, tr := range trees {
				got := c.checkTree(tr.name, extent{tr.root.pgid, tr.root.npages}, tr.height, nil, nil)
				if c.ctxError == nil && !c.tooMany && got != tr.count {
					c.report(corruptf(dataFileName, tr.root.pgid, "tree %q: root record says %d entries, found %d", tr.name, tr.count, got))
				}
			}
		}
	}
	if c.ctxError != nil {
		return nil, fmt.Errorf("kv: check interrupted: %w", c.ctxError)
	}
	if c.tooMany {
		c.errs = append(c.errs, fmt.Errorf("kv: check stopped after %d problems", maxCheckErrors))
	}
	return c.seen, errors.Join(c.errs...)
}

// Check verifies every page of the last checkpoint of the open database.
// It blocks checkpoints (not readers or commits) while it runs. The result
// is nil or an error joining *CorruptionError values.
func (db *DB) Check(ctx context.Context) error {
	db.ckptMu.Lock()
	defer db.ckptMu.Unlock()
	return checkFile(ctx, &pager{f: db.pager.f, pageSize: db.pageSize})
}

// Check verifies the database in dir offline (it takes the directory lock,
// so the database must not be open).
func Check(dir string, opts *Options) error {
	o, err := opts.withDefaults()
	if err != nil {
		return err
	}
	lock, err := o.FS.Lock(filepath.Join(dir, "LOCK"))
	if err != nil {
		return fmt.Errorf("kv: check %s: %w", dir, err)
	}
	defer lock.Close()
	f, err := o.FS.OpenFile(filepath.Join(dir, dataFileName), os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("kv: check %s: %w", dir, err)
	}
	defer f.Close()
	return checkFile(context.Background(), &pager{f: f})
}
