package kv

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
)

// Tx is a transaction. A read transaction sees the snapshot that was current
// when it began; a write transaction additionally sees its own changes. A Tx
// must not be used after Commit or Rollback. A read Tx may be used by several
// goroutines at once; a write Tx by one goroutine at a time.
type Tx struct {
	db       *DB
	snap     *snapshot
	writable bool
	closed   bool
	managed  bool   // run by DB.View or DB.Update, which end it
	id       uint64 // write tx: txid this tx will commit as

	trees    map[string]*treeRoot
	ownTrees bool // trees is a private copy

	dirty bool
	freed []extent
	// retiredDirty are versions this tx replaced while they had no
	// extent yet; a checkpoint may be writing them (settleRetired).
	retiredDirty []*node
	log          journalOps
	forceCkpt    bool // commit through a checkpoint (bulk load, huge tx)
	// settleErr is the first failure to apply deferred discards: the
	// transaction can no longer commit (discard.go).
	settleErr error
	sweep     bool   // applying deferred discards in key order (rebalance)
	ahead     byte   // keeps settleDiscards' loads ahead from being dropped
	chunk     []byte // arena for copies of small keys and values

	conc     *concTx // a concurrent transaction (BeginConcurrent)
	replayOf *concTx // the commit of this concurrent transaction's writes

	// mark is the commit's durability mark (SetMark, durable.go).
	mark uint64

	// one backs the one-node results of insert's levels (single), so
	// that a put that splits nothing allocates no result slice per level.
	one [1]*node
}

// single returns the one-node result n of a level of insert (or of
// maybeSplit, tailRoot). It is valid until the next call: each level reads
// its child's result before producing its own.
func (tx *Tx) single(n *node) []*node {
	tx.one[0] = n
	return tx.one[:1:1]
}

// copyKV copies key and value for the tree, from a per-transaction arena
// that grows from 4 KiB to 1 MiB chunks, so that large transactions do not
// allocate once per entry.
func (tx *Tx) copyKV(key, val []byte) ([]byte, []byte) {
	n := len(key) + len(val)
	if n > 16<<10 {
		if tx.conc != nil {
			tx.conc.arena += int64(n)
		}
		return copyKV(key, val)
	}
	if len(tx.chunk)+n > cap(tx.chunk) {
		size := min(max(2*cap(tx.chunk), 4<<10), 1<<20)
		tx.chunk = make([]byte, 0, max(size, n))
		if tx.conc != nil {
			tx.conc.arena += int64(cap(tx.chunk))
		}
	}
	off := len(tx.chunk)
	tx.chunk = append(tx.chunk, key...)
	tx.chunk = append(tx.chunk, val...)
	return tx.chunk[off : off+len(key) : off+len(key)], tx.chunk[off+len(key) : off+n : off+n]
}

// DB returns the database tx belongs to.
func (tx *Tx) DB() *DB { return tx.db }

// Writable reports whether tx is a write transaction.
func (tx *Tx) Writable() bool { return tx.writable }

// ID returns the transaction's snapshot id: for a read transaction (and a
// concurrent one, whose commit id is not known before it commits) the id
// of the last commit it sees, for a write transaction the id it commits
// as.
func (tx *Tx) ID() uint64 {
	if tx.writable && tx.conc == nil {
		return tx.id
	}
	return tx.snap.txid
}

func (tx *Tx) checkWrite() error {
	if tx.closed {
		return ErrTxClosed
	}
	if !tx.writable {
		return ErrReadOnlyTx
	}
	return tx.concCheck()
}

// writableRoot returns tx's private root record of an existing tree.
func (tx *Tx) writableRoot(name string) (*treeRoot, error) {
	tr, ok := tx.trees[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrTreeNotFound, name)
	}
	if tr.txid == tx.id {
		return tr, nil
	}
	tx.ownMap()
	tr = tr.clone(tx.id)
	tx.trees[name] = tr
	return tr, nil
}

func (tx *Tx) ownMap() {
	if !tx.ownTrees {
		// maps.Clone copies the table as it is (no rehashing of every
		// name): this runs in every write transaction.
		tx.trees = maps.Clone(tx.trees)
		if tx.trees == nil {
			tx.trees = map[string]*treeRoot{}
		}
		tx.ownTrees = true
	}
}

// Tree returns the named tree, or an error wrapping ErrTreeNotFound.
func (tx *Tx) Tree(name string) (*Tree, error) {
	if tx.closed {
		return nil, ErrTxClosed
	}
	if err := tx.concCheck(); err != nil {
		return nil, err
	}
	if !tx.writable {
		tr, ok := tx.trees[name]
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrTreeNotFound, name)
		}
		return &Tree{tx: tx, tr: tr}, nil
	}
	tr, err := tx.writableRoot(name)
	if err != nil {
		return nil, err
	}
	return &Tree{tx: tx, tr: tr}, nil
}

// CreateTree creates a new empty tree, or fails with ErrTreeExists.
func (tx *Tx) CreateTree(name string) (*Tree, error) {
	if err := tx.checkWrite(); err != nil {
		return nil, err
	}
	if _, ok := tx.trees[name]; ok {
		return nil, fmt.Errorf("%w: %q", ErrTreeExists, name)
	}
	if len(name) == 0 || len(name) > 4096 {
		return nil, fmt.Errorf("kv: invalid tree name length %d", len(name))
	}
	if tx.coordinated() {
		if err := tx.claimKeys(name); err != nil {
			return nil, fmt.Errorf("kv: create tree %q: %w", name, err)
		}
	}
	tx.ownMap()
	tr := &treeRoot{name: name, root: newLeafRoot(tx.id), height: 1, txid: tx.id}
	tx.trees[name] = tr
	tx.dirty = true
	tx.log.create(name)
	return &Tree{tx: tx, tr: tr}, nil
}

// CreateTreeIfNotExists returns the named tree, creating it if needed.
func (tx *Tx) CreateTreeIfNotExists(name string) (*Tree, error) {
	if err := tx.checkWrite(); err != nil {
		return nil, err
	}
	if _, ok := tx.trees[name]; ok {
		return tx.Tree(name)
	}
	return tx.CreateTree(name)
}

// DropTree deletes a tree and all its entries.
func (tx *Tx) DropTree(name string) error {
	if err := tx.checkWrite(); err != nil {
		return err
	}
	if _, ok := tx.trees[name]; ok && tx.coordinated() {
		if err := tx.claimKeys(name); err != nil {
			return fmt.Errorf("kv: drop tree %q: %w", name, err)
		}
	}
	tr, err := tx.writableRoot(name)
	if err != nil {
		return err
	}
	tr.pending, tr.later, tr.discards = nil, nil, nil
	if tx.conc == nil { // a concurrent transaction frees nothing
		if err := tx.freeTree(tr.root, tr.height); err != nil {
			return fmt.Errorf("kv: drop tree %q: %w", name, err)
		}
	}
	tr.dropped = true
	tr.mod++
	delete(tx.trees, name)
	tx.dirty = true
	tx.log.drop(name)
	return nil
}

// ForEachTree calls fn with every tree name in ascending order.
func (tx *Tx) ForEachTree(fn func(name string) error) error {
	if tx.closed {
		return ErrTxClosed
	}
	if err := tx.concCheck(); err != nil {
		return err
	}
	names := make([]string, 0, len(tx.trees))
	for k := range tx.trees {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := fn(n); err != nil {
			return err
		}
	}
	return nil
}

// Commit commits with the database's default durability.
func (tx *Tx) Commit() error { return tx.CommitWith(tx.db.opts.Durability) }

// CommitWith commits with durability d. A read transaction is simply ended.
// A concurrent transaction (BeginConcurrent) is validated and its writes
// replayed in the write transaction (concurrent.go): an error wrapping
// ErrWriteConflict, ErrTxAborted or the commit's own failure means it
// did not commit, and it is ended whatever the outcome.
// A d that is none of Sync, Lazy and NoSync is refused with an error and
// the transaction stays open, unchanged.
func (tx *Tx) CommitWith(d Durability) error {
	if tx.closed {
		return ErrTxClosed
	}
	if tx.managed {
		return ErrTxManaged
	}
	if d < Sync || d > NoSync {
		return fmt.Errorf("kv: commit: invalid durability %d: want Sync, Lazy or NoSync", int(d))
	}
	if !tx.writable {
		tx.endRead()
		return nil
	}
	if tx.conc != nil {
		return tx.db.commitConcurrent(tx, d)
	}
	return tx.db.commit(tx, d)
}

// Rollback discards the transaction. It is always safe to call, also after
// Commit (then it does nothing). Inside DB.View and DB.Update it does
// nothing and answers ErrTxManaged: they end the transaction.
func (tx *Tx) Rollback() error {
	if tx.closed {
		return nil
	}
	if tx.managed {
		return ErrTxManaged
	}
	if !tx.writable {
		tx.endRead()
		return nil
	}
	if tx.conc != nil {
		tx.endConcurrent()
		return nil
	}
	tx.closed = true
	tx.log.release()
	tx.db.releaseWriter()
	return nil
}

// endManaged ends a transaction of DB.View or DB.Update that is still
// open: fn failed or panicked (deferred, it runs while a panic unwinds).
func (tx *Tx) endManaged() {
	tx.managed = false
	tx.Rollback()
}

func (tx *Tx) endRead() {
	tx.closed = true
	tx.snap.refs.Add(-1)
}

// copyKV copies key and value into one allocation.
func copyKV(key, val []byte) ([]byte, []byte) {
	buf := make([]byte, len(key)+len(val))
	copy(buf, key)
	copy(buf[len(key):], val)
	return buf[:len(key):len(key)], buf[len(key):]
}

func validKey(key []byte) error {
	if len(key) == 0 {
		return ErrEmptyKey
	}
	if len(key) > MaxKeySize {
		return fmt.Errorf("%w: %d bytes (max %d)", ErrKeyTooLarge, len(key), MaxKeySize)
	}
	return nil
}

func validRange(start, end []byte) bool {
	return start == nil || end == nil || bytes.Compare(start, end) < 0
}
