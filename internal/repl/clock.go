package repl

// The logical clock.
//
// Every write is stamped with a Timestamp (mongod's BSON timestamp: seconds
// since the epoch in the high 32 bits, an increment in the low 32) that is
// larger than every earlier one. The stamp is taken inside the write
// transaction, while it holds kv's single writer, so that stamp order is
// commit order: an oplog read in timestamp order is the order in which
// the writes became visible. The clock follows the wall clock's seconds
// but never goes back: if the wall clock steps back (or a stamp was
// recovered from a later second), stamps keep the last second and count
// up the increment, as mongod's LogicalClock does.
//
// The clock's time is also the node's cluster time ($clusterTime) and the
// operationTime of a command that wrote (the stamp of its last write) or
// read (the clock's time when it read).
//
// The clock is one atomic word: in replica-set mode every reply reads it
// ($clusterTime) and every write advances it, from every connection, so
// it takes no lock that all connections would share.

import (
	"fmt"
	"sync/atomic"
	"time"
)

// Timestamp is a BSON timestamp: T seconds in the high 32 bits and an
// increment I in the low 32, so that comparing Timestamps as integers
// compares them as MongoDB does.
type Timestamp uint64

// MakeTimestamp returns the timestamp (t, i).
func MakeTimestamp(t, i uint32) Timestamp { return Timestamp(uint64(t)<<32 | uint64(i)) }

// T returns the seconds.
func (ts Timestamp) T() uint32 { return uint32(ts >> 32) }

// I returns the increment.
func (ts Timestamp) I() uint32 { return uint32(ts) }

// Time returns the timestamp's seconds as a time.
func (ts Timestamp) Time() time.Time { return time.Unix(int64(ts.T()), 0).UTC() }

func (ts Timestamp) String() string { return fmt.Sprintf("Timestamp(%d, %d)", ts.T(), ts.I()) }

// Clock hands out increasing timestamps. The zero value is not usable:
// call NewClock.
type Clock struct {
	last atomic.Uint64 // the largest Timestamp handed out or observed
	now  func() time.Time
}

// NewClock returns a clock whose stamps follow now's seconds (time.Now
// when nil) and are all larger than after (the last stamp recovered from
// the oplog; 0 on a new node).
func NewClock(now func() time.Time, after Timestamp) *Clock {
	if now == nil {
		now = time.Now
	}
	c := &Clock{now: now}
	c.last.Store(uint64(after))
	return c
}

// Next returns a new timestamp larger than every one returned or observed
// before. Writers call it inside their write transaction.
func (c *Clock) Next() Timestamp {
	secs := c.now().Unix()
	for {
		last := Timestamp(c.last.Load())
		next := last + 1 // same second (or the wall clock went back): count up
		if secs > int64(last.T()) && secs <= int64(^uint32(0)) {
			next = MakeTimestamp(uint32(secs), 1)
		}
		if c.last.CompareAndSwap(uint64(last), uint64(next)) {
			return next
		}
	}
}

// Now returns the cluster time: the largest timestamp handed out or
// observed. It does not advance the clock.
func (c *Clock) Now() Timestamp { return Timestamp(c.last.Load()) }

// Observe advances the clock to ts if ts is later (a timestamp recovered
// from storage or gossiped by a client whose signature was checked), so
// that later stamps are larger.
func (c *Clock) Observe(ts Timestamp) {
	for {
		last := c.last.Load()
		if uint64(ts) <= last || c.last.CompareAndSwap(last, uint64(ts)) {
			return
		}
	}
}
