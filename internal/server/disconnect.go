package server

import (
	"context"
	"net"
	"time"

	"github.com/cairndb/cairn/internal/mongoerr"
)

// Noticing clients that go away. A connection's goroutine does not read
// its socket while it runs a command, so a client that disconnects (a
// driver whose operation timed out closes its connection) is not noticed
// by reading. Instead one watcher goroutine looks, every
// disconnectPollInterval, at the connections whose command has run at
// least that long and peeks at their sockets without consuming anything
// (peerClosed: recv with MSG_PEEK|MSG_DONTWAIT, which neither blocks nor
// takes the connection's read lock). A socket at end of stream or reset,
// or holding unread bytes (a pipelined request, TLS's close_notify) while
// the peer's FIN has arrived (TCP_INFO state CLOSE_WAIT), means the client
// is gone: the connection's operations are killed with
// ClientDisconnect (279), which their scans notice at their next check,
// as mongod's operations notice a disconnected client. Short commands
// never cost a system call, and while no connection runs a command (the
// server's running count is zero) a tick does not walk the connection
// table at all.

// disconnectPollInterval is how often running commands' clients are
// checked, and how long a command runs before its client is.
const disconnectPollInterval = 20 * time.Millisecond

// watchDisconnects runs until ctx ends.
func (s *Server) watchDisconnects(ctx context.Context) {
	t := time.NewTicker(disconnectPollInterval)
	defer t.Stop()
	var busy []*conn
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			s.ticks.Add(1)
			if s.running.Load() == 0 {
				continue
			}
			s.walks.Add(1)
			busy = busy[:0]
			since := now.Add(-disconnectPollInterval).UnixNano()
			s.mu.Lock()
			for c := range s.conns {
				if b := c.busySince.Load(); b != 0 && b <= since && !c.gone.Load() {
					busy = append(busy, c)
				}
			}
			s.mu.Unlock()
			for _, c := range busy {
				if peerClosed(c.raw) {
					c.gone.Store(true)
					s.env.Ops.KillConn(c.info.ID, mongoerr.ErrClientDisconnect)
				}
			}
		}
	}
}

// rawConn is the connection under TLS, or the connection itself.
func rawConn(nc net.Conn) net.Conn {
	if tc, ok := nc.(interface{ NetConn() net.Conn }); ok {
		return tc.NetConn()
	}
	return nc
}
