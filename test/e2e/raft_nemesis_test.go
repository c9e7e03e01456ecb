package e2e

// The Jepsen-style test of a three-member set: clients read, write and
// compare-and-set (findAndModify) a few keys with w: "majority" and
// readConcern "linearizable" (reads checked for linearizability) or
// "majority" (reads checked to return a value some write wrote), and
// insert unique documents with w: "majority" (checked for loss), while a
// nemesis kills -9 and restarts members, cuts them off (both ways and one
// way), makes their links flaky or slow (internal/testutil/netproxy) and
// pauses them (SIGSTOP/SIGCONT). The register history is checked with
// porcupine (github.com/anishathalye/porcupine); an operation that failed
// without a definite answer (a timeout, a network error, a stepped-down
// primary) may or may not have taken effect, and the model allows both.
// Every acknowledged insert must be on every member at the end, and the
// members must hold the same data (dbHash).
//
// The default run disturbs the set for 40 s; -nemesis.duration or
// CAIRN_NEMESIS_LONG=1 (10 minutes) run longer. The seed is logged.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/cairndb/cairn/internal/testutil/netproxy"
)

var nemesisDuration = flag.Duration("nemesis.duration", 0, "how long the nemesis test disturbs the set (default 40s; 10m with CAIRN_NEMESIS_LONG=1)")

const (
	nemesisKeys    = 4
	nemesisClients = 6
	opTimeout      = 3 * time.Second
)

// regInput is a register operation: a read, a write of v, or a
// compare-and-set from cmp to v.
type regInput struct {
	key  int
	kind byte // 'r', 'w', 'c'
	v    int64
	cmp  int64
}

// regOutput is what the operation answered; unknown: no definite answer.
type regOutput struct {
	v       int64 // a read's value
	ok      bool  // a compare-and-set's outcome
	unknown bool
}

// registerModel is a register per key that starts at 0. An operation
// without a definite answer may have taken effect or not.
var registerModel = porcupine.NondeterministicModel{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		by := map[int][]porcupine.Operation{}
		for _, op := range h {
			k := op.Input.(regInput).key
			by[k] = append(by[k], op)
		}
		keys := make([]int, 0, len(by))
		for k := range by {
			keys = append(keys, k)
		}
		sort.Ints(keys)
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, by[k])
		}
		return out
	},
	Init: func() []any { return []any{int64(0)} },
	Step: func(state, input, output any) []any {
		s, in, out := state.(int64), input.(regInput), output.(regOutput)
		switch in.kind {
		case 'r':
			if out.unknown || out.v == s {
				return []any{s}
			}
			return nil
		case 'w':
			if out.unknown {
				return []any{s, in.v}
			}
			return []any{in.v}
		default: // 'c'
			switch {
			case out.unknown && s == in.cmp:
				return []any{s, in.v}
			case out.unknown:
				return []any{s}
			case out.ok && s == in.cmp:
				return []any{in.v}
			case !out.ok && s != in.cmp:
				return []any{s}
			}
			return nil
		}
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(regInput), output.(regOutput)
		res := fmt.Sprint(out.v)
		if in.kind == 'c' {
			res = fmt.Sprint(out.ok)
		}
		if out.unknown {
			res = "?"
		}
		switch in.kind {
		case 'r':
			return fmt.Sprintf("k%d read -> %s", in.key, res)
		case 'w':
			return fmt.Sprintf("k%d write %d -> %s", in.key, in.v, res)
		}
		return fmt.Sprintf("k%d cas %d->%d -> %s", in.key, in.cmp, in.v, res)
	},
}

// history collects the operations of every client.
type history struct {
	mu                sync.Mutex
	ops               []porcupine.Operation
	written           map[int64]bool // every value a write or cas tried
	acked             []string       // acknowledged inserts into test.acks
	stale             []string       // majority reads of a value nobody wrote
	majReads, unknown int
	start             time.Time
}

func (h *history) now() int64 { return int64(time.Since(h.start)) }

// client runs random operations until stop is closed.
func (h *history) client(t *testing.T, s *raftSet, id int, seed int64, stop <-chan struct{}) {
	rnd := rand.New(rand.NewPCG(uint64(seed), uint64(id)))
	c, err := mongo.Connect(options.Client().ApplyURI(s.uri()).SetTimeout(opTimeout).
		SetServerSelectionTimeout(opTimeout))
	if err != nil {
		t.Error(err)
		return
	}
	defer c.Disconnect(context.Background())
	wc := options.Collection().SetWriteConcern(writeconcern.Majority())
	lin := c.Database("test").Collection("jepsen", wc, options.Collection().SetReadConcern(readconcern.Linearizable()))
	maj := c.Database("test").Collection("jepsen", wc, options.Collection().SetReadConcern(readconcern.Majority()))
	acks := c.Database("test").Collection("acks", wc)
	seq := int64(0)
	for {
		select {
		case <-stop:
			return
		default:
		}
		seq++
		key := rnd.IntN(nemesisKeys)
		val := int64(id+1)*1_000_000 + seq
		cx, cancel := context.WithTimeout(context.Background(), opTimeout)
		call := h.now()
		var in regInput
		var out regOutput
		record := true
		switch r := rnd.IntN(10); {
		case r < 3: // linearizable read
			in = regInput{key: key, kind: 'r'}
			var d struct {
				V int64 `bson:"v"`
			}
			err = lin.FindOne(cx, bson.D{{Key: "_id", Value: key}}).Decode(&d)
			if err != nil {
				record = false // a failed read changed nothing
			}
			out.v = d.V
		case r < 4: // majority read, from any member
			var d struct {
				V int64 `bson:"v"`
			}
			coll := maj
			if rnd.IntN(2) == 0 {
				coll = c.Database("test", options.Database().SetReadPreference(readpref.SecondaryPreferred())).
					Collection("jepsen", options.Collection().SetReadConcern(readconcern.Majority()))
			}
			record = false
			if err := coll.FindOne(cx, bson.D{{Key: "_id", Value: key}}).Decode(&d); err == nil {
				h.mu.Lock()
				h.majReads++
				if d.V != 0 && !h.written[d.V] {
					h.stale = append(h.stale, fmt.Sprintf("k%d = %d", key, d.V))
				}
				h.mu.Unlock()
			}
		case r < 6: // write
			in = regInput{key: key, kind: 'w', v: val}
			h.noteWritten(val)
			_, err = lin.UpdateOne(cx, bson.D{{Key: "_id", Value: key}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: val}}}})
			// A failed write may have been applied (before a
			// step-down, by a retry): its outcome is unknown.
			out.unknown = err != nil
		case r < 9: // compare-and-set from the value a linearizable read saw
			var d struct {
				V int64 `bson:"v"`
			}
			if err := lin.FindOne(cx, bson.D{{Key: "_id", Value: key}}).Decode(&d); err != nil {
				record = false
				break
			}
			call = h.now()
			in = regInput{key: key, kind: 'c', cmp: d.V, v: val}
			h.noteWritten(val)
			err = lin.FindOneAndUpdate(cx, bson.D{{Key: "_id", Value: key}, {Key: "v", Value: d.V}},
				bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: val}}}}).Err()
			switch {
			case err == nil:
				out.ok = true
			case errors.Is(err, mongo.ErrNoDocuments):
				out.ok = false
			default:
				out.unknown = true
			}
		default: // insert a unique document
			record = false
			idv := fmt.Sprintf("c%d-%d", id, seq)
			if _, err := acks.InsertOne(cx, bson.D{{Key: "_id", Value: idv}}); err == nil {
				h.mu.Lock()
				h.acked = append(h.acked, idv)
				h.mu.Unlock()
			}
		}
		ret := h.now()
		cancel()
		if !record {
			continue
		}
		if out.unknown {
			ret = math.MaxInt64 // it may take effect at any later time
		}
		h.mu.Lock()
		if out.unknown {
			h.unknown++
		}
		h.ops = append(h.ops, porcupine.Operation{ClientId: id, Input: in, Call: call, Output: out, Return: ret})
		h.mu.Unlock()
	}
}

func (h *history) noteWritten(v int64) {
	h.mu.Lock()
	h.written[v] = true
	h.mu.Unlock()
}

// nemesis disturbs the set until stop is closed, one fault at a time,
// and undoes its last fault when it stops.
type nemesis struct {
	t      *testing.T
	s      *raftSet
	rnd    *rand.Rand
	counts map[string]int
	undo   func()
}

func (n *nemesis) step() {
	if n.undo != nil {
		n.undo()
		n.undo = nil
		return
	}
	i := n.rnd.IntN(len(n.s.members))
	if n.rnd.IntN(2) == 0 {
		if p := n.s.primary(); p >= 0 {
			i = p // the primary half the time
		}
	}
	kind := []string{"kill", "isolate", "one-way", "flaky", "slow", "pause"}[n.rnd.IntN(6)]
	n.counts[kind]++
	n.t.Logf("nemesis: %s member %d", kind, i)
	switch kind {
	case "kill":
		n.s.members[i].Kill()
		n.undo = func() { n.s.start(i) }
	case "isolate":
		n.s.isolate(i)
		n.undo = n.s.heal
	case "one-way":
		// Member i hears nobody (its messages still go out).
		for j := range n.s.members {
			if j != i {
				n.s.proxies[i].SetLink(uint64(j+1), netproxy.Link{Cut: true})
			}
		}
		n.undo = n.s.heal
	case "flaky", "slow":
		l := netproxy.Link{Drop: 0.3}
		if kind == "slow" {
			l = netproxy.Link{Delay: 100 * time.Millisecond, Jitter: 200 * time.Millisecond}
		}
		for j := range n.s.members {
			if j != i {
				n.s.proxies[i].SetLink(uint64(j+1), l)
				n.s.proxies[j].SetLink(uint64(i+1), l)
			}
		}
		n.undo = n.s.heal
	case "pause":
		n.s.members[i].Pause()
		n.undo = n.s.members[i].Resume
	}
}

// TestRaftNemesis: see the top of the file.
func TestRaftNemesis(t *testing.T) {
	if testing.Short() {
		t.Skip("the nemesis test runs for minutes")
	}
	dur := 40 * time.Second
	if os.Getenv("CAIRN_NEMESIS_LONG") != "" {
		dur = 10 * time.Minute
	}
	if *nemesisDuration > 0 {
		dur = *nemesisDuration
	}
	rnd, seed := seededRand(t)
	s := startRaftSetWith(t, 3, nil, seed)
	setup := s.client().Database("test").Collection("jepsen", options.Collection().SetWriteConcern(writeconcern.Majority()))
	for k := 0; k < nemesisKeys; k++ {
		if _, err := setup.InsertOne(ctx(t), bson.D{{Key: "_id", Value: k}, {Key: "v", Value: int64(0)}}); err != nil {
			t.Fatalf("%v\n%s", err, s.logs())
		}
	}
	h := &history{start: time.Now(), written: map[int64]bool{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for id := 0; id < nemesisClients; id++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.client(t, s, id, seed, stop)
		}()
	}
	nem := &nemesis{t: t, s: s, rnd: rnd, counts: map[string]int{}}
	end := time.Now().Add(dur)
	for time.Now().Before(end) {
		time.Sleep(time.Duration(1000+rnd.IntN(2000)) * time.Millisecond)
		nem.step()
	}
	if nem.undo != nil {
		nem.undo()
	}
	s.heal()
	for i, m := range s.members {
		if m.Exited() {
			s.start(i)
		}
	}
	// Let the clients run on the healed set a little, then stop them.
	s.waitHealthy(3)
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()

	// Lost acknowledged writes: every acknowledged insert is on every
	// member, and the members hold the same data.
	s.waitSameData("test")
	lost := 0
	for i := range s.members {
		acks := s.direct(i).Database("test", options.Database().SetReadPreference(readpref.SecondaryPreferred())).Collection("acks")
		for _, id := range h.acked {
			if err := acks.FindOne(ctx(t), bson.D{{Key: "_id", Value: id}}).Err(); err != nil {
				lost++
				t.Errorf("member %d: acknowledged insert %s is missing: %v", i, id, err)
			}
		}
	}
	res, info := porcupine.CheckOperationsVerbose(registerModel.ToModel(), h.ops, 60*time.Second)
	if res == porcupine.Illegal {
		if f, err := os.CreateTemp("", "cairn-nemesis-*.html"); err == nil {
			_ = porcupine.Visualize(registerModel.ToModel(), info, f)
			f.Close()
			t.Logf("linearizability violation: visualization in %s", f.Name())
		}
	}
	t.Logf("seed %d: %v of faults %v; %d register operations checked (%d without a definite answer), %d majority reads, %d acknowledged inserts; linearizability: %s; lost acknowledged inserts: %d; majority reads of unwritten values: %d",
		seed, dur, nem.counts, len(h.ops), h.unknown, h.majReads, len(h.acked), res, lost/len(s.members), len(h.stale))
	if res != porcupine.Ok {
		t.Errorf("seed %d: the history is not linearizable (%s)", seed, res)
	}
	if len(h.stale) > 0 {
		t.Errorf("seed %d: majority reads returned values no write wrote: %v", seed, h.stale)
	}
	if len(h.ops) < 50 || len(h.acked) < 10 {
		t.Errorf("seed %d: too few operations succeeded (%d register operations, %d inserts)\n%s", seed, len(h.ops), len(h.acked), s.logs())
	}
}
