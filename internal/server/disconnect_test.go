package server

import (
	"testing"
	"time"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/internal/wire"
)

// TestDisconnectWatcherIdle: while no connection runs a command the
// watcher's ticks do not walk the connection table, however many
// connections are open; they do while one runs.
func TestDisconnectWatcherIdle(t *testing.T) {
	s := newTestServer(t)
	for i := 0; i < 50; i++ {
		c := pipeConn(s)
		defer c.Close()
	}
	waitTicks := func(n int64) {
		t.Helper()
		start := s.ticks.Load()
		deadline := time.Now().Add(10 * time.Second)
		for s.ticks.Load() < start+n {
			if time.Now().After(deadline) {
				t.Fatalf("the watcher ticked %d times in 10 s", s.ticks.Load()-start)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitTicks(3)
	if w := s.walks.Load(); w != 0 {
		t.Fatalf("idle server: the watcher walked the connection table %d times", w)
	}
	// A running command (here: the count it holds) makes the next tick
	// walk the table.
	s.running.Add(1)
	waitTicks(2)
	s.running.Add(-1)
	if s.walks.Load() == 0 {
		t.Fatal("the watcher never walked the table while a command ran")
	}
	// Running commands still work and leave the count at zero.
	c := pipeConn(s)
	defer c.Close()
	if _, err := c.Write(cmdMsg(dbson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})); err != nil {
		t.Fatal(err)
	}
	if _, err := wire.NewReader(c, 0).ReadMessage(); err != nil {
		t.Fatal(err)
	}
	// The count drops just after the reply is written.
	for deadline := time.Now().Add(5 * time.Second); s.running.Load() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("running = %d after the command", s.running.Load())
		}
	}
}
