package kv

// Write-write conflict detection for concurrent transactions: the
// coordinator (DB.cc). See concurrent.go for the design; this file holds
// its two tables and the protocol that keeps them exact.
//
// Ownership: owners[tree].keys[key] is the live concurrent transaction
// that wrote key first; owners[tree].tree the one that created or dropped
// the tree (the empty key stands for the tree itself: no user key is
// empty). A key stays owned until its owner commits, rolls back or is
// aborted.
//
// The commit log: log[tree] remembers, for every key written by a commit
// since the oldest live concurrent transaction's snapshot, the txid of the
// last commit that wrote it; for ranges deleted by ordinary write
// transactions (DeleteRange) the range and txid; for the tree, the txid of
// the last commit that created or dropped it (treeTx) and of the last one
// that changed anything in it (anyTx). hist lists the same entries in
// commit order, so that they are dropped when no live transaction's
// snapshot is older than them. With no concurrent transaction live both
// tables are empty, and commits record nothing.
//
// Exactness: a concurrent transaction whose snapshot is s must find in
// the log every commit with txid > s. Commits record their keys in
// DB.publish, before storing the new snapshot, but only when a concurrent
// transaction is live (live > 0), which an ordinary commit reads without a
// lock. BeginConcurrent increments live and then loads the current
// snapshot; publish stores publishing = txid and then loads live. Go's
// atomics are sequentially consistent, so if a commit read live == 0 (and
// records nothing), the beginning transaction's later load of publishing
// sees that commit's txid, above the snapshot it loaded: it waits until
// the commit has stored its snapshot and takes that one. Either way no
// commit after a live transaction's snapshot goes unrecorded.

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

type coordinator struct {
	live       atomic.Int64  // live concurrent transactions
	publishing atomic.Uint64 // txid of the last commit that began publishing
	nextID     atomic.Uint64 // private node ids of concurrent transactions

	mu     sync.Mutex
	txs    map[*concTx]struct{}
	owners map[string]*treeOwners
	log    map[string]*treeLog
	hist   []histEntry
	logged int // keys in log (Stats)

	begun, committed, rolledBack, aborted, conflicts atomic.Uint64
}

type treeOwners struct {
	tree *concTx
	keys map[string]*concTx
}

type treeLog struct {
	treeTx uint64 // last commit that created or dropped the tree
	anyTx  uint64 // last commit that changed the tree at all
	keys   map[string]uint64
	ranges []rangeEntry
}

type rangeEntry struct {
	start, end []byte // nil: unbounded
	txid       uint64
}

// histEntry is one recorded write: a key (kind histKey), the tree (its
// creation or drop) or a range.
type histEntry struct {
	txid uint64
	tree string
	key  string
	kind byte
}

const (
	histKey = iota
	histTree
	histRange
)

// ownKey is a key a concurrent transaction owns; key "" is the tree.
type ownKey struct{ tree, key string }

// concIDBase is where the node ids of concurrent transactions start: far
// above any txid a database will reach, so that a private node is never
// mistaken for one of a committed or committing transaction.
const concIDBase = 1 << 62

func (cc *coordinator) ownersOf(tree string) *treeOwners {
	o := cc.owners[tree]
	if o == nil {
		if cc.owners == nil {
			cc.owners = map[string]*treeOwners{}
		}
		o = &treeOwners{keys: map[string]*concTx{}}
		cc.owners[tree] = o
	}
	return o
}

// committedSince reports whether a commit after snapshot snap wrote key of
// tree (key "": changed the tree at all). Called with mu held.
func (cc *coordinator) committedSince(tree, key string, snap uint64) bool {
	l := cc.log[tree]
	if l == nil {
		return false
	}
	if key == "" {
		return l.anyTx > snap
	}
	if l.treeTx > snap || l.keys[key] > snap {
		return true
	}
	for _, r := range l.ranges {
		if r.txid > snap && keyInRange([]byte(key), r.start, r.end) {
			return true
		}
	}
	return false
}

// conflictWith returns the owner, other than self, that a write of key of
// tree conflicts with (key "": of the tree itself, which conflicts with
// every owned key of the tree). Called with mu held.
func (cc *coordinator) conflictWith(tree, key string, self *concTx) (*concTx, string) {
	o := cc.owners[tree]
	if o == nil {
		return nil, ""
	}
	if o.tree != nil && o.tree != self {
		return o.tree, ""
	}
	if key != "" {
		if c := o.keys[key]; c != nil && c != self {
			return c, key
		}
		return nil, ""
	}
	for k, c := range o.keys {
		if c != self {
			return c, k
		}
	}
	return nil, ""
}

func (cc *coordinator) conflictErr(tree, key string, owner *concTx) error {
	cc.conflicts.Add(1)
	e := &WriteConflictError{Tree: tree}
	if key != "" {
		e.Key = []byte(key)
	}
	if owner != nil {
		e.done = owner.done
	} else {
		e.Committed = true
	}
	return e
}

// checkOrdinary is the check of an ordinary write transaction's write of
// key of tree (key "": of the tree): a key owned by a live concurrent
// transaction is refused.
func (cc *coordinator) checkOrdinary(tree string, key []byte) error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if owner, k := cc.conflictWith(tree, string(key), nil); owner != nil {
		return cc.conflictErr(tree, k, owner)
	}
	return nil
}

// checkOrdinaryRange refuses an ordinary DeleteRange over a key owned by
// a live concurrent transaction.
func (cc *coordinator) checkOrdinaryRange(tree string, start, end []byte) error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	o := cc.owners[tree]
	if o == nil {
		return nil
	}
	if o.tree != nil {
		return cc.conflictErr(tree, "", o.tree)
	}
	for k, c := range o.keys {
		if keyInRange([]byte(k), start, end) {
			return cc.conflictErr(tree, k, c)
		}
	}
	return nil
}

// claim makes c the owner of every key of tree in keys (nil: the tree
// itself), or of none: it fails with a *WriteConflictError if one is owned
// by another live transaction or was committed since c's snapshot, and
// with c's abort cause if c was aborted.
func (cc *coordinator) claim(c *concTx, tree string, keys [][]byte) error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if c.state != concLive {
		return c.cause
	}
	one := [][]byte{nil}
	if keys == nil {
		keys = one
	}
	for _, k := range keys {
		if owner, ok := cc.conflictWith(tree, string(k), c); owner != nil {
			return cc.conflictErr(tree, ok, owner)
		}
		if cc.committedSince(tree, string(k), c.snap) {
			return cc.conflictErr(tree, string(k), nil)
		}
	}
	o := cc.ownersOf(tree)
	for _, k := range keys {
		if k == nil {
			if o.tree != c {
				o.tree = c
				c.claimed = append(c.claimed, ownKey{tree, ""})
				c.claimBytes += int64(len(tree)) + 64
			}
			continue
		}
		if o.keys[string(k)] != c {
			sk := string(k)
			o.keys[sk] = c
			c.claimed = append(c.claimed, ownKey{tree, sk})
			c.claimBytes += int64(len(tree)+len(sk)) + 64
		}
	}
	return nil
}

// validate re-checks, at commit, that nothing c owns was committed by
// others since its snapshot (claim checked it when c took each key; only
// an ordinary transaction already running when c began can have written
// one since). Called with mu held.
func (cc *coordinator) validate(c *concTx) error {
	for _, k := range c.claimed {
		if cc.committedSince(k.tree, k.key, c.snap) {
			return cc.conflictErr(k.tree, k.key, nil)
		}
	}
	return nil
}

// endLocked ends live or committing transaction c: it releases c's keys,
// wakes the transactions waiting for them and drops the commit log
// entries no live snapshot needs any more.
func (cc *coordinator) endLocked(c *concTx, cause error) {
	if c.state == concEnded {
		return
	}
	c.state = concEnded
	c.cause = cause
	c.aborted.Store(true)
	for _, k := range c.claimed {
		o := cc.owners[k.tree]
		if o == nil {
			continue
		}
		if k.key == "" {
			if o.tree == c {
				o.tree = nil
			}
		} else if o.keys[k.key] == c {
			delete(o.keys, k.key)
		}
		if o.tree == nil && len(o.keys) == 0 {
			delete(cc.owners, k.tree)
		}
	}
	c.claimed = nil
	close(c.done)
	delete(cc.txs, c)
	cc.live.Add(-1)
	cc.prune()
}

// prune drops the commit log entries older than every live snapshot.
func (cc *coordinator) prune() {
	if len(cc.txs) == 0 {
		cc.log, cc.hist, cc.logged = nil, nil, 0
		return
	}
	oldest := ^uint64(0)
	for c := range cc.txs {
		oldest = min(oldest, c.snap)
	}
	i := 0
	for ; i < len(cc.hist) && cc.hist[i].txid <= oldest; i++ {
		e := &cc.hist[i]
		l := cc.log[e.tree]
		if l == nil {
			continue
		}
		switch e.kind {
		case histKey:
			if l.keys[e.key] == e.txid {
				delete(l.keys, e.key)
				cc.logged--
			}
		case histRange:
			l.ranges = l.ranges[1:] // ranges are recorded in commit order
		}
		if len(l.keys) == 0 && len(l.ranges) == 0 && l.anyTx <= oldest {
			delete(cc.log, e.tree)
		}
	}
	if i > 0 {
		cc.hist = append(cc.hist[:0:0], cc.hist[i:]...)
	}
}

func (cc *coordinator) treeLog(tree string) *treeLog {
	l := cc.log[tree]
	if l == nil {
		if cc.log == nil {
			cc.log = map[string]*treeLog{}
		}
		l = &treeLog{keys: map[string]uint64{}}
		cc.log[tree] = l
	}
	return l
}

func (cc *coordinator) logKey(tree, key string, txid uint64) {
	l := cc.treeLog(tree)
	l.anyTx = txid
	if key == "" {
		l.treeTx = txid
		cc.hist = append(cc.hist, histEntry{txid: txid, tree: tree, kind: histTree})
		return
	}
	if _, ok := l.keys[key]; !ok {
		cc.logged++
	}
	l.keys[key] = txid
	cc.hist = append(cc.hist, histEntry{txid: txid, tree: tree, key: key, kind: histKey})
}

func (cc *coordinator) logRange(tree string, start, end []byte, txid uint64) {
	l := cc.treeLog(tree)
	l.anyTx = txid
	l.ranges = append(l.ranges, rangeEntry{bytes.Clone(start), bytes.Clone(end), txid})
	cc.hist = append(cc.hist, histEntry{txid: txid, tree: tree, kind: histRange})
}

// rangeWrite is a range an ordinary write transaction deleted.
type rangeWrite struct {
	tree       string
	start, end []byte // nil: unbounded
}

// recordCommit runs in DB.publish, writer lock held, when a concurrent
// transaction is live: it records what the commit of tx as txid wrote, if
// a live transaction other than the committing one may need it, and ends
// the concurrent transaction tx replays, if any (its keys are logged
// before they are released, so that a transaction taking one finds the
// commit). tx is nil for commits that change no entries (Compact).
func (cc *coordinator) recordCommit(tx *Tx, txid uint64) {
	var ws []ownKey
	var ranges []rangeWrite
	var self *concTx
	if tx != nil {
		self = tx.replayOf
		if self == nil {
			ws, ranges = tx.writeSet()
		}
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	others := len(cc.txs)
	if self != nil {
		others--
		ws = self.claimed
	}
	if others > 0 {
		for _, k := range ws {
			cc.logKey(k.tree, k.key, txid)
		}
		for _, r := range ranges {
			cc.logRange(r.tree, r.start, r.end, txid)
		}
	}
	if self != nil {
		cc.committed.Add(1)
		cc.endLocked(self, ErrTxClosed)
	}
}

// writeSet returns what ordinary write transaction tx wrote, from its
// logical operations: keys put or deleted, trees created or dropped (key
// ""), and ranges deleted. A transaction whose log grew too large to keep
// (it commits through a checkpoint) reports every tree it opened or
// changed as changed wholesale.
func (tx *Tx) writeSet() ([]ownKey, []rangeWrite) {
	var ws []ownKey
	if tx.log.off {
		for name, tr := range tx.trees {
			if tx.snap.trees[name] != tr {
				ws = append(ws, ownKey{name, ""})
			}
		}
		for name := range tx.snap.trees {
			if _, ok := tx.trees[name]; !ok {
				ws = append(ws, ownKey{name, ""})
			}
		}
		return ws, nil
	}
	var ranges []rangeWrite
	// The log was built by this transaction: it is well formed.
	_ = walkOps(tx.log.parts(), func(op byte, name string, k, v []byte) error {
		switch op {
		case opCreate, opDrop:
			ws = append(ws, ownKey{name, ""})
		case opPut, opDel:
			ws = append(ws, ownKey{name, string(k)})
		case opDelRange:
			ranges = append(ranges, rangeWrite{name, k, v})
		}
		return nil
	})
	return ws, ranges
}

// WriteConflictError is the error of a write that conflicts with another
// transaction's (errors.Is(err, ErrWriteConflict)): the key (nil: the tree
// itself) is owned by a live concurrent transaction, or, for a concurrent
// transaction, was written by a transaction committed after its
// snapshot (Committed). The write had no effect; the transaction stays
// open, but only a new transaction (a new snapshot) can write the key.
type WriteConflictError struct {
	Tree      string
	Key       []byte
	Committed bool
	done      <-chan struct{}
}

// Error describes the conflict.
func (e *WriteConflictError) Error() string {
	what := "tree " + fmt.Sprintf("%q", e.Tree)
	if e.Key != nil {
		what = "key " + keyString(e.Key) + " of tree " + fmt.Sprintf("%q", e.Tree)
	}
	if e.Committed {
		return fmt.Sprintf("%v: %s was written by a transaction committed after this transaction's snapshot", ErrWriteConflict, what)
	}
	return fmt.Sprintf("%v: %s is being written by another transaction", ErrWriteConflict, what)
}

// Is makes errors.Is(err, ErrWriteConflict) hold.
func (e *WriteConflictError) Is(target error) bool { return target == ErrWriteConflict }

// Wait waits until the transaction that owns the key ends (commits, rolls
// back or is aborted), or ctx is done. It returns at once for a conflict
// with a committed transaction. Wait only after ending the transaction
// that met the conflict: an ordinary write transaction holds the writer
// lock, which the owner needs to commit.
func (e *WriteConflictError) Wait(ctx context.Context) error {
	if e.done == nil {
		return nil
	}
	select {
	case <-e.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("kv: waiting for a conflicting transaction: %w", ctx.Err())
	}
}
