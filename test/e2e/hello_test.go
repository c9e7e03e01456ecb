package e2e

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
	"github.com/cairndb/cairn/internal/wire"
)

// TestStreamingHello drives the awaitable hello that drivers' monitors use:
// with the server's current topologyVersion the reply waits maxAwaitTimeMS,
// and with exhaustAllowed the server keeps sending replies flagged
// moreToCome.
func TestStreamingHello(t *testing.T) {
	srv := cairndtest.Start(t)
	c := rawDial(t, srv)
	first := c.command(marshal(t, bson.D{{Key: "hello", Value: 1}, {Key: "$db", Value: "admin"}}))
	tv := first.Lookup("topologyVersion")
	if tv.Type != bson.TypeEmbeddedDocument {
		t.Fatalf("hello has no topologyVersion: %v", first)
	}
	// A stale topologyVersion is answered at once.
	stale := bson.D{{Key: "processId", Value: bson.NewObjectID()}, {Key: "counter", Value: int64(0)}}
	start := time.Now()
	r := c.command(marshal(t, bson.D{{Key: "hello", Value: 1}, {Key: "topologyVersion", Value: stale}, {Key: "maxAwaitTimeMS", Value: 5000}, {Key: "$db", Value: "admin"}}))
	if time.Since(start) > 3*time.Second || r.Lookup("isWritablePrimary").Boolean() != true {
		t.Fatalf("stale topologyVersion: waited %v, reply %v", time.Since(start), r)
	}
	// The current one with exhaustAllowed: replies arrive on their own.
	body := marshal(t, bson.D{{Key: "hello", Value: 1}, {Key: "topologyVersion", Value: tv}, {Key: "maxAwaitTimeMS", Value: 200}, {Key: "$db", Value: "admin"}})
	c.id++
	c.send(wire.AppendMsg(nil, c.id, 0, wire.FlagExhaustAllowed, body))
	start = time.Now()
	for i := 0; i < 3; i++ {
		c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		m, err := c.r.ReadMessage()
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if m.Msg == nil || m.Msg.Flags&wire.FlagMoreToCome == 0 {
			t.Fatalf("reply %d is not flagged moreToCome", i)
		}
	}
	t.Logf("3 replies in %v", time.Since(start))
	if el := time.Since(start); el < 500*time.Millisecond {
		t.Fatalf("three awaited replies came in %v, expected about 600ms", el)
	}
}
