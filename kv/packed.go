package kv

import "encoding/binary"

// Puts into packed leaves.
//
// A put into a leaf that the transaction does not own yet copies the leaf
// (copy-on-write). The leaves of a tree read from disk, built by BulkLoad
// or re-homed by a checkpoint are packed (node.go): one page image and an
// offset per entry. Copying such a leaf into the unpacked form (clone)
// decodes every entry into two slice headers, an allocation of 48 bytes of
// pointers per entry that the garbage collector then scans, and a split
// of a full leaf copies half of those headers again. A batch of random
// puts into a large tree touches a different leaf with nearly every put,
// so that copy was most of its cost (kvbench's batch writes).
//
// putPacked copies such a leaf as a packed leaf instead: one allocation of
// the new page image, built with two copies of the old one around the new
// entry's encoding, one of the offsets and one of the search prefixes, all
// free of pointers. When the entry makes the leaf overflow its page, the
// image is cut where maybeSplit would cut the unpacked copy, and the two
// pieces share the image, each with its part of the offsets and prefixes.
// The pieces are private to the transaction (txid) but keep their packed
// form, whose arrays nobody ever changes in place: a later change of the
// same leaf in the transaction goes through mutable, which unpacks the
// leaf where it is (unpackOwn). A checkpoint writes a packed leaf by
// copying its image and keeps it as it is (checkpoint.go, writeNode).
//
// The path is not taken (putPacked returns nil and insert copies the leaf
// as before) by a concurrent transaction (it accounts its private memory
// per unpacked node), for an append on the right edge (tail.go reshapes
// the edge's private leaves in place), for an oversized leaf, when the key
// does not share the leaf's stripped prefix, and when the split would need
// more than two pieces.

// putPacked puts key/val at index i of the packed leaf n that tx does not
// own (found: replacing the entry there) and returns the replacement
// leaves, or nil when the put is not one putPacked handles.
func (tx *Tx) putPacked(n *node, i int, found bool, key, val []byte) []*node {
	ps := tx.pageSize()
	if !n.packed || n.txid == tx.id || tx.conc != nil || n.size > ps {
		return nil
	}
	if n.plen > 0 {
		if ref := n.refKey(); ref == nil || commonPrefixLen(key, ref[:n.plen]) < n.plen {
			return nil // the prefixes would be rebuilt: admit's path
		}
	}
	old := n.page
	lo := len(old)
	if i < len(n.offs) {
		lo = int(n.offs[i])
	}
	hi, rest := lo, i // the replaced bytes; the first old entry after them
	if found {
		hi, rest = len(old), i+1
		if rest < len(n.offs) {
			hi = int(n.offs[rest])
		}
	}
	es := leafEntrySize(key, val)
	delta := es - (hi - lo)
	c := len(n.offs) + 1
	if found {
		c--
	}
	size := n.size + delta

	// Where maybeSplit would cut the copy: at the first entry that makes
	// the first piece exceed limit. The cut is found on the old offsets,
	// shifted past the new entry.
	cut := c
	if size > ps {
		if c < 2 || size > 2*ps-pageHeaderSize {
			return nil
		}
		limit := ps
		if i < c-1 {
			limit = (size + pageHeaderSize + 1) / 2
		}
		off := func(j int) int { // offset of entry j in the new image
			switch {
			case j <= i:
				if j == i {
					return lo
				}
				return int(n.offs[j])
			case j-i+rest-1 < len(n.offs):
				return int(n.offs[j-i+rest-1]) + delta
			}
			return size - pageHeaderSize
		}
		for j := 1; j < c; j++ {
			if pageHeaderSize+off(j+1)-off(0) > limit {
				cut = j
				break
			}
		}
		// The second piece must fit its page: splitGreedy would cut it
		// again.
		if cut == c || size-off(cut) > ps {
			return nil
		}
	}

	// The new image, offsets and prefixes.
	img := make([]byte, size-pageHeaderSize)
	copy(img, old[:lo])
	e := lo + binary.PutUvarint(img[lo:], uint64(len(key)))
	e += binary.PutUvarint(img[e:], uint64(len(val)))
	e += copy(img[e:], key)
	copy(img[e:], val)
	copy(img[lo+es:], old[hi:])
	offs := make([]uint32, c)
	copy(offs, n.offs[:i])
	offs[i] = uint32(lo)
	for j, o := range n.offs[rest:] {
		offs[i+1+j] = uint32(int(o) + delta)
	}
	var pfx []uint64
	if n.pfx != nil {
		pfx = make([]uint64, c)
		copy(pfx, n.pfx[:i])
		pfx[i] = prefix64(key[n.plen:])
		copy(pfx[i+1:], n.pfx[rest:])
	}
	tx.retire(n)
	if cut == c {
		return tx.single(&node{leaf: true, packed: true, txid: tx.id, size: size,
			page: img, offs: offs, pfx: pfx, plen: n.plen})
	}
	split := int(offs[cut])
	left := &node{leaf: true, packed: true, txid: tx.id, size: pageHeaderSize + split,
		page: img[:split:split], offs: offs[:cut:cut], plen: n.plen}
	right := &node{leaf: true, packed: true, txid: tx.id, size: size - split,
		page: img[split:], offs: offs[cut:], plen: n.plen}
	for j := range right.offs {
		right.offs[j] -= uint32(split)
	}
	if pfx != nil {
		left.pfx, right.pfx = pfx[:cut:cut], pfx[cut:]
	}
	return []*node{left, right}
}

// unpackOwn turns the packed leaf n, private to the transaction that
// changes it, into the unpacked form where it is. Its entries keep
// aliasing the page image; the prefixes are copied, as the unpacked form
// changes them in place.
func (n *node) unpackOwn() {
	n.keys, n.vals = n.unpack()
	if n.pfx != nil {
		pfx := make([]uint64, len(n.pfx), len(n.pfx)+1)
		copy(pfx, n.pfx)
		n.pfx = pfx
	}
	n.packed, n.page, n.offs = false, nil, nil
}
