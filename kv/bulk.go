package kv

import (
	"bytes"
	"fmt"
	"slices"
)

// BulkLoad creates tree name (which must not exist) from strictly ascending
// input, building it bottom-up: leaves are packed to fillFactor of a page
// (0 means Options.FillFactor), then each branch level is packed above them.
// Keys and values are copied into large shared chunks. The commit of a
// transaction that bulk loaded goes through a checkpoint (the pages are
// written once, straight to the data file) instead of the journal.
func (tx *Tx) BulkLoad(name string, next func() (key, value []byte, ok bool, err error), fillFactor float64) (*Tree, error) {
	if err := tx.checkWrite(); err != nil {
		return nil, err
	}
	if _, ok := tx.trees[name]; ok {
		return nil, fmt.Errorf("%w: %q", ErrTreeExists, name)
	}
	if fillFactor == 0 {
		fillFactor = tx.db.opts.FillFactor
	}
	fillFactor = min(max(fillFactor, 0.5), 1.0)
	ps := tx.pageSize()
	limit := max(int(float64(ps)*fillFactor), pageHeaderSize+1)

	b := bulkBuilder{txid: tx.id, limit: limit}
	var prev []byte
	var count int64
	for {
		k, v, ok, err := next()
		if err != nil {
			return nil, fmt.Errorf("kv: bulk load %q: %w", name, err)
		}
		if !ok {
			break
		}
		if err := validKey(k); err != nil {
			return nil, fmt.Errorf("kv: bulk load %q: %w", name, err)
		}
		if len(v) > MaxValueSize {
			return nil, fmt.Errorf("kv: bulk load %q: %w", name, ErrValueTooLarge)
		}
		if prev != nil && bytes.Compare(prev, k) >= 0 {
			return nil, fmt.Errorf("kv: bulk load %q: %w: %q after %q", name, ErrUnsorted, k, prev)
		}
		kc, vc := b.copy(k, v)
		b.add(kc, vc)
		prev = kc
		count++
	}
	root, height := b.finish()
	tx.ownMap()
	tr := &treeRoot{name: name, root: refTo(root), count: count, height: height, txid: tx.id}
	tx.trees[name] = tr
	tx.dirty = true
	tx.forceCkpt = true
	tx.log.create(name) // the log is not used: the commit checkpoints
	return &Tree{tx: tx, tr: tr}, nil
}

type bulkBuilder struct {
	txid   uint64
	limit  int
	chunk  []byte
	leaf   *node
	leaves []*node
}

const bulkChunk = 1 << 20

func (b *bulkBuilder) copy(k, v []byte) ([]byte, []byte) {
	n := len(k) + len(v)
	if n > bulkChunk/4 {
		return copyKV(k, v)
	}
	if len(b.chunk)+n > cap(b.chunk) {
		b.chunk = make([]byte, 0, bulkChunk)
	}
	off := len(b.chunk)
	b.chunk = append(b.chunk, k...)
	b.chunk = append(b.chunk, v...)
	return b.chunk[off : off+len(k) : off+len(k)], b.chunk[off+len(k) : off+n : off+n]
}

func (b *bulkBuilder) add(k, v []byte) {
	es := leafEntrySize(k, v)
	if b.leaf != nil && len(b.leaf.keys) > 0 && b.leaf.size+es > b.limit {
		b.leaves = append(b.leaves, b.leaf)
		b.leaf = nil
	}
	if b.leaf == nil {
		b.leaf = &node{leaf: true, txid: b.txid, size: pageHeaderSize}
		if cap := len(b.leaves); cap > 0 {
			want := len(b.leaves[cap-1].keys)
			b.leaf.keys = make([][]byte, 0, want)
			b.leaf.vals = make([][]byte, 0, want)
		}
	}
	b.leaf.keys = append(b.leaf.keys, k)
	b.leaf.vals = append(b.leaf.vals, v)
	b.leaf.size += es
}

// finish builds the branch levels and returns the root and height.
func (b *bulkBuilder) finish() (*node, int) {
	if b.leaf != nil {
		b.leaves = append(b.leaves, b.leaf)
	}
	defer func() {
		for _, l := range b.leaves {
			l.buildPrefixes()
		}
	}()
	level := b.leaves
	if len(level) == 0 {
		return &node{leaf: true, txid: b.txid, size: pageHeaderSize}, 1
	}
	lows := make([][]byte, len(level))
	for i, l := range level {
		lows[i] = l.keys[0]
	}
	height := 1
	for len(level) > 1 {
		var up []*node
		var upLows [][]byte
		var cur *node
		for i, c := range level {
			sep := lows[i]
			es := branchEntrySize(sep)
			if cur != nil && len(cur.keys) > 1 && cur.size+es > b.limit {
				up = append(up, cur)
				cur = nil
			}
			if cur == nil {
				cur = &node{txid: b.txid, size: pageHeaderSize}
				upLows = append(upLows, sep)
				sep = nil
				es = branchEntrySize(nil)
			}
			cur.keys = append(cur.keys, sep)
			cur.kids = append(cur.kids, refTo(c))
			cur.size += es
		}
		up = append(up, cur)
		for _, u := range up {
			u.buildPrefixes()
		}
		level, lows = up, upLows
		height++
	}
	return level[0], height
}

// settle applies the deferred puts of tree tr. Puts into an empty tree are
// not inserted one by one: they are appended to a list, which is sorted
// (by key, then put order: the last put of a key wins) and built bottom-up like BulkLoad the
// first time the tree is used otherwise (read, delete, cursor, Len, commit).
// A transaction that fills a fresh tree with random keys — an index build,
// the benchmark's bulk load — thus costs one sort and one sequential build
// instead of a random B+tree insertion per key.
func (tx *Tx) settle(tr *treeRoot) {
	p := tr.pending
	if p == nil {
		return
	}
	tr.pending = nil
	slices.SortFunc(p, func(a, b kvPair) int {
		if a.pfx != b.pfx {
			if a.pfx < b.pfx {
				return -1
			}
			return 1
		}
		if c := bytes.Compare(a.k, b.k); c != 0 {
			return c
		}
		return a.seq - b.seq
	})
	limit := max(int(float64(tx.pageSize())*tx.db.opts.FillFactor), pageHeaderSize+1)
	b := bulkBuilder{txid: tx.id, limit: limit}
	n := 0
	for i := range p {
		if i+1 < len(p) && bytes.Equal(p[i].k, p[i+1].k) {
			continue // a later put of the same key wins
		}
		b.add(p[i].k, p[i].v)
		n++
	}
	root, height := b.finish()
	tx.retireRef(tr.root)
	tr.root, tr.height, tr.count = refTo(root), height, int64(n)
	tr.mod++
}

// settleAll applies the deferred puts of every tree (before publishing).
func (tx *Tx) settleAll() {
	for _, tr := range tx.trees {
		if tr.pending != nil {
			tx.settle(tr)
		}
	}
}
