package kv

import (
	"bytes"
	"fmt"
)

// Deferred discards.
//
// Tree.Delete reports whether the key was there, so it must find the key
// at once: a descent from the root per key, which in a large tree is a
// handful of cache misses at every level, and a copy of every leaf it
// touches. Removing a random half of a large tree in one transaction (the
// benchmark's removals) is dominated by those descents. Tree.Discard
// removes a key without reporting whether it was there, so it does not
// look: it logs the delete (the journal record is the same as Delete's)
// and appends the key to the tree's list of discards, like the deferred
// puts into an empty tree (bulk.go). The first other use of the tree in
// the transaction — a read, put, delete, cursor, Len, or the commit —
// sorts the list (the radix sort of the deferred puts) and deletes the
// keys in ascending order: consecutive keys fall in the same or the next
// leaf, so each descent runs through nodes already in cache, and every
// leaf is copied once. The transaction's view is the same as if each key
// had been deleted when it was discarded: nothing reads the tree between
// the discard and the settling.
//
// A concurrent transaction, an ordinary one while concurrent ones are live
// (its deletes are checked against their claims) and a tree with deferred
// puts or later puts pending use Delete instead.
//
// Settling can fail (a page that cannot be read): the error is returned by
// the operation that settled, and the transaction can no longer commit
// (tx.settleErr), since its journal record already holds the deletes its
// tree may be missing.

// Discard removes key from the tree if it is there, without reporting
// whether it was (see Delete). Removing many keys this way is much cheaper
// than Delete: the removals are applied together, in key order, when the
// tree is next used. A discard counts as a change of the tree even if the
// key was absent: the commit writes it to the journal and the tree's
// Version changes.
func (t *Tree) Discard(key []byte) error {
	if err := t.tx.checkWrite(); err != nil {
		return err
	}
	if err := t.check(); err != nil {
		return err
	}
	if len(key) == 0 || len(key) > MaxKeySize {
		return nil
	}
	tr := t.tr
	if t.tx.coordinated() || tr.pending != nil || tr.later != nil {
		_, err := t.Delete(key)
		return err
	}
	if tr.discards == nil {
		if tr.count == 0 {
			return nil // nothing to remove
		}
		tr.discards = &pendingPuts{}
	}
	tr.discards.add(key, nil)
	tr.mod++
	t.tx.dirty = true
	t.tx.log.del(tr.name, key)
	return nil
}

// settleDiscards applies the deferred discards of tree tr in key order.
func (tx *Tx) settleDiscards(tr *treeRoot) error {
	pp := tr.discards
	if pp == nil {
		return nil
	}
	tr.discards = nil
	p := sortPending(pp)
	tx.sweep = true
	defer func() { tx.sweep = false }()
	var ahead byte
	for i := range p {
		// The keys lie in discard order, so each is a cache miss: touch
		// the ones a few entries ahead so that their misses overlap.
		if j := i + settleAhead; j < len(p) {
			ahead ^= pp.data[p[j].loc][p[j].off]
		}
		k := pp.key(&p[i])
		if i+1 < len(p) && p[i].pfx == p[i+1].pfx && bytes.Equal(k, pp.key(&p[i+1])) {
			continue // discarded twice
		}
		if _, err := tx.treeDeleteP(tr, k, p[i].pfx); err != nil {
			err = fmt.Errorf("kv: discard in %q: %w", tr.name, err)
			if tx.settleErr == nil {
				tx.settleErr = err
			}
			return err
		}
	}
	tx.ahead = ahead
	return nil
}

// settleAllDiscards applies the deferred discards of every tree (before
// publishing) and reports whether the transaction can commit.
func (tx *Tx) settleAllDiscards() error {
	for _, tr := range tx.trees {
		if err := tx.settleDiscards(tr); err != nil {
			return err
		}
	}
	return tx.settleErr
}
