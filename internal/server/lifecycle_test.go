package server

import (
	"context"
	"net"
	"testing"
	"time"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/internal/wire"
)

// endlessPipeline is an aggregation that would run for hours: every
// document of c looks up, for every document of c, every document of c
// (correlated, so that nothing can be computed once), matching none.
func endlessPipeline() dbson.A {
	inner := dbson.D{{Key: "$lookup", Value: dbson.D{{Key: "from", Value: "c"}, {Key: "let", Value: dbson.D{{Key: "v", Value: "$a"}}},
		{Key: "pipeline", Value: dbson.A{dbson.D{{Key: "$match", Value: dbson.D{{Key: "$expr", Value: dbson.D{{Key: "$lt", Value: dbson.A{"$a", dbson.D{{Key: "$subtract", Value: dbson.A{"$$v", 1_000_000}}}}}}}}}}}},
		{Key: "as", Value: "y"}}}}
	return dbson.A{dbson.D{{Key: "$lookup", Value: dbson.D{{Key: "from", Value: "c"}, {Key: "let", Value: dbson.D{{Key: "w", Value: "$a"}}},
		{Key: "pipeline", Value: dbson.A{inner, dbson.D{{Key: "$match", Value: dbson.D{{Key: "y", Value: dbson.D{{Key: "$size", Value: 5}}}}}}}},
		{Key: "as", Value: "x"}}}}}
}

func fillC(t *testing.T, s *Server, n int) {
	t.Helper()
	docs := make(dbson.A, n)
	for i := range docs {
		docs[i] = dbson.D{{Key: "_id", Value: i}, {Key: "a", Value: i}}
	}
	if r := cmd(t, s, dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: docs}, {Key: "$db", Value: "t"}}); r.Lookup("n").AsInt64() != int64(n) {
		t.Fatalf("insert: %v", r)
	}
}

// startEndless sends the endless aggregation on a new connection and waits
// until it runs.
func startEndless(t *testing.T, s *Server) net.Conn {
	t.Helper()
	c := pipeConn(s)
	raw, _ := dbson.Marshal(dbson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: endlessPipeline()},
		{Key: "cursor", Value: dbson.D{}}, {Key: "$db", Value: "t"}})
	if _, err := c.Write(wire.AppendMsg(nil, 1, 0, 0, raw)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if runningAggregations(t, s) > 0 {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatal("the aggregation never showed as running")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// runningAggregations counts the aggregations currentOp lists.
func runningAggregations(t *testing.T, s *Server) int {
	t.Helper()
	r := cmd(t, s, dbson.D{{Key: "currentOp", Value: 1}, {Key: "$db", Value: "admin"}})
	ops, _ := r.Lookup("inprog").Array().Values()
	n := 0
	for _, op := range ops {
		if _, ok := op.Document().Lookup("command", "aggregate").StringValueOK(); ok {
			n++
		}
	}
	return n
}

// TestShutdownDeadlineInterruptsOperations: Shutdown with a deadline
// returns by it (plus the time to close the engine) while an aggregation
// that would run for hours is running; the aggregation answers
// InterruptedAtShutdown (11600).
func TestShutdownDeadlineInterruptsOperations(t *testing.T) {
	s := newTestServer(t)
	fillC(t, s, 2000)
	c := startEndless(t, s)
	defer c.Close()
	replied := make(chan dbson.Raw, 1)
	go func() {
		m, err := wire.NewReader(c, 0).ReadMessage()
		if err != nil {
			replied <- nil
			return
		}
		replied <- dbson.Raw(append([]byte(nil), m.Msg.Body...))
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	// Generous: the point is that it does not wait for the aggregation.
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Shutdown with a 200 ms deadline took %v", d)
	}
	if r := <-replied; r != nil {
		if code, _ := r.Lookup("code").AsInt64OK(); code != 11600 {
			t.Errorf("the interrupted aggregation answered %v, want InterruptedAtShutdown (11600)", r)
		}
	}
}
