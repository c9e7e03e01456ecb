package kv

import "fmt"

// Tree is a named, ordered key/value tree as seen by one transaction. It is
// valid for the life of its Tx.
type Tree struct {
	tx *Tx
	tr *treeRoot
}

// Name returns the tree's name.
func (t *Tree) Name() string { return t.tr.name }

// Version returns the id of the last committed write transaction that
// created or changed the tree, as t's transaction sees it: within one
// DB, two Trees of the same name with the same nonzero Version hold the
// same entries, whichever transactions they belong to. A commit that only
// opened the tree, or moved its pages (Compact), leaves it unchanged.
// Version is 0 for a tree the (write) transaction has created or changed
// itself: its entries have no committed version yet.
func (t *Tree) Version() uint64 {
	if t.tr.txid == t.tx.id && t.tx.writable && (t.tr.ver == 0 || t.tr.mod != t.tr.baseMod) {
		return 0
	}
	return t.tr.ver
}

func (t *Tree) check() error {
	if t.tx.closed {
		return ErrTxClosed
	}
	if t.tx.conc != nil {
		if err := t.tx.concCheck(); err != nil {
			return err
		}
	}
	if t.tr.dropped {
		return fmt.Errorf("%w: %q (dropped)", ErrTreeNotFound, t.tr.name)
	}
	return nil
}

// ready is check plus applying deferred puts, before any use of the tree
// other than Put.
func (t *Tree) ready() error {
	if err := t.check(); err != nil {
		return err
	}
	return t.settle()
}

// settle applies the tree's deferred puts: those into a tree that was
// empty (Tx.settle) and a concurrent transaction's later ones
// (Tx.settleLater).
func (t *Tree) settle() error {
	if t.tr.discards != nil {
		if err := t.tx.settleDiscards(t.tr); err != nil {
			return err
		}
	}
	if t.tr.pending != nil {
		t.tx.settle(t.tr)
	}
	if t.tr.later != nil {
		return t.tx.settleLater(t.tr)
	}
	return nil
}

// Get returns the value of key, or (nil, nil) if absent. The slice aliases
// engine memory: it is valid until the transaction ends and must not be
// modified.
func (t *Tree) Get(key []byte) ([]byte, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	if t.tr.discards != nil {
		if err := t.tx.settleDiscards(t.tr); err != nil {
			return nil, err
		}
	}
	if t.tr.later != nil {
		if v, ok := t.tr.laterGet(key); ok {
			return v, nil
		}
		if len(t.tr.later) > laterScan {
			if err := t.tx.settleLater(t.tr); err != nil {
				return nil, err
			}
		}
	}
	if t.tr.pending != nil {
		t.tx.settle(t.tr)
	}
	r := t.tr.root
	kp := prefix64(key)
	s := fullSpan
	for depth := 1; ; depth++ {
		n := r.ptr.Load()
		if n == nil {
			var err error
			if n, err = t.tx.db.load(r); err != nil {
				return nil, err
			}
		}
		if n.leaf {
			n.touch()
			if i, found := n.findP(key, kp, s); found {
				return n.val(i), nil
			}
			return nil, nil
		}
		if depth >= t.tr.height {
			return nil, errDepth(n, t.tr)
		}
		i := n.childP(key, kp, s)
		s = n.childSpan(i, s)
		r = n.kids[i]
	}
}

// Put sets key to value. The engine copies both.
func (t *Tree) Put(key, value []byte) error { return t.put(key, value, true) }

// put is Put; without copy, key and value are kept as they are (the
// caller guarantees that nothing changes them: replayParts' own).
func (t *Tree) put(key, value []byte, copy bool) error {
	if err := t.tx.checkWrite(); err != nil {
		return err
	}
	if err := t.check(); err != nil {
		return err
	}
	if err := validKey(key); err != nil {
		return err
	}
	if len(value) > MaxValueSize {
		return fmt.Errorf("%w: %d bytes (max %d)", ErrValueTooLarge, len(value), MaxValueSize)
	}
	if t.tr.discards != nil {
		if err := t.tx.settleDiscards(t.tr); err != nil {
			return err
		}
	}
	if t.tx.coordinated() {
		if err := t.claimPut(key, value); err != nil {
			return err
		}
	}
	if t.tx.conc != nil && t.tr.pending == nil && (t.tr.count > 0 || t.tr.height > 1) {
		t.putLater(key, value)
		return nil
	}
	if t.tr.pending != nil || (t.tr.count == 0 && t.tr.height == 1) {
		if t.tr.pending == nil {
			t.tr.pending = &pendingPuts{}
		}
		k, v := t.tr.pending.add(key, value)
		t.tr.mod++
		t.tx.dirty = true
		t.tx.log.put(t.tr.name, k, v)
		return nil
	}
	k, v := key, value
	if copy {
		k, v = t.tx.copyKV(key, value)
	}
	if err := t.tx.treePut(t.tr, k, v); err != nil {
		return fmt.Errorf("kv: put in %q: %w", t.tr.name, err)
	}
	t.tx.dirty = true
	t.tx.log.put(t.tr.name, k, v)
	return nil
}

// Delete removes key and reports whether it existed.
func (t *Tree) Delete(key []byte) (bool, error) {
	if err := t.tx.checkWrite(); err != nil {
		return false, err
	}
	if err := t.check(); err != nil {
		return false, err
	}
	if err := t.ready(); err != nil {
		return false, err
	}
	if len(key) == 0 || len(key) > MaxKeySize {
		return false, nil
	}
	if t.tx.coordinated() {
		if found, err := t.claimDelete(key); err != nil || !found {
			return false, err
		}
	}
	found, err := t.tx.treeDelete(t.tr, key)
	if err != nil {
		return false, fmt.Errorf("kv: delete in %q: %w", t.tr.name, err)
	}
	if found {
		t.tx.dirty = true
		t.tx.log.del(t.tr.name, key)
	}
	return found, nil
}

// DeleteRange removes every key in [start, end) and returns how many. A nil
// start means from the first key, a nil end means through the last key.
func (t *Tree) DeleteRange(start, end []byte) (int64, error) {
	if err := t.tx.checkWrite(); err != nil {
		return 0, err
	}
	if err := t.check(); err != nil {
		return 0, err
	}
	if err := t.ready(); err != nil {
		return 0, err
	}
	if !validRange(start, end) {
		return 0, nil
	}
	if t.tx.conc != nil {
		return t.deleteRangeConcurrent(start, end)
	}
	if t.tx.coordinated() {
		if err := t.tx.db.cc.checkOrdinaryRange(t.tr.name, start, end); err != nil {
			return 0, fmt.Errorf("kv: delete range in %q: %w", t.tr.name, err)
		}
	}
	n, err := t.tx.treeDeleteRange(t.tr, start, end)
	if err != nil {
		return n, fmt.Errorf("kv: delete range in %q: %w", t.tr.name, err)
	}
	if n > 0 {
		t.tx.dirty = true
		t.tx.log.delRange(t.tr.name, start, end)
	}
	return n, nil
}

// treeDeleteRange deletes [start, end) in batches found with a cursor.
func (tx *Tx) treeDeleteRange(tr *treeRoot, start, end []byte) (int64, error) {
	var total int64
	batch := make([][]byte, 0, 512)
	for {
		batch = batch[:0]
		c := (&Tree{tx: tx, tr: tr}).Cursor()
		var k []byte
		if start == nil {
			k, _ = c.First()
		} else {
			k, _ = c.Seek(start)
		}
		for ; k != nil && len(batch) < cap(batch); k, _ = c.Next() {
			if end != nil && !keyInRange(k, nil, end) {
				break
			}
			batch = append(batch, k)
		}
		if err := c.Err(); err != nil {
			return total, err
		}
		if len(batch) == 0 {
			return total, nil
		}
		deleted := 0
		for _, k := range batch {
			found, err := tx.treeDelete(tr, k)
			if err != nil {
				return total, err
			}
			if found {
				deleted++
			}
		}
		total += int64(deleted)
		if deleted == 0 {
			return total, corruptf(dataFileName, 0, "tree %q: keys found by a cursor are not found by search (bad key order)", tr.name)
		}
		if len(batch) < cap(batch) {
			return total, nil
		}
	}
}

// Len returns the number of keys in the tree, in O(1).
func (t *Tree) Len() int64 {
	_ = t.settle() // an error aborts the transaction (settleLater)
	return t.tr.count
}

// Height returns the number of levels of the tree (1 = a single leaf).
func (t *Tree) Height() int {
	_ = t.settle() // an error aborts the transaction (settleLater)
	return t.tr.height
}

// Cursor returns a cursor over the tree, not yet positioned.
func (t *Tree) Cursor() *Cursor {
	c := &Cursor{t: t}
	c.stack = c.buf[:0]
	return c
}
