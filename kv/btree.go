package kv

import "bytes"

// This file holds the copy-on-write B+tree algorithms used by write
// transactions: insert with splitting, delete with merging, root growth and
// collapse, and freeing of the on-disk extents of replaced node versions.

// extent is a run of pages in the data file.
type extent struct {
	pgid   uint64
	npages uint32
}

// treeRoot is the root record of one named tree. Published root records are
// immutable; a write transaction works on a private copy (txid == tx.id).
type treeRoot struct {
	name    string
	root    *childRef
	count   int64
	height  int // 1 = the root is a leaf
	txid    uint64
	mod     uint64 // bumped by every change in a write tx (cursor revalidation)
	baseMod uint64 // mod when this transaction's copy was made (clone)
	ver     uint64 // txid of the last committed change (Tree.Version); 0 until published
	dropped bool
	// pending holds the puts into a tree that was empty when the write
	// transaction started filling it; they are sorted and built bottom-up
	// on the first other use of the tree (see Tx.settle).
	pending *pendingPuts
	// later holds a concurrent transaction's puts into a tree that was
	// not empty, in put order, not yet applied to its private copy (see
	// the top of later.go).
	later []kvRef
	// discards holds the keys of Tree.Discard not yet removed (see the
	// top of discard.go); values are empty.
	discards *pendingPuts
}

func (tr *treeRoot) clone(txid uint64) *treeRoot {
	c := *tr
	c.txid = txid
	c.baseMod = tr.mod
	return &c
}

// load returns the node behind r, reading and decoding it if needed.
func (db *DB) load(r *childRef) (*node, error) {
	if n := r.ptr.Load(); n != nil {
		return n, nil
	}
	buf, err := db.pager.read(r.pgid, r.npages)
	if err != nil {
		return nil, err
	}
	n, err := decodeNode(buf, r.pgid, r.npages, dataFileName)
	if err != nil {
		return nil, err
	}
	if !r.ptr.CompareAndSwap(nil, n) {
		if cur := r.ptr.Load(); cur != nil {
			return cur, nil
		}
		return n, nil // evicted again meanwhile: use our copy
	}
	n.hot.Store(true)
	db.cache.add(r, n, int64(max(len(buf), n.size))) // n.size: uncompressed
	return n, nil
}

// retire records that node version n is no longer part of the tree being
// built, so its extent can be freed once no reader can reach it.
func (tx *Tx) retire(n *node) {
	if n.txid == tx.id || tx.conc != nil { // a concurrent tx frees nothing
		return
	}
	if p := n.pgid.Load(); p != 0 {
		tx.freed = append(tx.freed, extent{p, n.npages.Load()})
		return
	}
	tx.retiredDirty = append(tx.retiredDirty, n)
}

// settleRetired decides, at commit (writer lock held), who frees the
// extents of the dirty versions this tx replaced. A checkpoint running
// without the writer lock may be writing such a version right now (it is
// part of the checkpoint's snapshot): if the checkpoint already marked it
// written, the extent is freed by this commit like any other; otherwise
// the version is marked as replaced by this txid and the checkpoint, if it
// writes it at all, frees the extent itself (checkpoint.go). A rolled-back
// tx never gets here, so a version is only ever marked by a commit.
func (tx *Tx) settleRetired() {
	for _, n := range tx.retiredDirty {
		if n.fate.CompareAndSwap(fateLive, tx.id) {
			continue
		}
		// fateWritten: pgid was stored before the mark.
		tx.freed = append(tx.freed, extent{n.pgid.Load(), n.npages.Load()})
	}
	tx.retiredDirty = nil
}

func (tx *Tx) retireRef(r *childRef) {
	if tx.conc != nil {
		return
	}
	if n := r.ptr.Load(); n != nil {
		tx.retire(n)
		return
	}
	if r.pgid != 0 {
		tx.freed = append(tx.freed, extent{r.pgid, r.npages})
	}
}

// mutable returns a version of n that tx may modify in place.
func (tx *Tx) mutable(n *node) *node {
	if n.txid == tx.id {
		return n
	}
	tx.retire(n)
	c := n.clone(tx.id)
	tx.notePrivate(c)
	return c
}

func (tx *Tx) pageSize() int { return tx.db.pageSize }

// insert puts key/val below n and returns the replacement node(s) of n (more
// than one after a split), whether the key existed before, and whether the
// put appended to the tree: n is on its right edge (edge: the root, or the
// last child of a node on it) and key sorts after every key below n. An
// append keeps the right edge short (tail.go, shedTail).
func (tx *Tx) insert(n *node, key, val []byte, kp uint64, s span, depth int, tr *treeRoot, edge bool) (res []*node, found, appended bool, err error) {
	if n.leaf {
		i, found := n.findP(key, kp, s)
		appended := edge && !found && i == n.count()
		if !found && n.count() == 1 && n.size > tx.pageSize() {
			// n holds one oversized entry (a multi-page extent). Put the new
			// key in a leaf of its own beside it instead of copying n, so
			// that neighbours of a huge value never cause it to be rewritten.
			nl := &node{leaf: true, txid: tx.id, size: pageHeaderSize + leafEntrySize(key, val),
				keys: [][]byte{key}, vals: [][]byte{val}}
			nl.buildPrefixes()
			if i == 0 {
				return []*node{nl, n}, false, appended, nil
			}
			return []*node{n, nl}, false, appended, nil
		}
		m := tx.mutable(n)
		if found {
			m.size += leafEntrySize(key, val) - leafEntrySize(m.keys[i], m.vals[i])
			m.keys[i] = key
			m.vals[i] = val
		} else {
			if m.pfx != nil {
				kp := m.admit(key) // before key joins the keys
				m.pfx = insertAt(m.pfx, i, kp)
			}
			m.keys = insertAt(m.keys, i, key)
			m.vals = insertAt(m.vals, i, val)
			m.size += leafEntrySize(key, val)
		}
		return tx.maybeSplit(m, i), found, appended, nil
	}
	if depth >= tr.height {
		return nil, false, false, errDepth(n, tr)
	}
	i := n.childP(key, kp, s)
	child, err := tx.db.load(n.kids[i])
	if err != nil {
		return nil, false, false, err
	}
	res, found, appended, err = tx.insert(child, key, val, kp, n.childSpan(i, s), depth+1, tr, edge && i == len(n.kids)-1)
	if err != nil {
		return nil, false, false, err
	}
	if len(res) == 1 && res[0] == child && !appended {
		return tx.single(n), found, false, nil // child changed in place; n already private
	}
	m := tx.mutable(n) // n itself when the child changed in place
	if len(res) > 1 || res[0] != child {
		m.kids[i] = refTo(res[0])
	}
	for j := 1; j < len(res); j++ {
		m.insertChild(i+j, separator(res[j-1], res[j]), res[j])
	}
	if appended {
		if err := tx.shedTail(m); err != nil {
			return nil, false, false, err
		}
	}
	return tx.maybeSplit(m, i+len(res)-1), found, appended, nil
}

// insertChild inserts child c at index i of the private branch m, sep
// separating it from the child before it.
func (m *node) insertChild(i int, sep []byte, c *node) {
	if m.pfx != nil {
		kp := m.admit(sep) // before sep joins the keys
		m.pfx = insertAt(m.pfx, i, kp)
	}
	m.keys = insertAt(m.keys, i, sep)
	m.kids = insertAt(m.kids, i, refTo(c))
	m.size += branchEntrySize(sep)
}

// separator returns the key that separates the adjacent pieces left and
// right in their parent: a branch piece brings its own (its first key,
// the separator it was given from below); between leaves it is the
// shortest prefix of right's first key that sorts after left's last key
// (shortSeparator). Keys may be up to MaxKeySize long, and branches are
// always resident, so a separator carries only the bytes that tell the
// two leaves apart: leaves of 1 MiB keys that differ in their first bytes
// get separators of a few bytes, and a branch stays one page.
func separator(left, right *node) []byte {
	if !right.leaf || left.count() == 0 {
		return right.key(0)
	}
	return shortSeparator(left.key(left.count()-1), right.key(0))
}

// shortSeparator returns the shortest prefix s of hi with lo < s <= hi
// (lo < hi). It aliases hi, as separators taken from leaves always did,
// except that a prefix of a key longer than sepAliasMax is copied, so
// that a branch never pins a large leaf key's memory for a few bytes of
// it.
func shortSeparator(lo, hi []byte) []byte {
	l := commonPrefixLen(lo, hi) // < len(hi), as lo < hi
	switch {
	case l+1 >= len(hi):
		return hi
	case len(hi) <= sepAliasMax:
		return hi[: l+1 : l+1]
	}
	return bytes.Clone(hi[:l+1])
}

// sepAliasMax is the longest key whose truncated separator aliases it.
const sepAliasMax = 1 << 10

func insertAt[T any](s []T, i int, v T) []T {
	var zero T
	s = append(s, zero)
	copy(s[i+1:], s[i:])
	s[i] = v
	return s
}

func removeAt[T any](s []T, i int) []T {
	copy(s[i:], s[i+1:])
	var zero T
	s[len(s)-1] = zero
	return s[:len(s)-1]
}

// maybeSplit splits m if it no longer fits in one page. at is the index of
// the last change: a change at the end (sequential insertion) leaves the
// left node full instead of half full. Leaves keep at least one entry per
// piece, branches at least two children (a node holding one huge entry may
// span several pages).
func (tx *Tx) maybeSplit(m *node, at int) []*node {
	ps := tx.pageSize()
	minE := 1
	if !m.leaf {
		minE = 2
	}
	if m.size <= ps || len(m.keys) < 2*minE {
		return tx.single(m)
	}
	limit := ps
	if at < len(m.keys)-1 && m.size <= 2*ps-pageHeaderSize {
		limit = (m.size + pageHeaderSize + 1) / 2
	}
	out := tx.splitGreedy(m, limit, ps, minE)
	if tx.conc != nil {
		for _, p := range out[1:] {
			tx.notePrivate(p)
		}
	}
	return out
}

// splitGreedy cuts m into pieces: the first holds entries while its size
// stays within limit, the others while theirs stays within max (at least
// minE entries per piece); a last piece larger than max is split again. m, private to tx, becomes the first piece (its
// arrays are truncated, not copied); the others are new nodes.
func (tx *Tx) splitGreedy(m *node, limit, max, minE int) []*node {
	out := []*node{m}
	first, firstSize := len(m.keys), m.size // m's own piece
	start, size := 0, pageHeaderSize
	for i := range m.keys {
		es := m.entrySize(i)
		if i-start >= minE && len(m.keys)-i >= minE && size+es > limit {
			if start == 0 {
				first, firstSize = i, size
				// limit is the first piece's: the others fill pages
				// (a half split must leave two halves, not two and
				// a piece of one entry).
				limit = max
			} else {
				out = append(out, m.slice(tx.id, start, i, size))
			}
			start, size = i, pageHeaderSize
		}
		size += es
	}
	if start > 0 {
		out = append(out, m.slice(tx.id, start, len(m.keys), size))
	}
	m.truncate(first, firstSize)
	if last := out[len(out)-1]; len(out) > 1 && last.size > max && len(last.keys) >= 2*minE {
		out = append(out[:len(out)-1], tx.splitGreedy(last, max, max, minE)...)
	}
	return out
}

// truncate keeps the first j entries of the unpacked node m, whose encoded
// size becomes size.
func (m *node) truncate(j, size int) {
	if j == len(m.keys) {
		return
	}
	clear(m.keys[j:])
	m.keys = m.keys[:j]
	if m.leaf {
		clear(m.vals[j:])
		m.vals = m.vals[:j]
	} else {
		clear(m.kids[j:])
		m.kids = m.kids[:j]
	}
	if m.pfx != nil {
		m.pfx = m.pfx[:j]
	}
	m.size = size
}

func (m *node) slice(txid uint64, i, j, size int) *node {
	p := &node{leaf: m.leaf, txid: txid, size: size}
	if m.leaf {
		p.keys, p.vals = entrySlices(j - i + 1)
		p.keys, p.vals = append(p.keys, m.keys[i:j]...), append(p.vals, m.vals[i:j]...)
	} else {
		p.keys = append(make([][]byte, 0, j-i+1), m.keys[i:j]...)
		p.kids = append(make([]*childRef, 0, j-i+1), m.kids[i:j]...)
	}
	if m.pfx != nil {
		p.pfx = append(make([]uint64, 0, j-i+1), m.pfx[i:j]...)
		p.plen = m.plen
	}
	return p
}

// growRoot makes a root for pieces (the result of splitting the old root).
func (tx *Tx) growRoot(tr *treeRoot, pieces []*node) {
	for len(pieces) > 1 {
		b := &node{txid: tx.id, size: pageHeaderSize}
		for j, p := range pieces {
			var sep []byte
			if j > 0 {
				sep = separator(pieces[j-1], p)
			}
			b.keys = append(b.keys, sep)
			b.kids = append(b.kids, refTo(p))
			b.size += branchEntrySize(sep)
		}
		tr.height++
		b.buildPrefixes()
		pieces = tx.maybeSplit(b, len(b.keys)-1)
	}
	tr.root = refTo(pieces[0])
}

func (tx *Tx) treePut(tr *treeRoot, key, val []byte) error {
	root, err := tx.db.load(tr.root)
	if err != nil {
		return err
	}
	res, found, appended, err := tx.insert(root, key, val, prefix64(key), fullSpan, 1, tr, true)
	if err != nil {
		return err
	}
	if appended && len(res) == 1 && !res[0].leaf {
		res = tx.tailRoot(res[0])
	}
	if len(res) > 1 {
		tx.growRoot(tr, res)
	} else if res[0] != root {
		tr.root = refTo(res[0])
	}
	if !found {
		tr.count++
	}
	tr.mod++
	return nil
}

// remove deletes key below n. It returns the replacement of n (possibly
// empty or underfull; the caller merges) and whether the key existed.
func (tx *Tx) remove(n *node, key []byte, kp uint64, s span, depth int, tr *treeRoot) (*node, bool, error) {
	if n.leaf {
		i, found := n.findP(key, kp, s)
		if !found {
			return n, false, nil
		}
		m := tx.mutable(n)
		m.size -= leafEntrySize(m.keys[i], m.vals[i])
		m.keys = removeAt(m.keys, i)
		m.vals = removeAt(m.vals, i)
		if m.pfx != nil {
			m.pfx = removeAt(m.pfx, i)
		}
		return m, true, nil
	}
	if depth >= tr.height {
		return nil, false, errDepth(n, tr)
	}
	i := n.childP(key, kp, s)
	child, err := tx.db.load(n.kids[i])
	if err != nil {
		return nil, false, err
	}
	res, found, err := tx.remove(child, key, kp, n.childSpan(i, s), depth+1, tr)
	if err != nil || !found {
		return n, found, err
	}
	m := tx.mutable(n)
	if res != child {
		m.kids[i] = refTo(res)
	}
	if err := tx.rebalance(m, i, res); err != nil {
		return nil, false, err
	}
	return m, true, nil
}

// rebalance fixes child i of the private branch m after a removal: an empty
// child is dropped, a small one is merged with a sibling if they fit. While
// deferred discards are applied in key order (tx.sweep, discard.go), any
// child is merged with its left sibling (which the sweep has finished
// with) if they fit, else with its right one: the leaves the sweep leaves
// behind are nearly full, not half empty, and the commit writes half the
// pages.
func (tx *Tx) rebalance(m *node, i int, c *node) error {
	if c.count() == 0 {
		m.size -= branchEntrySize(m.keys[i])
		m.keys = removeAt(m.keys, i)
		m.kids = removeAt(m.kids, i)
		if m.pfx != nil {
			m.pfx = removeAt(m.pfx, i)
		}
		if i == 0 && len(m.keys) > 0 {
			m.size += branchEntrySize(nil) - branchEntrySize(m.keys[0])
			m.keys[0] = nil
			if m.pfx != nil {
				m.pfx[0] = 0
			}
		}
		return nil
	}
	ps := tx.pageSize()
	if (c.size >= ps/4 && !tx.sweep) || len(m.kids) < 2 {
		return nil
	}
	l := i
	if i+1 >= len(m.kids) || tx.sweep && i > 0 {
		l = i - 1
	}
	left, right, fits, err := tx.mergeable(m, l)
	if err == nil && !fits && tx.sweep && l == i-1 && i+1 < len(m.kids) {
		l = i
		left, right, fits, err = tx.mergeable(m, l)
	}
	if err != nil || !fits {
		return err
	}
	rsep := m.keys[l+1]
	extra := 0
	if !right.leaf {
		extra = branchEntrySize(rsep) - branchEntrySize(right.keys[0])
	}
	merged := &node{leaf: left.leaf, txid: tx.id, size: left.size + right.size - pageHeaderSize + extra}
	if left.leaf {
		merged.keys, merged.vals = left.appendEntries(entrySlices(left.count() + right.count()))
		merged.keys, merged.vals = right.appendEntries(merged.keys, merged.vals)
	} else {
		merged.keys = append(append(make([][]byte, 0, len(left.keys)+len(right.keys)), left.keys...), right.keys...)
		merged.keys[len(left.keys)] = rsep
		merged.kids = append(append(make([]*childRef, 0, len(merged.keys)), left.kids...), right.kids...)
	}
	merged.buildPrefixes() // the halves may strip different prefixes
	tx.retire(left)
	tx.retire(right)
	m.kids[l] = refTo(merged)
	m.size -= branchEntrySize(rsep)
	m.keys = removeAt(m.keys, l+1)
	m.kids = removeAt(m.kids, l+1)
	if m.pfx != nil {
		m.pfx = removeAt(m.pfx, l+1)
	}
	return nil
}

// mergeable loads children l and l+1 of branch m and reports whether they
// fit in one page together.
func (tx *Tx) mergeable(m *node, l int) (left, right *node, fits bool, err error) {
	if left, err = tx.db.load(m.kids[l]); err != nil {
		return nil, nil, false, err
	}
	if right, err = tx.db.load(m.kids[l+1]); err != nil {
		return nil, nil, false, err
	}
	extra := 0
	if !right.leaf {
		extra = branchEntrySize(m.keys[l+1]) - branchEntrySize(right.keys[0])
	}
	return left, right, left.size+right.size-pageHeaderSize+extra <= tx.pageSize(), nil
}

func (tx *Tx) treeDelete(tr *treeRoot, key []byte) (bool, error) {
	return tx.treeDeleteP(tr, key, prefix64(key))
}

// treeDeleteP is treeDelete with the key's prefix64 precomputed.
func (tx *Tx) treeDeleteP(tr *treeRoot, key []byte, kp uint64) (bool, error) {
	root, err := tx.db.load(tr.root)
	if err != nil {
		return false, err
	}
	res, found, err := tx.remove(root, key, kp, fullSpan, 1, tr)
	if err != nil || !found {
		return false, err
	}
	// Collapse single-child roots.
	for !res.leaf && len(res.kids) <= 1 {
		tx.retire(res)
		if len(res.kids) == 0 {
			res = emptyLeaf(tx.id)
			tr.height = 1
			break
		}
		if res, err = tx.db.load(res.kids[0]); err != nil {
			return false, err
		}
		tr.height--
	}
	if res != root {
		tr.root = refTo(res)
	}
	tr.count--
	tr.mod++
	return true, nil
}

// freeTree retires every node of a tree (DropTree). Leaves are not loaded:
// their extents are known from the parent.
func (tx *Tx) freeTree(r *childRef, height int) error {
	if height > 1 {
		n, err := tx.db.load(r)
		if err != nil {
			return err
		}
		for _, k := range n.kids {
			if err := tx.freeTree(k, height-1); err != nil {
				return err
			}
		}
	}
	tx.retireRef(r)
	return nil
}

func newLeafRoot(txid uint64) *childRef {
	return refTo(emptyLeaf(txid))
}

// emptyLeaf returns a new empty leaf of write transaction txid.
func emptyLeaf(txid uint64) *node {
	n := &node{leaf: true, txid: txid, size: pageHeaderSize}
	n.buildPrefixes()
	return n
}

func keyInRange(k, start, end []byte) bool {
	return (start == nil || bytes.Compare(k, start) >= 0) && (end == nil || bytes.Compare(k, end) < 0)
}

// errDepth reports a branch found where the tree's height says leaves are.
func errDepth(n *node, tr *treeRoot) error {
	return corruptf(dataFileName, n.pgid.Load(), "tree %q: branch below the leaf level (height %d)", tr.name, tr.height)
}
