package kv

// Durability marks: telling readers how far commits are durable.
//
// A commit is published (visible to new readers) before it is durable
// (db.go): a reader that must see only durable data — a change stream,
// which returns only journaled (majority-committed) events — needs to know
// which commits its snapshot holds are durable, and to wake up when more
// become so, without polling.
//
// A write transaction may carry a mark, a number its writer chooses
// (Tx.SetMark; the largest set wins): the oplog marks a transaction with
// the ts of the last entry it appended. Commits become durable in commit
// order, so the largest mark of the durable commits (DB.DurableMark) says
// that every commit whose mark is at most it is durable, provided marks
// grow with commit order, as oplog timestamps do (they are taken under the
// writer lock). The mark travels in the commit's journal slot: each
// record written raises the journal's written mark, and the fdatasync
// that makes records durable raises the durable mark to the written mark
// it observed before syncing (waitDurable), as does the switch of journal
// files at a checkpoint (which flushes everything written) and a commit
// made durable by a checkpoint of its own (too big for the journal, bulk
// loads). Every advance swaps in a fresh channel and closes the previous
// one (DB.DurableChanged), so any number of waiters share one close per
// fdatasync: a reader loads the channel, then the mark, and waits on the
// channel when the mark is not enough; an advance between the two loads
// closes the channel it holds.
//
// The mark is not recovered: after Open it is 0 until the first durable
// commit carrying one. What Open recovered is durable; a caller that needs
// a floor reads it from its own data (the oplog reads its last entry).

import (
	"sync/atomic"
)

// durableMarks is the journal's durable mark and the channel of its next
// advance. advance runs under journal.mu; the loads take no lock.
type durableMarks struct {
	mark atomic.Uint64
	ch   atomic.Pointer[chan struct{}]
}

// changed returns the channel the next advance closes.
func (m *durableMarks) changed() <-chan struct{} {
	if p := m.ch.Load(); p != nil {
		return *p
	}
	ch := make(chan struct{})
	if m.ch.CompareAndSwap(nil, &ch) {
		return ch
	}
	return *m.ch.Load()
}

// advance raises the mark to v, waking the waiters, if v is larger.
// Called with journal.mu held (advances are serialized).
func (m *durableMarks) advance(v uint64) {
	if v <= m.mark.Load() {
		return
	}
	m.mark.Store(v)
	ch := make(chan struct{})
	if old := m.ch.Swap(&ch); old != nil {
		close(*old)
	}
}

// checkpointedMark records that a checkpoint made the commit marked mark,
// and everything written to the journal before it, durable.
func (j *journal) checkpointedMark(mark uint64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.marks.advance(max(mark, j.writtenMark))
}

// SetMark sets the mark of write transaction tx's commit to m if m is
// larger than the mark it has (see DurableMark). Marks must not decrease
// from one commit to the next.
func (tx *Tx) SetMark(m uint64) {
	if m > tx.mark {
		tx.mark = m
	}
}

// DurableMark returns the largest mark (Tx.SetMark) of the commits that
// are durable: every commit marked at most that is durable. It is 0 after
// Open until a marked commit is durable.
func (db *DB) DurableMark() uint64 {
	if db.journal == nil {
		return 0
	}
	return db.journal.marks.mark.Load()
}

// DurableChanged returns the channel the next advance of DurableMark
// closes. Load it before DurableMark: an advance after the channel was
// loaded closes it.
func (db *DB) DurableChanged() <-chan struct{} {
	if db.journal == nil {
		return nil // nothing is ever written
	}
	return db.journal.marks.changed()
}
