package server

import (
	"context"
	"slices"
	"sync"

	"github.com/cairndb/cairn/internal/wire"
)

// The in-flight request memory budget.
//
// Every message being read or run holds the bytes it has made the server
// keep in a server-wide budget (Options.MaxRequestMemory). Bytes are
// charged as they arrive, not as the length prefix announces them: the
// wire reader admits a message's body in steps that double what has been
// received, so a connection that sends a header announcing 47 MB and then
// nothing holds nothing. The first step of every message (freeRequestBytes,
// the size of the connection's read buffer, which every connection has
// anyway) is not charged at all, so a small request — a ping, a hello, a
// SASL step, an ordinary find — never waits for the budget, however much
// of it large requests hold.
//
// Charging as bytes arrive brings a hazard the old up-front reservation
// did not have: requests that hold part of the budget and wait for more
// can wait for each other forever (forty clients each 25 MB into a 47 MB
// insert with a 1 GiB budget). Waiters are served in order, and the
// budget breaks that cycle itself: when every request holding bytes is
// waiting for more, nothing will ever be released, so the oldest waiting
// holder becomes the breaker: it is let through over the limit, and every
// later step of its message too, before anyone else, until it releases
// what it holds. Only the breaker may go over the limit (a stall while it
// reads waits for it), so the budget is exceeded by at most one message
// (48 MB, or its inflated size).
//
// A request that holds bytes and stops sending is cut by the message
// deadline (Options.MessageTimeout), which frees what it held.

// freeRequestBytes is the part of every message that is not charged to
// the budget: the reader's first step (internal/wire's read buffer size).
const freeRequestBytes = wire.ReadBufferSize

// memBudget is the server-wide budget of bytes held by requests in flight.
type memBudget struct {
	limit int64

	mu      sync.Mutex
	used    int64
	holders int // requests holding part of the budget
	stalled int // holders waiting in queue for more
	queue   []*budgetWaiter
	// breaker is the one request allowed over the limit to break a wait
	// cycle (nil: none), until it releases its bytes.
	breaker any
	// overLimit counts the grants that broke a wait cycle by going over
	// the limit (for tests and diagnostics).
	overLimit int64
}

type budgetWaiter struct {
	n       int64
	owner   any  // the request (its connection's limits)
	holder  bool // the request already holds part of the budget
	ready   chan struct{}
	granted bool
}

func newMemBudget(limit int64) *memBudget {
	return &memBudget{limit: limit}
}

// acquire adds n bytes (at most the whole budget) to what the request
// owner holds, waiting until they are free or ctx ends; holding says
// whether the request already holds some. It returns what was added and
// whether it had to wait. On error nothing was added.
func (m *memBudget) acquire(ctx context.Context, owner any, n int64, holding bool) (int64, bool, error) {
	n = min(n, m.limit)
	m.mu.Lock()
	if holding && m.breaker == owner {
		m.take(n, holding) // the breaker finishes its message
		m.mu.Unlock()
		return n, false, nil
	}
	if len(m.queue) == 0 && m.used+n <= m.limit {
		m.take(n, holding)
		m.mu.Unlock()
		return n, false, nil
	}
	w := &budgetWaiter{n: n, owner: owner, holder: holding, ready: make(chan struct{})}
	m.queue = append(m.queue, w)
	if holding {
		m.stalled++
	}
	m.grantLocked()
	m.mu.Unlock()
	select {
	case <-w.ready:
		return n, true, nil
	case <-ctx.Done():
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if w.granted {
		return n, true, nil
	}
	m.queue = slices.DeleteFunc(m.queue, func(x *budgetWaiter) bool { return x == w })
	if holding {
		m.stalled--
	}
	m.grantLocked()
	return 0, true, ctx.Err()
}

// release gives n bytes back; last says the request owner holds nothing
// more.
func (m *memBudget) release(owner any, n int64, last bool) {
	if n <= 0 {
		return
	}
	m.mu.Lock()
	m.used -= n
	if last {
		m.holders--
		if m.breaker == owner {
			m.breaker = nil
		}
	}
	m.grantLocked()
	m.mu.Unlock()
}

func (m *memBudget) take(n int64, holding bool) {
	m.used += n
	if !holding {
		m.holders++
	}
}

// grantLocked serves the queue in order while its head fits, then breaks
// a wait cycle if every holder is waiting and no breaker is reading: the
// oldest waiting holder becomes the breaker.
func (m *memBudget) grantLocked() {
	for len(m.queue) > 0 && m.used+m.queue[0].n <= m.limit {
		m.grant(0)
	}
	if m.breaker == nil && m.holders > 0 && m.stalled == m.holders {
		if i := slices.IndexFunc(m.queue, func(w *budgetWaiter) bool { return w.holder }); i >= 0 {
			m.overLimit++
			m.breaker = m.queue[i].owner
			m.grant(i)
		}
	}
}

func (m *memBudget) grant(i int) {
	w := m.queue[i]
	m.queue = slices.Delete(m.queue, i, i+1)
	if w.holder {
		m.stalled--
	}
	m.take(w.n, w.holder)
	w.granted = true
	close(w.ready)
}

// budgetState is a snapshot of the budget (for tests and diagnostics).
type budgetState struct {
	Used             int64
	Holders, Waiting int
	OverLimitGrants  int64
}

func (m *memBudget) state() budgetState {
	m.mu.Lock()
	defer m.mu.Unlock()
	return budgetState{Used: m.used, Holders: m.holders, Waiting: len(m.queue), OverLimitGrants: m.overLimit}
}
