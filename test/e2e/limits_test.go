package e2e

import (
	"net"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
	"github.com/cairndb/cairn/internal/wire"
)

// TestMaxConns: connections beyond --maxConns are closed at once, with a
// log line; a freed slot can be used again.
func TestMaxConns(t *testing.T) {
	srv := cairndtest.Start(t, "--maxConns", "3")
	addr := srv.URI[len("mongodb://"):strings.Index(srv.URI, "/?")]
	hello := func(nc net.Conn) error {
		c := &loadConn{nc: nc, r: wire.NewReader(nc, 0)}
		_, err := c.run(bson.D{{Key: "hello", Value: 1}, {Key: "$db", Value: "admin"}})
		return err
	}
	var open []net.Conn
	for i := 0; i < 3; i++ {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		if err := hello(nc); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		open = append(open, nc)
	}
	extra, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	start := time.Now()
	extra.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := extra.Read(make([]byte, 1)); err == nil {
		t.Fatal("the fourth connection got data")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the fourth connection was not closed")
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("closed after %v, want at once", el)
	}
	// The log reaches us through a pipe: allow it a moment.
	for wait := time.Now().Add(5 * time.Second); !strings.Contains(srv.Logs(), "too many open connections"); {
		if time.Now().After(wait) {
			t.Fatal("no log line for the refused connection")
		}
		time.Sleep(20 * time.Millisecond)
	}
	open[0].Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		err = hello(nc)
		nc.Close()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no connection accepted after one was closed: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
