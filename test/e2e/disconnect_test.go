package e2e

import (
	"fmt"
	"net"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
	"github.com/cairndb/cairn/internal/wire"
)

// TestClientDisconnectEndsOperation: a client that disconnects while its
// aggregation scans (for hours, unless stopped) ends that scan: the server
// notices, kills the operation with ClientDisconnect, and the operation
// stops within 100 ms of the kill — measured by the server's own counters
// (metrics.operation.killedDueToClientDisconnect, disconnectKillMaxMicros),
// not by timing the client.
func TestClientDisconnectEndsOperation(t *testing.T) {
	srv := cairndtest.Start(t)
	client := dial(t, srv.URI)
	coll := client.Database("t").Collection("c")
	docs := make([]any, 2000)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i}}
	}
	if _, err := coll.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	inner := bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "c"}, {Key: "let", Value: bson.D{{Key: "v", Value: "$a"}}},
		{Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "$expr", Value: bson.D{{Key: "$lt", Value: bson.A{"$a", bson.D{{Key: "$subtract", Value: bson.A{"$$v", 1_000_000}}}}}}}}}}}},
		{Key: "as", Value: "y"}}}}
	pipeline := bson.A{bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "c"}, {Key: "let", Value: bson.D{{Key: "w", Value: "$a"}}},
		{Key: "pipeline", Value: bson.A{inner, bson.D{{Key: "$match", Value: bson.D{{Key: "y", Value: bson.D{{Key: "$size", Value: 5}}}}}}}},
		{Key: "as", Value: "x"}}}}}
	raw, err := bson.Marshal(bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: pipeline},
		{Key: "cursor", Value: bson.D{}}, {Key: "$db", Value: "t"}})
	if err != nil {
		t.Fatal(err)
	}
	pingBody, err := bson.Marshal(bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})
	if err != nil {
		t.Fatal(err)
	}
	killed := int64(0)
	for _, pipelined := range []bool{false, true} {
		nc, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", srv.Port))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := nc.Write(wire.AppendMsg(nil, 1, 0, 0, raw)); err != nil {
			t.Fatal(err)
		}
		running := func() int {
			var res struct {
				Inprog []bson.Raw `bson:"inprog"`
			}
			if err := client.Database("admin").RunCommand(ctx(t), bson.D{{Key: "currentOp", Value: 1}}).Decode(&res); err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, op := range res.Inprog {
				if name, ok := op.Lookup("command", "aggregate").StringValueOK(); ok && name == "c" {
					n++
				}
			}
			return n
		}
		for deadline := time.Now().Add(20 * time.Second); running() == 0; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the aggregation never showed in currentOp")
			}
		}
		time.Sleep(200 * time.Millisecond) // it is well into its scan
		if pipelined {
			// Unread bytes on the socket (a pipelined request, or TLS's
			// close_notify) must not hide the close.
			if _, err := nc.Write(wire.AppendMsg(nil, 2, 0, 0, pingBody)); err != nil {
				t.Fatal(err)
			}
		}
		nc.Close()
		var metrics struct {
			Metrics struct {
				Operation struct {
					Killed  int64 `bson:"killedDueToClientDisconnect"`
					MaxKill int64 `bson:"disconnectKillMaxMicros"`
				} `bson:"operation"`
			} `bson:"metrics"`
		}
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if err := client.Database("admin").RunCommand(ctx(t), bson.D{{Key: "serverStatus", Value: 1}}).Decode(&metrics); err != nil {
				t.Fatal(err)
			}
			if metrics.Metrics.Operation.Killed > killed {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the server never ended the disconnected client's aggregation")
			}
		}
		if n := running(); n != 0 {
			t.Errorf("%d aggregations still running after their client left", n)
		}
		if us := metrics.Metrics.Operation.MaxKill; us > 100_000 {
			t.Errorf("the aggregation ran on %d µs after the disconnect was noticed, want under 100 ms", us)
		}
		t.Logf("killedDueToClientDisconnect %d, ran on %d µs after the kill", metrics.Metrics.Operation.Killed, metrics.Metrics.Operation.MaxKill)
		killed = metrics.Metrics.Operation.Killed
	}
}
