package kv

// A concurrent transaction's puts, applied late.
//
// A concurrent transaction (concurrent.go) does its B-tree work twice: a
// Put copies the path from the root to the key's leaf in the transaction's
// private copy of the snapshot's tree, so that the transaction reads its
// own writes, and the commit replays the put on the current tree under
// the writer lock, copying that tree's path again. The commit never looks
// at the private trees: it replays the operation log. So the private copy
// is needed only if the transaction reads the tree after writing it.
//
// A Put of a concurrent transaction into a tree that is not empty
// therefore only validates, claims and logs the put, as before, and
// appends its key and value to the tree's later list (not copied again:
// the list holds the log's copies, which stay as they are, since a
// concurrent transaction's log is never pooled or reused), in put order, bumping the tree's modification count
// (cursors revalidate). The list is applied to the private tree, in
// order, by ordinary puts (settleLater), the first time the transaction
// uses the tree otherwise: a cursor, Delete, DeleteRange, Len, Height (the
// same places as the deferred puts into an empty tree, Tx.settle). A point
// read (Get) does not need the private tree when the key is in the list:
// it answers from the list (the last put of the key wins) and settles only
// when the key is not in a list longer than laterScan entries (a short
// list is searched in place; a key not in it is answered from the private
// tree, which then holds every earlier write of it, since nothing but puts
// waits in the list: a delete settles first).
//
// A transaction that updates documents by _id (read the document, write
// it back) thus never copies a path privately: MongoDB's one-statement
// transaction, which wrote each document twice (private copy and replay),
// now writes it once, at commit, like an ordinary write.
//
// What a later put defers is only the tree work: an I/O or corruption
// error loading a node of the private tree surfaces when the list is
// applied, not from Put; it then aborts the transaction (its private tree
// no longer matches its log), with that error as the cause of its next
// operation's failure. The commit replays the log on the current tree and
// meets such an error there as before.

import "fmt"

// kvRef is one later put: the key and value as its log holds them.
type kvRef struct{ k, v []byte }

// laterScan is the longest later list a Get searches in place for a key
// it does not hold; a longer one is applied first.
const laterScan = 32

// kvRefCost is the memory of one later put besides its bytes.
const kvRefCost = 48

// putLater records a put of concurrent transaction t.tx into t's later
// list (validated and claimed by Put).
func (t *Tree) putLater(key, value []byte) {
	k, v := t.tx.log.putRef(t.tr.name, key, value)
	if k == nil {
		// Not logged (a concurrent transaction's log is never off; kept
		// for safety): copy into the arena.
		k, v = t.tx.copyKV(key, value)
	}
	t.tr.later = append(t.tr.later, kvRef{k, v})
	t.tx.conc.nodes += kvRefCost
	t.tr.mod++
	t.tx.dirty = true
}

// laterGet returns the value of the last later put of key in tr.
func (tr *treeRoot) laterGet(key []byte) ([]byte, bool) {
	kp := prefix64(key)
	for i := len(tr.later) - 1; i >= 0; i-- {
		p := &tr.later[i]
		if len(p.k) == len(key) && prefix64(p.k) == kp && string(p.k) == string(key) {
			return p.v, true
		}
	}
	return nil, false
}

// settleLater applies tr's later puts to concurrent transaction tx's
// private copy of the tree, in put order. An error aborts tx.
func (tx *Tx) settleLater(tr *treeRoot) error {
	later := tr.later
	tr.later = nil
	tx.conc.nodes -= kvRefCost * int64(len(later))
	for _, p := range later {
		if err := tx.treePut(tr, p.k, p.v); err != nil {
			err = fmt.Errorf("kv: put in %q: %w", tr.name, err)
			tx.db.cc.abort(tx.conc, fmt.Errorf("%w: %w", ErrTxAborted, err))
			return err
		}
	}
	return nil
}
