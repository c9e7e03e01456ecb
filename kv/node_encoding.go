package kv

// A node's page image: encoding, sealing, verifying and parsing (node.go
// holds the in-memory node).

import (
	"encoding/binary"
	"math"
)

// ---- on-disk node encoding ----
//
// Every node occupies an extent of one or more contiguous pages. Header:
//
//	0  crc32c of bytes [4, used)
//	4  page type
//	5  payload codec (0 none; leaves: 1 snappy, 2 zstd, as journal records)
//	6  reserved (2 bytes)
//	8  pgid of the first page (detects misdirected writes)
//	16 npages of the extent
//	20 entry count
//	24 used bytes (header included)
//	28 reserved
//
// Leaf entry: uvarint klen, uvarint vlen, key, value.
// Branch entry: uvarint klen, key, child pgid u64, child npages u32.
//
// A leaf bigger than a page (one holding a large value) is stored
// compressed (Options.PageCompression) when that makes its extent at least
// one page shorter; its "used" counts the compressed payload. Leaves that
// fit one page and branches are always stored as they are.

const (
	pageTypeMeta    = 1
	pageTypeBranch  = 2
	pageTypeLeaf    = 3
	pageTypeCatalog = 4
)

func pagesFor(size, pageSize int) uint32 {
	return uint32((size + pageSize - 1) / pageSize)
}

// encode writes n into buf (len >= n.size) for extent pgid/npages.
func (n *node) encode(buf []byte, pgid uint64, npages uint32) {
	p := buf[pageHeaderSize:]
	if n.packed {
		off := copy(p, n.page)
		sealPage(buf, pageTypeLeaf, pgid, npages, len(n.offs), pageHeaderSize+off)
		return
	}
	off := 0
	for i, k := range n.keys {
		off += binary.PutUvarint(p[off:], uint64(len(k)))
		if n.leaf {
			off += binary.PutUvarint(p[off:], uint64(len(n.vals[i])))
			off += copy(p[off:], k)
			off += copy(p[off:], n.vals[i])
		} else {
			off += copy(p[off:], k)
			cp, cn := n.kids[i].extent()
			binary.LittleEndian.PutUint64(p[off:], cp)
			binary.LittleEndian.PutUint32(p[off+8:], cn)
			off += branchEntryFix
		}
	}
	typ := byte(pageTypeBranch)
	if n.leaf {
		typ = pageTypeLeaf
	}
	sealPage(buf, typ, pgid, npages, len(n.keys), pageHeaderSize+off)
}

func sealPage(buf []byte, typ byte, pgid uint64, npages uint32, count, used int) {
	sealPageCodec(buf, typ, codecNone, pgid, npages, count, used)
}

// sealPageCodec is sealPage for a page whose payload is stored compressed
// with codec (compressed leaves: header byte 5).
func sealPageCodec(buf []byte, typ byte, codec int, pgid uint64, npages uint32, count, used int) {
	buf[4] = typ
	buf[5], buf[6], buf[7] = byte(codec), 0, 0
	binary.LittleEndian.PutUint64(buf[8:], pgid)
	binary.LittleEndian.PutUint32(buf[16:], npages)
	binary.LittleEndian.PutUint32(buf[20:], uint32(count))
	binary.LittleEndian.PutUint32(buf[24:], uint32(used))
	binary.LittleEndian.PutUint32(buf[28:], 0)
	binary.LittleEndian.PutUint32(buf[0:], checksum(buf[4:used]))
}

// verifyPage checks the header and checksum of an extent read from pgid.
// It returns the page type, entry count and payload.
func verifyPage(buf []byte, pgid uint64, npages uint32, file string) (typ byte, count int, payload []byte, err error) {
	if len(buf) < pageHeaderSize {
		return 0, 0, nil, corruptf(file, pgid, "short page (%d bytes)", len(buf))
	}
	used := int(binary.LittleEndian.Uint32(buf[24:]))
	if used < pageHeaderSize || used > len(buf) {
		return 0, 0, nil, corruptf(file, pgid, "bad used length %d", used)
	}
	if got, want := checksum(buf[4:used]), binary.LittleEndian.Uint32(buf[0:]); got != want {
		return 0, 0, nil, corruptf(file, pgid, "checksum mismatch (stored %08x, computed %08x)", want, got)
	}
	if p := binary.LittleEndian.Uint64(buf[8:]); p != pgid {
		return 0, 0, nil, corruptf(file, pgid, "page header names page %d (misdirected write)", p)
	}
	if np := binary.LittleEndian.Uint32(buf[16:]); np != npages {
		return 0, 0, nil, corruptf(file, pgid, "extent has %d pages, parent says %d", np, npages)
	}
	return buf[4], int(binary.LittleEndian.Uint32(buf[20:])), buf[pageHeaderSize:used], nil
}

// decodeNode parses a verified extent. Keys and values alias buf (or, for
// a compressed leaf, the buffer it is decompressed into).
func decodeNode(buf []byte, pgid uint64, npages uint32, file string) (*node, error) {
	typ, count, p, err := verifyPage(buf, pgid, npages, file)
	if err != nil {
		return nil, err
	}
	if typ != pageTypeLeaf && typ != pageTypeBranch {
		return nil, corruptf(file, pgid, "unexpected page type %d in tree", typ)
	}
	if codec := int(buf[5]); codec != codecNone {
		if typ != pageTypeLeaf {
			return nil, corruptf(file, pgid, "compressed branch")
		}
		if p, err = decompressPayload(codec, p); err != nil {
			return nil, corruptf(file, pgid, "compressed leaf: %v", err)
		}
	}
	return parseNode(typ, count, p, pgid, npages, file)
}

// parseNode parses the entries of a node's (uncompressed) payload.
func parseNode(typ byte, count int, p []byte, pgid uint64, npages uint32, file string) (*node, error) {
	if count > len(p) {
		return nil, corruptf(file, pgid, "entry count %d exceeds page", count)
	}
	n := &node{leaf: typ == pageTypeLeaf, size: pageHeaderSize + len(p)}
	n.pgid.Store(pgid)
	if pgid != 0 {
		n.fate.Store(fateWritten)
	}
	n.npages.Store(npages)
	if n.leaf {
		return parseLeaf(n, count, p, pgid, file)
	}
	n.keys = make([][]byte, count)
	n.kids = make([]*childRef, count)
	refs := make([]childRef, count)
	for i := range refs {
		n.kids[i] = &refs[i]
	}
	off := 0
	for i := 0; i < count; i++ {
		kl, m := binary.Uvarint(p[off:])
		if m <= 0 {
			return nil, corruptf(file, pgid, "entry %d: bad key length", i)
		}
		off += m
		if kl > uint64(len(p)-off) {
			return nil, corruptf(file, pgid, "entry %d: key overruns page", i)
		}
		n.keys[i] = p[off : off+int(kl) : off+int(kl)]
		off += int(kl)
		if len(p)-off < branchEntryFix {
			return nil, corruptf(file, pgid, "entry %d: child pointer overruns page", i)
		}
		r := n.kids[i]
		r.pgid = binary.LittleEndian.Uint64(p[off:])
		r.npages = binary.LittleEndian.Uint32(p[off+8:])
		if r.pgid < 2 || r.npages == 0 {
			return nil, corruptf(file, pgid, "entry %d: bad child extent %d+%d", i, r.pgid, r.npages)
		}
		off += branchEntryFix
	}
	if off != len(p) {
		return nil, corruptf(file, pgid, "%d trailing bytes after %d entries", len(p)-off, count)
	}
	if count == 0 {
		return nil, corruptf(file, pgid, "empty branch")
	}
	n.buildPrefixes()
	return n, nil
}

// parseLeaf verifies the entries of a leaf payload and makes n a packed
// leaf over it: one pass records each entry's offset and key prefix.
func parseLeaf(n *node, count int, p []byte, pgid uint64, file string) (*node, error) {
	offs := make([]uint32, count)
	off := 0
	for i := range count {
		if off > math.MaxUint32 {
			return nil, corruptf(file, pgid, "entry %d: offset beyond 4 GiB", i)
		}
		offs[i] = uint32(off)
		kl, m := binary.Uvarint(p[off:])
		if m <= 0 {
			return nil, corruptf(file, pgid, "entry %d: bad key length", i)
		}
		off += m
		vl, m := binary.Uvarint(p[off:])
		if m <= 0 {
			return nil, corruptf(file, pgid, "entry %d: bad value length", i)
		}
		off += m
		if kl > uint64(len(p)-off) {
			return nil, corruptf(file, pgid, "entry %d: key overruns page", i)
		}
		off += int(kl)
		if vl > uint64(len(p)-off) {
			return nil, corruptf(file, pgid, "entry %d: value overruns page", i)
		}
		off += int(vl)
	}
	if off != len(p) {
		return nil, corruptf(file, pgid, "%d trailing bytes after %d entries", len(p)-off, count)
	}
	n.packed, n.page, n.offs = true, p, offs
	n.buildPrefixes()
	return n, nil
}
