package server

import (
	"errors"
	"fmt"
	"net"
	"time"

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
// handled hold the bytes received (and, compressed, their inflated size)
// in a server-wide budget, Options.MaxRequestMemory (budget.go).

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
	recv int64 // bytes of the current request admitted by the reader
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

// admit charges the budget for n more bytes of the current request,
// beyond its first freeRequestBytes.
func (l *connLimits) admit(n int) error {
	before := max(0, l.recv-freeRequestBytes)
	l.recv += int64(n)
	charge := max(0, l.recv-freeRequestBytes) - before
	if charge == 0 {
		return nil
	}
	got, waited, err := l.s.mem.acquire(l.s.stopping, l, charge, l.held > 0)
	l.held += got
	if err != nil {
		return fmt.Errorf("server: waiting for request memory: %w", err)
	}
	if waited && l.dc != nil {
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
	if l.s != nil && l.held > 0 {
		l.s.mem.release(l, l.held, true)
	}
	l.held, l.recv = 0, 0
}

// isMessageTimeout reports whether err is the message deadline expiring.
func isMessageTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
