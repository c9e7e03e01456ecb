package server

import (
	"errors"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// tcpCloseWait is Linux's TCP_CLOSE_WAIT: the peer has sent its FIN.
const tcpCloseWait = 8

// peerClosed reports whether the peer of nc has closed or reset the
// connection, without consuming or waiting for data.
func peerClosed(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false // net.Pipe in tests: no socket to look at
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true // closed already
	}
	closed := false
	var buf [1]byte
	err = rc.Control(func(fd uintptr) {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == nil && n == 0:
			closed = true // end of stream
		case err == nil:
			// Unread bytes (a pipelined request, or TLS's close_notify
			// before the FIN): the peer may still have closed its side.
			if info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
				closed = info.State == tcpCloseWait
			}
		case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EINTR):
		default:
			closed = true // reset, or another error: the client is gone
		}
	})
	return closed || err != nil
}
