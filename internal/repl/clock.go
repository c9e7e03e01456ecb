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

import (
	"fmt"
	"sync"
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
	mu   sync.Mutex
	last Timestamp
	now  func() time.Time
}

// NewClock returns a clock whose stamps follow now's seconds (time.Now
// when nil) and are all larger than after (the last stamp recovered from
// the oplog; 0 on a new node).
func NewClock(now func() time.Time, after Timestamp) *Clock {
	if now == nil {
		now = time.Now
	}
	return &Clock{now: now, last: after}
}

// Next returns a new timestamp larger than every one returned or observed
// before. Writers call it inside their write transaction.
func (c *Clock) Next() Timestamp {
	secs := c.now().Unix()
	c.mu.Lock()
	defer c.mu.Unlock()
	if secs > int64(c.last.T()) && secs <= int64(^uint32(0)) {
		c.last = MakeTimestamp(uint32(secs), 1)
	} else {
		c.last++ // same second (or the wall clock went back): count up
	}
	return c.last
}

// Now returns the cluster time: the largest timestamp handed out or
// observed. It does not advance the clock.
func (c *Clock) Now() Timestamp {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// Observe advances the clock to ts if ts is later (a timestamp recovered
// from storage or gossiped by a client whose signature was checked), so
// that later stamps are larger.
func (c *Clock) Observe(ts Timestamp) {
	c.mu.Lock()
	if ts > c.last {
		c.last = ts
	}
	c.mu.Unlock()
}
