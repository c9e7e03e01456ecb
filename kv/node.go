package kv

import (
	"bytes"
	"encoding/binary"
	"math"
	"sync/atomic"
)

// node is the in-memory form of one B+tree node. A node reachable from a
// published snapshot is immutable, except for the lazily filled child
// pointers (childRef.ptr) and its disk location, which a checkpoint records
// once it has written the node. A write transaction modifies a node in place
// only when it created that node version itself (txid == tx.id); otherwise it
// copies it first (copy-on-write, path copying up to the root).
//
// Leaf: key(i) -> val(i), strictly ascending.
// Branch: kids[i] holds keys >= keys[i] and < keys[i+1]; keys[0] is ignored
// (minus infinity) and stored empty.
//
// A leaf has one of two forms. A leaf being built or modified by a write
// transaction holds its entries as per-entry slices (keys, vals), which
// insertion and splitting rearrange cheaply. A leaf decoded from a page
// image (loaded from disk, or re-homed by the checkpoint that wrote it) is
// packed: page is its uncompressed payload, exactly as stored, and offs[i]
// the offset of entry i in it; keys and vals are nil. A packed leaf holds
// three pointers whatever its entry count (the garbage collector does not
// walk two slice headers per entry), costs no per-entry allocation when it
// is loaded, and a point read goes from the prefix array to the entry's
// bytes in the page without a detour through a slice header. A write
// transaction unpacks a leaf when it copies it (clone). Branches always use
// keys and kids.
//
// The fields a lookup reads come first (leaf, packed, hot, plen, pfx, offs,
// page, kids: the first 112 bytes), so that a search touches two cache
// lines of the node rather than four (the struct is 208 bytes).
type node struct {
	leaf   bool
	packed bool // leaf in packed form (page, offs)
	// hot is the clock bit of the node cache (cache.go), set by readers.
	hot  atomic.Bool
	plen int
	// pfx holds 8 bytes of every key, big-endian, zero padded, so that
	// binary search mostly compares integers in one small array instead of
	// chasing key pointers: the 8 bytes after the first plen, which all the
	// node's keys share (the stripped prefix; branches: all separators
	// but keys[0], whose pfx entry is unused). Decoding and publishing
	// build it; the write path keeps it in step with keys (a node whose
	// pfx is nil is searched on the keys directly).
	pfx    []uint64
	offs   []uint32 // packed leaf: offset in page of each entry
	page   []byte   // packed leaf: the entries, in the on-disk leaf format
	kids   []*childRef
	keys   [][]byte
	vals   [][]byte
	txid   uint64        // write tx that created this version
	pgid   atomic.Uint64 // first page on disk; 0 while dirty
	npages atomic.Uint32 // pages of the on-disk extent
	size   int           // encoded size in bytes, header included
	// fate settles who frees the extent of a version that a checkpoint
	// writes while a commit replaces it (checkpoint.go): fateLive, then
	// either fateWritten (set by the checkpoint after it stored pgid) or
	// the txid of the commit that replaced the version while it was
	// still dirty. Whoever loses the compare-and-swap frees the extent.
	fate atomic.Uint64
}

// Values of node.fate other than a replacing commit's txid.
const (
	fateLive    = 0
	fateWritten = ^uint64(0)
)

// touch marks a leaf as recently used (a shared write only when the bit
// was clear).
func (n *node) touch() {
	if !n.hot.Load() {
		n.hot.Store(true)
	}
}

func prefix64(k []byte) uint64 {
	if len(k) >= 8 {
		return binary.BigEndian.Uint64(k)
	}
	var b [8]byte
	copy(b[:], k)
	return binary.BigEndian.Uint64(b[:])
}

// minStrip is the shortest common key prefix that a node strips before
// taking its 8 search bytes. Stripping costs every search one comparison
// of the key with the node's reference key (a cache line more), which only
// pays when the 8 bytes at offset 0 would often tie: keys that share a long
// prefix (a collection or index prefix, "user…" keys) rather than random
// keys, which share a byte or two within a leaf.
const minStrip = 4

// buildPrefixes computes the stripped prefix length and the search
// prefixes of n.
func (n *node) buildPrefixes() {
	plen := 0
	if c, lo := n.count(), n.firstSep(); c-lo >= 2 {
		if l := commonPrefixLen(n.key(lo), n.key(c-1)); l >= minStrip {
			plen = l
		}
	}
	n.rebuildPrefixes(plen)
}

// rebuildPrefixes recomputes the search prefixes of n stripping plen bytes
// (which all its keys share).
func (n *node) rebuildPrefixes(plen int) {
	n.plen = plen
	p := make([]uint64, n.count(), n.count()+1)
	for i := n.firstSep(); i < len(p); i++ {
		p[i] = prefix64(n.key(i)[plen:])
	}
	n.pfx = p
}

// firstSep is the index of the first key searched: 1 in a branch, whose
// keys[0] stands for minus infinity.
func (n *node) firstSep() int {
	if n.leaf {
		return 0
	}
	return 1
}

// refKey returns the key the stripped prefix is read from: the first
// searched key, or nil if the node has none.
func (n *node) refKey() []byte {
	if i := n.firstSep(); i < n.count() {
		return n.key(i)
	}
	return nil
}

func commonPrefixLen(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+8 <= n && binary.LittleEndian.Uint64(a[i:]) == binary.LittleEndian.Uint64(b[i:]) {
		i += 8
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// admit prepares the search prefixes of the private node n for key k
// joining its keys and returns k's search prefix. If k does not share the
// stripped prefix, the prefix is shortened (or dropped) and the search
// prefixes of the keys already there are recomputed.
func (n *node) admit(k []byte) uint64 {
	if n.plen > 0 {
		ref := n.refKey()
		l := 0
		if ref != nil {
			l = commonPrefixLen(k, ref[:n.plen])
		}
		if l < n.plen {
			if l < minStrip {
				l = 0
			}
			n.rebuildPrefixes(l)
		}
	}
	return prefix64(k[n.plen:])
}

// stripped compares key with the stripped prefix of n: -1 if key sorts
// before every key of n that shares it, +1 if after, 0 if key starts with
// it. ok is false if n has no reference key (then search n directly).
func (n *node) stripped(key []byte) (c int, ok bool) {
	ref := n.refKey()
	if ref == nil {
		return 0, false
	}
	p := ref[:n.plen]
	if len(key) < len(p) {
		if bytes.Equal(key, p[:len(key)]) {
			return -1, true // a proper prefix of the stripped prefix
		}
		return bytes.Compare(key, p[:len(key)]), true
	}
	return bytes.Compare(key[:len(p)], p), true
}

// count returns the number of entries of n.
func (n *node) count() int {
	if n.packed {
		return len(n.offs)
	}
	return len(n.keys)
}

// key returns the key of entry i.
func (n *node) key(i int) []byte {
	if n.packed {
		k, _ := n.entry(i)
		return k
	}
	return n.keys[i]
}

// val returns the value of leaf entry i.
func (n *node) val(i int) []byte {
	if n.packed {
		_, v := n.entry(i)
		return v
	}
	return n.vals[i]
}

// kv returns the key and value of leaf entry i.
func (n *node) kv(i int) ([]byte, []byte) {
	if n.packed {
		return n.entry(i)
	}
	return n.keys[i], n.vals[i]
}

// entry decodes entry i of a packed leaf (uvarint klen, uvarint vlen, key,
// value; parseNode verified every entry, so this cannot fail). Both
// lengths below 128, the common case, take one byte each.
func (n *node) entry(i int) ([]byte, []byte) {
	o, p := int(n.offs[i]), n.page
	if kl, vl := int(p[o]), int(p[o+1]); kl|vl < 0x80 {
		k, v := o+2, o+2+kl
		return p[k:v:v], p[v : v+vl : v+vl]
	}
	kl, a := binary.Uvarint(p[o:])
	vl, b := binary.Uvarint(p[o+a:])
	k := o + a + b
	v := k + int(kl)
	return p[k:v:v], p[v : v+int(vl) : v+int(vl)]
}

// unpack returns the entries of leaf n as slices (aliasing the page of a
// packed leaf), with room for one more.
func (n *node) unpack() (keys, vals [][]byte) {
	keys, vals = entrySlices(n.count() + 1)
	return n.appendEntries(keys, vals)
}

// entrySlices returns empty key and value slices with capacity c, carved
// from one allocation.
func entrySlices(c int) (keys, vals [][]byte) {
	kv := make([][]byte, 2*c)
	return kv[:0:c], kv[c : c : 2*c]
}

// appendEntries appends the keys and values of leaf n to keys and vals.
func (n *node) appendEntries(keys, vals [][]byte) ([][]byte, [][]byte) {
	if !n.packed {
		return append(keys, n.keys...), append(vals, n.vals...)
	}
	for i := range n.offs {
		k, v := n.entry(i)
		keys, vals = append(keys, k), append(vals, v)
	}
	return keys, vals
}

// A span bounds the search prefixes of the keys below one child of a
// branch: the child's keys lie between two separators of its parent, so
// their search prefixes (when the child strips the same prefix as the
// parent, plen) lie between the separators' ones. A search descending
// the tree passes it down, and a node's search starts where linear
// interpolation between the bounds puts the key (see searchPfx). plen < 0
// means no bounds.
type span struct {
	lo, hi uint64
	plen   int
}

var (
	noSpan   = span{plen: -1}
	fullSpan = span{lo: 0, hi: math.MaxUint64} // any plen: see childSpan
)

// childSpan returns the span of child i of branch n, searched with s.
func (n *node) childSpan(i int, s span) span {
	if s.plen != n.plen {
		if s.hi != math.MaxUint64 || s.lo != 0 {
			s = fullSpan
		}
		s.plen = n.plen
	}
	if n.pfx == nil {
		return noSpan
	}
	if i >= 1 {
		s.lo = n.pfx[i]
	}
	if i+1 < len(n.pfx) {
		s.hi = n.pfx[i+1]
	}
	return s
}

// findP returns the first index i of leaf n with key(i) >= key and whether
// it is an exact match; kp is the key's prefix64 and s the span of the
// node's search prefixes, if known (noSpan otherwise).
func (n *node) findP(key []byte, kp uint64, s span) (int, bool) {
	if n.pfx == nil {
		return n.search(key)
	}
	if n.plen > 0 {
		switch c, ok := n.stripped(key); {
		case !ok:
			return n.search(key)
		case c < 0:
			return 0, false
		case c > 0:
			return n.count(), false
		}
		kp = prefix64(key[n.plen:])
	}
	pfx := n.pfx
	i := searchPfx(pfx, 0, kp, s, n.plen)
	if i == len(pfx) || pfx[i] != kp {
		return i, false
	}
	c := bytes.Compare(n.key(i), key)
	if c >= 0 {
		return i, c == 0
	}
	// More keys share kp: search them on the keys.
	lo, hi := i+1, len(pfx)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if pfx[m] != kp {
			hi = m // pfx[m] > kp
		} else if c := bytes.Compare(n.key(m), key); c < 0 {
			lo = m + 1
		} else if c > 0 {
			hi = m
		} else {
			return m, true // keys are unique
		}
	}
	return lo, false
}

// childP returns the index of the child of branch n that may hold key; kp
// is the key's prefix64 and s the span of the node's search prefixes, if
// known (noSpan otherwise).
func (n *node) childP(key []byte, kp uint64, s span) int {
	if n.pfx == nil {
		return childIndex(n.keys, key)
	}
	if n.plen > 0 {
		switch c, ok := n.stripped(key); {
		case !ok:
			return childIndex(n.keys, key)
		case c < 0:
			return 0
		case c > 0:
			return len(n.keys) - 1
		}
		kp = prefix64(key[n.plen:])
	}
	pfx := n.pfx
	i := searchPfx(pfx, 1, kp, s, n.plen)
	if i == len(pfx) || pfx[i] != kp {
		return i - 1
	}
	c := bytes.Compare(n.keys[i], key)
	if c >= 0 {
		if c == 0 {
			return i // separators are unique: child i starts at key
		}
		return i - 1
	}
	lo, hi := i+1, len(pfx)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if pfx[m] != kp {
			hi = m
		} else if c := bytes.Compare(n.keys[m], key); c < 0 {
			lo = m + 1
		} else if c > 0 {
			hi = m
		} else {
			return m
		}
	}
	return lo - 1
}

// searchPfx returns the first index i >= lo with pfx[i] >= kp, or
// len(pfx). pfx is ascending.
//
// A plain binary search over a node's prefixes touches a cache line per
// probe until the last few: four or five for a branch of 200 separators,
// each a likely miss in a large tree. When the span s of the prefixes is
// known (it is, for the node's plen), the search starts where linear
// interpolation between its bounds puts kp, then gallops outwards in
// steps of 4, 8, 16... to bracket the answer and finishes with a binary
// search of the bracket. Keys spread evenly over their range — random
// keys, hashes, ids — are found in one or two cache lines; skewed ones
// cost at most about twice the probes of a binary search.
func searchPfx(pfx []uint64, lo int, kp uint64, s span, plen int) int {
	hi := len(pfx)
	if s.plen == plen && plen == 0 && hi-lo >= 8 && s.hi > s.lo {
		g := lo
		if kp >= s.hi {
			g = hi - 1
		} else if kp > s.lo {
			g = lo + int(float64(kp-s.lo)/float64(s.hi-s.lo)*float64(hi-lo))
			g = min(g, hi-1)
		}
		if pfx[g] < kp {
			lo = g + 1
			for step := 4; ; step *= 2 {
				j := g + step
				if j >= hi {
					break
				}
				if pfx[j] >= kp {
					hi = j
					break
				}
				lo = j + 1
			}
		} else {
			hi = g
			for step := 4; ; step *= 2 {
				j := g - step
				if j < lo {
					break
				}
				if pfx[j] < kp {
					lo = j + 1
					break
				}
				hi = j
			}
		}
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if pfx[m] < kp {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// Every node a write transaction creates gets its search prefixes when it
// is created (decoded, cloned, split, merged, bulk-built or new), and the
// write path keeps them in step with its keys, so a commit has nothing to
// compute before publishing: it does not re-read every key of every node
// it dirtied, nor visit the children of every branch on its path to find
// the new ones (at 5,000,000 keys, a commit of one put walked some 600
// child pointers). Leaves stay unpacked until the checkpoint that writes
// them re-homes them on their page image (checkpoint.go): packing at
// commit would add a copy of every dirtied leaf to the latency of every
// commit.
//
// Builds with invariants enabled (-race, -tags invariants) check this, and
// more, for every node a commit publishes (invariants.go, checkSealed).

// childRef points from a branch (or a tree root record) to a child. ptr is
// nil until the child has been loaded from disk; childRefs are shared
// between node versions, so a child loaded through one snapshot is loaded
// for all. A writer that replaces a child installs a new childRef.
type childRef struct {
	ptr    atomic.Pointer[node]
	pgid   uint64
	npages uint32
}

func refTo(n *node) *childRef {
	r := &childRef{}
	r.ptr.Store(n)
	return r
}

// extent reports where the child lives on disk (0 if it was never written).
func (r *childRef) extent() (uint64, uint32) {
	if n := r.ptr.Load(); n != nil {
		return n.pgid.Load(), n.npages.Load()
	}
	return r.pgid, r.npages
}

const (
	pageHeaderSize = 32
	branchEntryFix = 12 // child pgid (8) + npages (4)
)

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

func leafEntrySize(k, v []byte) int {
	return uvarintLen(uint64(len(k))) + uvarintLen(uint64(len(v))) + len(k) + len(v)
}

func branchEntrySize(k []byte) int {
	return uvarintLen(uint64(len(k))) + len(k) + branchEntryFix
}

func (n *node) entrySize(i int) int {
	if n.leaf {
		return leafEntrySize(n.kv(i))
	}
	return branchEntrySize(n.keys[i])
}

// search returns the first index i with key(i) >= key and whether it is
// an exact match.
func (n *node) search(key []byte) (int, bool) {
	lo, hi := 0, n.count()
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bytes.Compare(n.key(m), key) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < n.count() && bytes.Equal(n.key(lo), key)
}

// childIndex returns the index of the child of branch keys that may hold key.
func childIndex(keys [][]byte, key []byte) int {
	lo, hi := 1, len(keys)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bytes.Compare(keys[m], key) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// clone returns a private, dirty copy of n for write transaction txid.
// A packed leaf is unpacked: the copy's entries alias its page.
func (n *node) clone(txid uint64) *node {
	c := &node{leaf: n.leaf, txid: txid, size: n.size}
	if n.leaf {
		c.keys, c.vals = n.unpack()
	} else {
		c.keys = make([][]byte, len(n.keys), len(n.keys)+1)
		copy(c.keys, n.keys)
		c.kids = make([]*childRef, len(n.kids), len(n.kids)+1)
		copy(c.kids, n.kids)
	}
	if n.pfx != nil {
		c.pfx = make([]uint64, len(n.pfx), len(n.pfx)+1)
		copy(c.pfx, n.pfx)
		c.plen = n.plen
	}
	return c
}
