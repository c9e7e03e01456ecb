package kv

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
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
	if tx.conc != nil {
		return nil, fmt.Errorf("kv: bulk load %q: not available in a concurrent transaction (use CreateTree and Put)", name)
	}
	if tx.coordinated() {
		if err := tx.claimKeys(name); err != nil {
			return nil, fmt.Errorf("kv: bulk load %q: %w", name, err)
		}
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
			return nil, fmt.Errorf("kv: bulk load %q: %w: %s after %s", name, ErrUnsorted, keyString(k), keyString(prev))
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
	ahead  byte // see settleAhead
	// sizeHint, when set, is about how many bytes the entries to come
	// take (settle knows): the first chunk and offset arrays are sized to
	// it instead of bulkChunk and bulkIndexChunk, so that settling the
	// two puts of a small transaction does not allocate over a megabyte.
	sizeHint, countHint int
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
		size := bulkChunk
		if b.chunk == nil && b.sizeHint > 0 {
			size = min(bulkChunk, b.sizeHint)
		}
		c := make([]byte, 0, max(size, len(b.chunk)-b.start+es))
		b.chunk, b.start = append(c, b.chunk[b.start:]...), 0
	}
	if len(b.offs) == cap(b.offs) {
		n := len(b.offs) - b.first
		want := bulkIndexChunk
		if b.offs == nil && b.countHint > 0 {
			want = min(bulkIndexChunk, b.countHint)
		}
		offs := make([]uint32, n, max(want, 2*n))
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
	l := &node{leaf: true, packed: true, size: b.size,
		page: b.chunk[b.start:end:end], offs: b.offs[b.first:n:n], pfx: b.pfx[b.first:n:n]}
	if c := l.count(); c >= 2 {
		// Keys sharing a prefix are searched past it (node.plen): the
		// prefixes taken at offset 0 would all tie.
		if p := commonPrefixLen(l.key(0), l.key(c-1)); p >= minStrip {
			l.rebuildPrefixes(p)
		}
	}
	b.leaves = append(b.leaves, l)
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
		if i == 0 {
			lows[i] = l.key(0) // not a separator: dropped by its parent
			continue
		}
		lows[i] = separator(level[i-1], l)
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

// pendingPuts is the list of a tree's deferred puts, in put order. The
// list is kept in chunks that grow to pendingChunk entries and are never
// copied: one growing slice would copy the millions of puts of a bulk load
// several times over (append grows large slices by 1.25×). Its entries hold
// no pointers: keys and values are copied into pendingPuts' own chunks of
// bytes and named by chunk and offset, so the garbage collector, which
// runs several times during a large load, does not visit two slices per
// put.
type pendingPuts struct {
	full  [][]kvPair
	cur   []kvPair
	n     int
	data  [][]byte // chunks of keys, each followed by its value
	small int      // 1 + index in data of the chunk small entries go to; 0: none
}

// kvPair is one deferred put.
type kvPair struct {
	pfx  uint64 // prefix64 of the key, to sort mostly on integers
	seq  int    // order of the put (the last put of a key wins)
	loc  uint32 // chunk of pendingPuts.data holding key and value
	off  uint32 // offset of the key in it; the value follows
	klen uint32
	vlen uint32
}

const pendingChunk = 1 << 16

// add appends a put of key and value, copied, and returns the copies.
func (pp *pendingPuts) add(key, val []byte) (k, v []byte) {
	n := len(key) + len(val)
	var c int
	if n > 16<<10 {
		pp.data = append(pp.data, make([]byte, 0, n))
		c = len(pp.data) - 1
	} else {
		if pp.small == 0 || len(pp.data[pp.small-1])+n > cap(pp.data[pp.small-1]) {
			size := 4 << 10
			if pp.small > 0 {
				size = min(2*cap(pp.data[pp.small-1]), 1<<20)
			}
			pp.data = append(pp.data, make([]byte, 0, size))
			pp.small = len(pp.data)
		}
		c = pp.small - 1
	}
	d := pp.data[c]
	off := len(d)
	d = append(append(d, key...), val...)
	pp.data[c] = d
	if len(pp.cur) == cap(pp.cur) {
		if pp.cur != nil {
			pp.full = append(pp.full, pp.cur)
		}
		pp.cur = make([]kvPair, 0, min(max(2*cap(pp.cur), 64), pendingChunk))
	}
	pp.cur = append(pp.cur, kvPair{pfx: prefix64(key), seq: pp.n, loc: uint32(c), off: uint32(off),
		klen: uint32(len(key)), vlen: uint32(len(val))})
	pp.n++
	k = d[off : off+len(key) : off+len(key)]
	return k, d[off+len(key) : off+n : off+n]
}

// key and val return the key and value of put e.
func (pp *pendingPuts) key(e *kvPair) []byte {
	return pp.data[e.loc][e.off : e.off+e.klen]
}

func (pp *pendingPuts) val(e *kvPair) []byte {
	o := e.off + e.klen
	return pp.data[e.loc][o : o+e.vlen]
}

// each calls fn with every chunk of puts, in put order.
func (pp *pendingPuts) each(fn func([]kvPair)) {
	for _, c := range pp.full {
		fn(c)
	}
	fn(pp.cur)
}

// compare orders deferred puts by key (on the prefixes first), then put
// order.
func (pp *pendingPuts) compare(a, b kvPair) int {
	if a.pfx != b.pfx {
		if a.pfx < b.pfx {
			return -1
		}
		return 1
	}
	if c := bytes.Compare(pp.key(&a), pp.key(&b)); c != 0 {
		return c
	}
	return a.seq - b.seq
}

// settle applies the deferred puts of tree tr. Puts into an empty tree are
// not inserted one by one: they are appended to a list, which is sorted
// (by key, then put order: the last put of a key wins) and built bottom-up like BulkLoad the
// first time the tree is used otherwise (read, delete, cursor, Len, commit).
// A transaction that fills a fresh tree with random keys — an index build,
// the benchmark's bulk load — thus costs one sort and one sequential build
// instead of a random B+tree insertion per key.
func (tx *Tx) settle(tr *treeRoot) {
	pp := tr.pending
	if pp == nil {
		return
	}
	tr.pending = nil
	p := sortPending(pp)
	limit := max(int(float64(tx.pageSize())*tx.db.opts.FillFactor), pageHeaderSize+1)
	b := bulkBuilder{txid: tx.id, limit: limit, packed: true, countHint: len(p)}
	for _, d := range pp.data {
		b.sizeHint += len(d)
	}
	b.sizeHint += 2*binary.MaxVarintLen32*len(p) + 64 // each entry's two lengths
	n := 0
	var ahead byte
	for i := range p {
		// The entries' bytes lie in put order, so each is a cache miss:
		// touch the ones a few entries ahead so that their misses overlap.
		if j := i + settleAhead; j < len(p) {
			e := &p[j]
			d := pp.data[e.loc]
			ahead ^= d[e.off] ^ d[e.off+e.klen+e.vlen-1]
		}
		k := pp.key(&p[i])
		if i+1 < len(p) && p[i].pfx == p[i+1].pfx && bytes.Equal(k, pp.key(&p[i+1])) {
			continue // a later put of the same key wins
		}
		b.addPacked(k, pp.val(&p[i]))
		n++
	}
	b.ahead = ahead
	root, height := b.finish()
	tx.retireRef(tr.root)
	tr.root, tr.height, tr.count = refTo(root), height, int64(n)
	tr.mod++
}

// settleAhead is how many entries ahead settle touches the bytes it will
// copy (bulkBuilder.ahead keeps the compiler from dropping those loads).
const settleAhead = 8

// sortPending returns the deferred puts pp sorted (compare). A large list
// is sorted by most-significant-digit radix sort on the bits in which its
// prefixes differ (radixPending), which leaves only tiny runs for a
// comparison sort: at 5,000,000 random 24-byte keys, 1.5 s of CPU in a
// comparison sort of the whole list became about 0.4 s. Prefixes that are
// all equal (keys sharing 8 bytes or more) leave a plain sort.
func sortPending(pp *pendingPuts) []kvPair {
	var diff uint64
	first := pp.cur[0].pfx
	if len(pp.full) > 0 {
		first = pp.full[0][0].pfx
	}
	pp.each(func(c []kvPair) {
		for i := range c {
			diff |= c[i].pfx ^ first
		}
	})
	out := make([]kvPair, pp.n)
	if pp.n <= radixMin || diff == 0 {
		off := 0
		pp.each(func(c []kvPair) { off += copy(out[off:], c) })
		slices.SortFunc(out, pp.compare)
		return out
	}
	// The first digit distributes the chunks into out.
	hi := bits.Len64(diff)
	shift := max(hi-radixBits, 0)
	mask := uint64(1)<<(hi-shift) - 1
	var start [1<<radixBits + 1]int
	pp.each(func(c []kvPair) {
		for i := range c {
			start[int(c[i].pfx>>shift&mask)+1]++
		}
	})
	largest := 0
	for d := 1; d < len(start); d++ {
		largest = max(largest, start[d])
		start[d] += start[d-1]
	}
	next := start
	pp.each(func(c []kvPair) {
		for i := range c {
			d := c[i].pfx >> shift & mask
			out[next[d]] = c[i]
			next[d]++
		}
	})
	pp.full, pp.cur = nil, nil // garbage now (pp.data is still needed)
	tmp := make([]kvPair, largest)
	for d := 0; d < 1<<radixBits; d++ {
		if a, b := start[d], start[d+1]; b-a > 1 {
			radixPending(out[a:b], tmp[:b-a], shift, pp.compare)
		}
	}
	return out
}

const (
	radixBits = 11 // 2,048 buckets: their write positions stay in cache
	radixMin  = 64 // smaller runs are left to the comparison sort
)

// radixPending sorts p in place, tmp (as long) being scratch: it
// distributes p on the radixBits bits of the prefixes below bit hi (all
// higher bits are equal within p), then sorts each bucket the same way on
// the next bits.
func radixPending(p, tmp []kvPair, hi int, cmp func(a, b kvPair) int) {
	if len(p) <= radixMin || hi <= 0 {
		slices.SortFunc(p, cmp)
		return
	}
	shift := max(hi-radixBits, 0)
	mask := uint64(1)<<(hi-shift) - 1
	var start [1<<radixBits + 1]int
	for i := range p {
		start[int(p[i].pfx>>shift&mask)+1]++
	}
	for d := 1; d < len(start); d++ {
		start[d] += start[d-1]
	}
	next := start
	for i := range p {
		d := p[i].pfx >> shift & mask
		tmp[next[d]] = p[i]
		next[d]++
	}
	copy(p, tmp)
	for d := 0; d < 1<<radixBits; d++ {
		if a, b := start[d], start[d+1]; b-a > 1 {
			radixPending(p[a:b], tmp[a:b], shift, cmp)
		}
	}
}

// settleAll applies the deferred puts of every tree (before publishing).
func (tx *Tx) settleAll() {
	for _, tr := range tx.trees {
		if tr.pending != nil {
			tx.settle(tr)
		}
	}
}
