package server

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/internal/wire"
	"github.com/cairndb/cairn/kv"
	"github.com/cairndb/cairn/kv/vfs"
)

// TestPowerLossKeepsAcknowledgedWrites runs the server on the simulating
// file system: concurrent clients insert, update and delete with j: true
// while a secondary index is kept; at a random moment the machine "loses
// power" (only synced bytes survive, plus a random, possibly torn, part of
// the rest); the server restarts on what is left. Every acknowledged write
// must be there, the one write in flight per client may or may not be, but
// never half (validate checks documents against the index). Many crash
// points per run; the seed is printed.
func TestPowerLossKeepsAcknowledgedWrites(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	fs := vfs.NewMem()
	opts := func() Options {
		return Options{DBPath: "/db", KV: &kv.Options{FS: fs, JournalSize: 1 << 20},
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	}
	const clients, idsPerClient = 4, 8
	// state[id] is the acknowledged value (-1: absent); inflight[id] the
	// value an unacknowledged operation would leave.
	state := make([]int, clients*idsPerClient)
	for i := range state {
		state[i] = -1
	}
	crashes, acked := 0, 0
	// Run for 8 s, and on a loaded machine longer (up to 3 minutes) until
	// the run has proved enough.
	start := time.Now()
	enough := func() bool { return crashes >= 20 && acked >= 100 }
	for round := 0; round < 300; round++ {
		if el := time.Since(start); el > 3*time.Minute || (el > 8*time.Second && enough()) {
			break
		}
		s, err := New(opts())
		if err != nil {
			t.Fatalf("round %d: reopening after a crash: %v", round, err)
		}
		if round == 0 {
			cmd(t, s, dbson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: dbson.A{dbson.D{{Key: "key", Value: dbson.D{{Key: "v", Value: 1}}}, {Key: "name", Value: "v_1"}}}}, {Key: "$db", Value: "t"}})
		}
		check(t, s, round, state)
		inflight := make([]int, len(state))
		copy(inflight, state)
		var mu sync.Mutex
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for cl := 0; cl < clients; cl++ {
			wg.Add(1)
			crng := rand.New(rand.NewPCG(seed+uint64(round*clients+cl), 1))
			go func() {
				defer wg.Done()
				c := pipeConn(s)
				defer c.Close()
				r := wire.NewReader(c, 0)
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					id := cl*idsPerClient + crng.IntN(idsPerClient)
					mu.Lock()
					cur := state[id]
					mu.Unlock()
					var body dbson.D
					next := crng.IntN(1000)
					switch {
					case cur < 0:
						body = dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "_id", Value: id}, {Key: "v", Value: next}}}}}
					case crng.IntN(4) == 0:
						body = dbson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: dbson.A{dbson.D{{Key: "q", Value: dbson.D{{Key: "_id", Value: id}}}, {Key: "limit", Value: 1}}}}}
						next = -1
					default:
						body = dbson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: dbson.A{dbson.D{{Key: "q", Value: dbson.D{{Key: "_id", Value: id}}}, {Key: "u", Value: dbson.D{{Key: "$set", Value: dbson.D{{Key: "v", Value: next}}}}}}}}}
					}
					body = append(body, dbson.E{Key: "writeConcern", Value: dbson.D{{Key: "j", Value: true}}}, dbson.E{Key: "$db", Value: "t"})
					raw, _ := dbson.Marshal(body)
					mu.Lock()
					inflight[id] = next
					mu.Unlock()
					c.SetDeadline(time.Now().Add(5 * time.Second))
					if _, err := c.Write(wire.AppendMsg(nil, int32(n), 0, 0, raw)); err != nil {
						return
					}
					m, err := r.ReadMessage()
					if err != nil || m.Msg == nil {
						return
					}
					reply := dbson.Raw(m.Msg.Body)
					if ok, _ := reply.Lookup("ok").AsFloat64OK(); ok != 1 {
						return // the engine failed under the crash
					}
					if _, err := reply.LookupErr("writeErrors"); err == nil {
						return
					}
					mu.Lock()
					state[id] = next
					acked++
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
		mu.Lock()
		fs.Crash(vfs.CrashOptions{KeepUnsynced: rng.Float64(), Tear: true, Rand: rng})
		crashes++
		// Everything acknowledged from now on would be a lie: freeze the model.
		snapshot := append([]int(nil), state...)
		flight := append([]int(nil), inflight...)
		mu.Unlock()
		close(stop)
		s.Shutdown(context.Background())
		wg.Wait()
		mu.Lock()
		// A reply that raced the crash may have updated state after the
		// snapshot: those writes were acknowledged before power was lost
		// only if the engine had synced them, which check() verifies.
		copy(state, snapshot)
		mu.Unlock()
		s2, err := New(opts())
		if err != nil {
			t.Fatalf("round %d (seed %d): recovery failed: %v", round, seed, err)
		}
		for id := range state {
			got := readV(t, s2, id)
			if got != state[id] && got != flight[id] {
				t.Fatalf("round %d (seed %d): _id %d is %d after the crash; acknowledged %d, in flight %d", round, seed, id, got, state[id], flight[id])
			}
			state[id] = got // the in-flight write may have survived
		}
		check(t, s2, round, state)
		s2.Shutdown(context.Background())
	}
	t.Logf("%d crash points survived, %d journaled writes acknowledged", crashes, acked)
	if !enough() {
		t.Fatalf("only %d crash points and %d acknowledged writes: the test proved too little", crashes, acked)
	}
}

// cmd runs a command on a fresh connection and returns the reply.
func cmd(t *testing.T, s *Server, body dbson.D) dbson.Raw {
	t.Helper()
	c := pipeConn(s)
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	raw, _ := dbson.Marshal(body)
	if _, err := c.Write(wire.AppendMsg(nil, 1, 0, 0, raw)); err != nil {
		t.Fatal(err)
	}
	m, err := wire.NewReader(c, 0).ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	return dbson.Raw(append([]byte(nil), m.Msg.Body...))
}

func readV(t *testing.T, s *Server, id int) int {
	r := cmd(t, s, dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: id}}}, {Key: "$db", Value: "t"}})
	docs, err := r.LookupErr("cursor", "firstBatch")
	if err != nil {
		t.Fatalf("find: %v", r)
	}
	vals, _ := docs.Array().Values()
	if len(vals) == 0 {
		return -1
	}
	return int(vals[0].Document().Lookup("v").AsInt64())
}

// check asserts the server holds exactly the model and that the index
// agrees with the documents.
func check(t *testing.T, s *Server, round int, state []int) {
	t.Helper()
	r := cmd(t, s, dbson.D{{Key: "validate", Value: "c"}, {Key: "$db", Value: "t"}})
	if code, err := r.LookupErr("code"); err == nil && code.Int32() == 26 {
		return // no collection yet
	}
	if v, err := r.LookupErr("valid"); err != nil || !v.Boolean() {
		t.Fatalf("round %d: validate: %v", round, r)
	}
	for id, want := range state {
		if got := readV(t, s, id); got != want {
			t.Fatalf("round %d: _id %d = %d, want %d", round, id, got, want)
		}
	}
}
