package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/cairndb/cairn/internal/wire"
)

// Limits on what one client can make the server hold.
//
// A connection may sit idle between messages for as long as it likes, but
// once the first bytes of a message have arrived the rest must follow
// within Options.MessageTimeout, so a slow sender cannot pin a buffer (or
// a goroutine) mid-message. The length prefix is checked against the
// maximum message size before anything is allocated, and buffers grow
// with the bytes actually received (internal/wire). Messages being read or
// handled hold their size (and, compressed, their inflated size) in a
// server-wide budget, Options.MaxRequestMemory: a connection whose next
// message does not fit waits, before reading the body, until enough
// in-flight requests have finished.

// Defaults of the limits.
const (
	defaultMessageTimeout   = 60 * time.Second
	defaultMaxRequestMemory = 1 << 30
)

// deadlineConn enforces the message deadline with as few deadline changes
// as possible: it notes when the first bytes of a message arrive, and sets
// a read deadline (that time plus the timeout) only before a read that
// waits for the rest of an incomplete message. A request that arrives in
// one read — nearly all of them, as the wire reader reads through a
// buffer — costs a clock read and no deadline at all (setting and clearing
// deadlines touches the runtime's timers, which showed in profiles of small
// requests). It is used by the connection's goroutine only.
type deadlineConn struct {
	net.Conn
	timeout time.Duration
	start   time.Time // first bytes of the current message; zero between messages
	armed   bool      // a read deadline is set
}

func (c *deadlineConn) Read(p []byte) (int, error) {
	if !c.start.IsZero() && !c.armed {
		c.armed = true
		_ = c.Conn.SetReadDeadline(c.start.Add(c.timeout))
	}
	n, err := c.Conn.Read(p)
	if n > 0 && c.start.IsZero() {
		c.start = time.Now()
	}
	return n, err
}

// messageDone is called once a whole message has been read.
func (c *deadlineConn) messageDone() {
	c.start = time.Time{}
	if c.armed {
		c.armed = false
		_ = c.Conn.SetReadDeadline(time.Time{})
	}
}

// memBudget is the server-wide budget of bytes held by requests in flight.
type memBudget struct {
	sem   *semaphore.Weighted
	limit int64
}

func newMemBudget(limit int64) *memBudget {
	return &memBudget{sem: semaphore.NewWeighted(limit), limit: limit}
}

// acquire reserves n bytes (at most the whole budget, so that a message
// larger than the budget still runs, alone), waiting until they are free
// or ctx ends. It returns what was reserved.
func (m *memBudget) acquire(ctx context.Context, n int64) (int64, error) {
	n = min(n, m.limit)
	if m.sem.TryAcquire(n) {
		return n, nil
	}
	if err := m.sem.Acquire(ctx, n); err != nil {
		return 0, err
	}
	return n, nil
}

func (m *memBudget) release(n int64) {
	if n > 0 {
		m.sem.Release(n)
	}
}

// rearm restarts the message deadline (after waiting for admission,
// which is the server's delay, not the client's).
func (c *deadlineConn) rearm() {
	if c.start.IsZero() {
		return
	}
	c.start = time.Now()
	if c.armed {
		_ = c.Conn.SetReadDeadline(c.start.Add(c.timeout))
	}
}

// connLimits applies the limits to one connection.
type connLimits struct {
	s    *Server
	dc   *deadlineConn
	held int64 // bytes of the budget the current request holds
}

// reader returns the connection's message reader with the message
// deadline and the memory budget's admission in place.
func (l *connLimits) reader(s *Server, nc net.Conn) *wire.Reader {
	l.s = s
	src := nc
	if s.opts.MessageTimeout > 0 {
		l.dc = &deadlineConn{Conn: nc, timeout: s.opts.MessageTimeout}
		src = l.dc
	}
	r := wire.NewReader(src, wire.MaxMessageSize)
	r.Admit = l.admit
	return r
}

func (l *connLimits) admit(n int) error {
	got, err := l.s.mem.acquire(l.s.stopping, int64(n))
	l.held += got
	if err != nil {
		return fmt.Errorf("server: waiting for request memory: %w", err)
	}
	if l.dc != nil {
		l.dc.rearm()
	}
	return nil
}

// messageRead is called when ReadMessage returns.
func (l *connLimits) messageRead() {
	if l.dc != nil {
		l.dc.messageDone()
	}
}

// requestDone gives the request's bytes back to the budget.
func (l *connLimits) requestDone() {
	if l.s != nil {
		l.s.mem.release(l.held)
	}
	l.held = 0
}

// isMessageTimeout reports whether err is the message deadline expiring.
func isMessageTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
