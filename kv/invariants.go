package kv

// Engine self-checks.
//
// The checks in this file verify invariants that the engine relies on but
// that no error path can detect: a commit publishes only nodes whose
// search prefixes, key order, separator bounds and encoded size are in
// step with their entries (checkSealed), a checkpoint releases no page that
// a registered snapshot can still reach (checkRelease), and after a
// checkpoint the free list holds no page twice, no page waiting to be freed
// and no page of the current tree (checkAccounting). A violation is a bug in
// kv, not damage on disk, so they panic.
//
// They run only when invariants.Enabled (builds with the invariants tag, as
// the end-to-end tests build cairnd, or with the race detector), behind
// `if invariants.Enabled`, which the compiler removes from other builds.
//
// Re-reading the whole data file after each checkpoint (verifyCheckpoint)
// is not among them: a checkpoint carries forward the references to
// leaves it never read, so on a database damaged before it opened the
// check would blame the checkpoint for old damage. Tests that start from
// sound files ask for it per DB (testingKnobs.verifyCheckpoints).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
)

// checkSealed verifies, for every node created by txid at or below n (n
// at height h of its tree, its keys bounded by lo <= key < hi, nil meaning
// unbounded), that the write path kept it ready to publish: search
// prefixes built and current, keys strictly ascending and within bounds,
// the encoded size equal to the sum of its entries, a leaf exactly at
// height 1. The resident children that n shares with older versions are
// checked against their bounds by their first and last key only.
func (n *node) checkSealed(txid uint64, h int, lo, hi []byte) {
	if n.txid != txid {
		return
	}
	if n.pfx == nil {
		panic(fmt.Sprintf("kv: invariant: node of tx %d published without search prefixes (leaf %v, %d keys)", txid, n.leaf, n.count()))
	}
	if n.leaf != (h == 1) {
		panic(fmt.Sprintf("kv: invariant: node of tx %d at height %d is leaf=%v", txid, h, n.leaf))
	}
	n.checkPrefixes()
	n.checkOrder(txid, lo, hi)
	n.checkSize(txid)
	if n.leaf {
		return
	}
	if len(n.kids) != len(n.keys) {
		panic(fmt.Sprintf("kv: invariant: branch of tx %d has %d children for %d keys", txid, len(n.kids), len(n.keys)))
	}
	for i, k := range n.kids {
		c := k.ptr.Load()
		if c == nil {
			continue // on disk: Check verifies it
		}
		clo, chi := lo, hi
		if i > 0 {
			clo = n.keys[i]
		}
		if i+1 < len(n.keys) {
			chi = n.keys[i+1]
		}
		if c.txid == txid {
			c.checkSealed(txid, h-1, clo, chi)
			continue
		}
		if c.count() > c.firstSep() {
			first, last := c.key(c.firstSep()), c.key(c.count()-1)
			if bytes.Compare(first, clo) < 0 || (chi != nil && bytes.Compare(last, chi) >= 0) {
				panic(fmt.Sprintf("kv: invariant: child %d of a branch of tx %d holds keys %s..%s outside its separators %s..%s",
					i, txid, keyString(first), keyString(last), keyString(clo), keyString(chi)))
			}
		}
	}
}

// checkOrder verifies that n's searched keys ascend strictly and lie in
// [lo, hi).
func (n *node) checkOrder(txid uint64, lo, hi []byte) {
	var prev []byte
	for i := n.firstSep(); i < n.count(); i++ {
		k := n.key(i)
		if i > n.firstSep() && bytes.Compare(prev, k) >= 0 {
			panic(fmt.Sprintf("kv: invariant: node of tx %d (leaf %v): key %d %s does not sort after %s", txid, n.leaf, i, keyString(k), keyString(prev)))
		}
		if bytes.Compare(k, lo) < 0 || (hi != nil && bytes.Compare(k, hi) >= 0) {
			panic(fmt.Sprintf("kv: invariant: node of tx %d (leaf %v): key %d %s outside its parent's bounds %s..%s", txid, n.leaf, i, keyString(k), keyString(lo), keyString(hi)))
		}
		prev = k
	}
}

// checkSize verifies that n.size, which the write path maintains entry by
// entry and the checkpoint encodes into, is the node's encoded size.
func (n *node) checkSize(txid uint64) {
	want := pageHeaderSize
	if n.packed {
		want += len(n.page)
	} else {
		if n.leaf && len(n.vals) != len(n.keys) {
			panic(fmt.Sprintf("kv: invariant: leaf of tx %d has %d values for %d keys", txid, len(n.vals), len(n.keys)))
		}
		for i := range n.keys {
			want += n.entrySize(i)
		}
	}
	if n.size != want {
		panic(fmt.Sprintf("kv: invariant: node of tx %d (leaf %v, %d keys) records size %d, its entries take %d", txid, n.leaf, n.count(), n.size, want))
	}
}

// checkPrefixes verifies that n's search prefixes match its keys.
func (n *node) checkPrefixes() {
	if len(n.pfx) != n.count() {
		panic(fmt.Sprintf("kv: invariant: node has %d prefixes for %d keys", len(n.pfx), n.count()))
	}
	ref := n.refKey() // nil: no key searched, nothing to check
	if ref != nil && len(ref) < n.plen {
		panic(fmt.Sprintf("kv: invariant: node strips %d bytes but its reference key is %s", n.plen, keyString(ref)))
	}
	for i := n.firstSep(); i < len(n.pfx); i++ {
		k := n.key(i)
		if !bytes.HasPrefix(k, ref[:n.plen]) {
			panic(fmt.Sprintf("kv: invariant: entry %d of %d does not share the stripped prefix (%d bytes, leaf %v)", i, n.count(), n.plen, n.leaf))
		}
		if n.pfx[i] != prefix64(k[n.plen:]) {
			panic(fmt.Sprintf("kv: invariant: stale prefix at entry %d of %d (leaf %v)", i, n.count(), n.leaf))
		}
	}
}

// checkRelease verifies that no extent a checkpoint is about to release
// (hand back to the allocator) is reachable from a registered snapshot
// through the nodes in memory. Called with the writer lock held.
func (db *DB) checkRelease(exts []extent, oldest uint64) {
	if len(exts) == 0 {
		return
	}
	rel := map[uint64]bool{}
	for _, e := range exts {
		for i := range uint64(e.npages) {
			rel[e.pgid+i] = true
		}
	}
	for _, s := range db.snaps {
		var walk func(r *childRef, path string)
		walk = func(r *childRef, path string) {
			n := r.ptr.Load()
			pg, np := r.extent()
			for i := range uint64(np) {
				if rel[pg+i] {
					var txid uint64
					if n != nil {
						txid = n.txid
					}
					panic(fmt.Sprintf("kv: invariant: releasing page %d reachable from snapshot %d (refs %d, oldest %d) at %s; node loaded=%v txid=%d",
						pg+i, s.txid, s.refs.Load(), oldest, path, n != nil, txid))
				}
			}
			if n != nil && !n.leaf {
				for i, k := range n.kids {
					walk(k, fmt.Sprintf("%s/%d", path, i))
				}
			}
		}
		for name, tr := range s.trees {
			walk(tr.root, name)
		}
	}
}

// checkAccounting verifies, after a checkpoint, that the free list holds
// every page at most once, that no page is both free and waiting to be
// freed, and that no page of the current trees is free. Called with the
// checkpoint lock held.
func (db *DB) checkAccounting() {
	free := make(map[uint64]bool, len(db.alloc.free))
	for _, p := range db.alloc.free {
		if free[p] {
			panic(fmt.Sprintf("kv: invariant: page %d twice in the free list", p))
		}
		if p < 2 || p >= db.alloc.end {
			panic(fmt.Sprintf("kv: invariant: free page %d outside the data pages 2..%d", p, db.alloc.end))
		}
		free[p] = true
	}
	for _, f := range db.freedAt {
		for _, e := range f.pages {
			for i := range uint64(e.npages) {
				if free[e.pgid+i] {
					panic(fmt.Sprintf("kv: invariant: page %d both free and pending (freed by tx %d)", e.pgid+i, f.txid))
				}
			}
		}
	}
	var walk func(r *childRef, h int)
	walk = func(r *childRef, h int) {
		pg, np := r.extent()
		for i := range uint64(np) {
			if free[pg+i] {
				panic(fmt.Sprintf("kv: invariant: live page %d is in the free list", pg+i))
			}
		}
		if h > 1 {
			n, err := db.load(r)
			if err != nil {
				// Damage on disk, not an accounting error; Check reports it.
				return
			}
			for _, k := range n.kids {
				walk(k, h-1)
			}
		}
	}
	for _, tr := range db.current.Load().trees {
		walk(tr.root, tr.height)
	}
}

// verifyCheckpoint re-reads and checks every page the checkpoint just
// made durable (testingKnobs.verifyCheckpoints). Only damage found by
// reads that all succeeded counts: a read that fails (a test's simulated
// crash invalidates the file handles under a background checkpoint) says
// nothing about what was written, and the damage reported beside it may
// be its consequence (no meta page could be read).
func (db *DB) verifyCheckpoint() {
	err := checkFile(context.Background(), &pager{f: db.pager.f, pageSize: db.pageSize})
	if err == nil || !onlyCorruption(err) {
		return
	}
	panic(fmt.Sprintf("kv: checkpoint %d produced a bad file: %v", db.meta.ckptID, err))
}

// onlyCorruption reports whether err, and every error it joins, is a
// *CorruptionError.
func onlyCorruption(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !onlyCorruption(e) {
				return false
			}
		}
		return true
	}
	ce := (*CorruptionError)(nil)
	return errors.As(err, &ce)
}
