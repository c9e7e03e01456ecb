//go:build !linux

package server

import "net"

// peerClosed is not implemented here: a disconnected client's command
// runs to its end.
func peerClosed(net.Conn) bool { return false }
