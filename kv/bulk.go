package kv

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
)

// BulkLoad creates tree name (which must not exist) from strictly ascending
// input, building it bottom-up: leaves are packed to fillFactor of a page
// (0 means Options.FillFactor), then each branch level is packed above them.
// The leaves are built packed (node.go), their entries copied straight into
// their page images, carved from large shared chunks: no per-entry slices
// for the garbage collector to walk, and the checkpoint writes each leaf
// with one copy. The commit of a transaction that bulk loaded goes through
// a checkpoint (the pages are written once, straight to the data file)
// instead of the journal.
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

	b := bulkBuilder{txid: tx.id, limit: limit, packed: true}
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
		prev = b.addPacked(k, v)
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

// bulkBuilder builds a tree bottom-up from ascending entries: add (or
// addPacked) fills leaves to limit, finish builds the branches above them.
type bulkBuilder struct {
	txid   uint64
	limit  int
	leaf   *node
	leaves []*node
	// Packed leaves (addPacked): the leaf being filled is chunk[start:],
	// its entries' offsets and key prefixes offs[first:] and pfx[first:].
	packed bool
	chunk  []byte
	start  int
	offs   []uint32
	pfx    []uint64
	first  int
	size   int
}

// bulkChunk is the size of the chunks packed leaves' pages are carved
// from; bulkIndexChunk is how many entries' offsets and prefixes are
// allocated at a time.
const (
	bulkChunk      = 1 << 20
	bulkIndexChunk = 1 << 14
)

// add appends an entry to the current leaf (unpacked, aliasing k and v).
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

// addPacked copies an entry into the current packed leaf's page and
// returns the copy of the key.
func (b *bulkBuilder) addPacked(k, v []byte) []byte {
	es := leafEntrySize(k, v)
	if len(b.offs) > b.first && b.size+es > b.limit {
		b.closePacked()
	}
	if b.size == 0 {
		b.size = pageHeaderSize
	}
	if len(b.chunk)+es > cap(b.chunk) {
		// Move the leaf begun so far to a fresh chunk (offsets are
		// relative to the page, so they stay valid).
		c := make([]byte, 0, max(bulkChunk, len(b.chunk)-b.start+es))
		b.chunk, b.start = append(c, b.chunk[b.start:]...), 0
	}
	if len(b.offs) == cap(b.offs) {
		n := len(b.offs) - b.first
		offs := make([]uint32, n, max(bulkIndexChunk, 2*n))
		pfx := make([]uint64, n, cap(offs))
		copy(offs, b.offs[b.first:])
		copy(pfx, b.pfx[b.first:])
		b.offs, b.pfx, b.first = offs, pfx, 0
	}
	b.offs = append(b.offs, uint32(len(b.chunk)-b.start))
	b.pfx = append(b.pfx, prefix64(k))
	b.chunk = binary.AppendUvarint(b.chunk, uint64(len(k)))
	b.chunk = binary.AppendUvarint(b.chunk, uint64(len(v)))
	ks := len(b.chunk)
	b.chunk = append(b.chunk, k...)
	b.chunk = append(b.chunk, v...)
	b.size += es
	return b.chunk[ks : ks+len(k) : ks+len(k)]
}

// closePacked ends the current packed leaf. Its txid is 0, as for a leaf
// read from disk: a write transaction (this one included) copies it
// before changing it, never modifying a packed page in place.
func (b *bulkBuilder) closePacked() {
	end, n := len(b.chunk), len(b.offs)
	b.leaves = append(b.leaves, &node{leaf: true, packed: true, size: b.size,
		page: b.chunk[b.start:end:end], offs: b.offs[b.first:n:n], pfx: b.pfx[b.first:n:n]})
	b.start, b.first, b.size = end, n, 0
}

// finish builds the branch levels and returns the root and height.
func (b *bulkBuilder) finish() (*node, int) {
	if b.leaf != nil {
		b.leaves = append(b.leaves, b.leaf)
	}
	if b.packed && len(b.offs) > b.first {
		b.closePacked()
	}
	defer func() {
		for _, l := range b.leaves {
			if l.pfx == nil {
				l.buildPrefixes()
			}
		}
	}()
	level := b.leaves
	if len(level) == 0 {
		return emptyLeaf(b.txid), 1
	}
	lows := make([][]byte, len(level))
	for i, l := range level {
		lows[i] = l.key(0)
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
