package e2e

// Retryable writes across a failover: the primary executes a retryable
// write and drops the connection before answering (the fail point
// onPrimaryTransactionalWrite), the test waits until the write reached
// both secondaries and kills -9 the primary, and the Go driver retries
// the write against the new primary, which answers the first outcome
// from the records it derived when it applied the write (internal/
// raftrepl's sessions.go) and does not run it again.

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// killOnFirstFailure kills the primary when the first attempt of a
// command fails (the fail point closed its connection), once applied
// reports that every secondary holds its write; it notes where the
// command finally succeeded and with which reply.
type killOnFirstFailure struct {
	t       *testing.T
	s       *raftSet
	mu      sync.Mutex
	name    string          // the command watched ("": none)
	applied func() bool     // the write is on every secondary
	killed  int             // the member killed (-1: none)
	okHost  string          // where the command succeeded
	reply   bson.Raw        // its reply
	failure error           // what went wrong in the monitor
	direct  []*mongo.Client // direct connections to the members
}

// heartbeat is the driver's heartbeat interval in these tests.
const heartbeat = 500 * time.Millisecond

// otherPrimary reports whether a member other than old says it is primary.
func (k *killOnFirstFailure) otherPrimary(old int) bool {
	for i, c := range k.direct {
		if i == old || k.s.members[i] == nil || k.s.members[i].Exited() {
			continue
		}
		if h, err := k.s.hello(c); err == nil && h["isWritablePrimary"] == true {
			return true
		}
	}
	return false
}

func (k *killOnFirstFailure) monitor() *event.CommandMonitor {
	return &event.CommandMonitor{
		Failed: func(_ context.Context, e *event.CommandFailedEvent) {
			k.t.Logf("failed %s on %s: %v", e.CommandName, e.ConnectionID, e.Failure)
			k.mu.Lock()
			defer k.mu.Unlock()
			if e.CommandName != k.name || k.killed >= 0 {
				return
			}
			p := -1
			for i := range k.s.members {
				if strings.HasPrefix(e.ConnectionID, k.s.host(i)) {
					p = i
				}
			}
			if p < 0 {
				k.failure = fmt.Errorf("the failed attempt ran on %q, not a member", e.ConnectionID)
				return
			}
			deadline := time.Now().Add(20 * time.Second)
			for !k.applied() {
				if time.Now().After(deadline) {
					k.failure = fmt.Errorf("the write did not reach the secondaries within 20s")
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
			k.s.members[p].Kill()
			k.killed = p
			// The retry goes where the driver's topology says the primary
			// is: wait for the election and for a heartbeat of the
			// driver's to have seen it (a retry sent to the dead member
			// would fail to connect and end the write).
			for time.Now().Before(deadline) && !k.otherPrimary(p) {
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(2 * heartbeat)
		},
		Succeeded: func(_ context.Context, e *event.CommandSucceededEvent) {
			k.mu.Lock()
			defer k.mu.Unlock()
			if e.CommandName == k.name {
				k.okHost, k.reply = e.ConnectionID, append(bson.Raw(nil), e.Reply...)
			}
		},
	}
}

// TestRaftRetryableFailover: a retryable insert, update ($inc) and
// findAndModify ($inc, returning the new document) whose connection
// drops after the write, retried by the driver against the new primary
// after the kill -9 of the old one, each answer their first outcome
// (retriedStmtIds / retriedStmtId in the reply) and apply once; the
// secondaries' config.transactions records match the primary's; a
// committed transaction's commitTransaction retried on the new primary
// answers ok.
func TestRaftRetryableFailover(t *testing.T) {
	s := startRaftSetArgs(t, 3, nil, 0, "--setParameter", "enableTestCommands=1")
	k := &killOnFirstFailure{t: t, s: s, killed: -1}
	for i := range s.members {
		k.direct = append(k.direct, s.direct(i))
	}
	c := s.client(options.Client().SetMonitor(k.monitor()).SetRetryWrites(true).SetHeartbeatInterval(heartbeat))
	coll := c.Database("test").Collection("rw", options.Collection().SetWriteConcern(writeconcern.Majority()))
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: "seed"}, {Key: "x", Value: 0}}); err != nil {
		t.Fatalf("%v\n%s", err, s.logs())
	}
	// onSecondaries reports whether every running secondary finds filter.
	onSecondaries := func(p int, filter bson.D) func() bool {
		var clients []*mongo.Client
		for i := range s.members {
			if i != p {
				clients = append(clients, s.direct(i))
			}
		}
		return func() bool {
			for _, d := range clients {
				cx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				n, err := d.Database("test", options.Database().SetReadPreference(readpref.SecondaryPreferred())).Collection("rw").CountDocuments(cx, filter)
				cancel()
				if err != nil || n != 1 {
					return false
				}
			}
			return true
		}
	}
	cases := []struct {
		name    string
		command string
		filter  bson.D // what the write leaves, once
		run     func() error
		retried string // the reply's field naming the retried statement(s)
	}{
		{"insert", "insert", bson.D{{Key: "_id", Value: "ins"}}, func() error {
			_, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: "ins"}})
			return err
		}, "retriedStmtIds"},
		{"update", "update", bson.D{{Key: "_id", Value: "seed"}, {Key: "x", Value: 1}}, func() error {
			res, err := coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: "seed"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "x", Value: 1}}}})
			if err == nil && (res.MatchedCount != 1 || res.ModifiedCount != 1) {
				return fmt.Errorf("update answered %+v, want 1 matched and modified", res)
			}
			return err
		}, "retriedStmtIds"},
		{"findAndModify", "findAndModify", bson.D{{Key: "_id", Value: "seed"}, {Key: "x", Value: 2}}, func() error {
			var got bson.M
			err := coll.FindOneAndUpdate(ctx(t), bson.D{{Key: "_id", Value: "seed"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "x", Value: 1}}}},
				options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&got)
			if err == nil && intOf(got["x"]) != 2 {
				return fmt.Errorf("findAndModify returned %v, want x: 2", got)
			}
			return err
		}, "retriedStmtId"},
	}
	for _, tc := range cases {
		p := s.waitHealthy(3)
		admin := s.direct(p).Database("admin")
		setPoint(t, admin, onPrimaryWrite(bson.D{{Key: "times", Value: 1}}, nil))
		k.mu.Lock()
		k.name, k.applied, k.killed, k.okHost, k.reply = tc.command, onSecondaries(p, tc.filter), -1, "", nil
		k.mu.Unlock()
		started := time.Now()
		err := tc.run()
		k.mu.Lock()
		killed, okHost, reply, failure := k.killed, k.okHost, k.reply, k.failure
		k.name = ""
		k.mu.Unlock()
		if failure != nil {
			t.Fatalf("%s: %v\n%s", tc.name, failure, s.logs())
		}
		if err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, s.logs())
		}
		if killed != p {
			t.Fatalf("%s: killed member %d, the primary was %d (the first attempt did not fail?)", tc.name, killed, p)
		}
		if strings.HasPrefix(okHost, s.host(p)) {
			t.Fatalf("%s: succeeded on the killed member %s", tc.name, okHost)
		}
		if !bytes.Contains(reply, []byte(tc.retried)) {
			t.Fatalf("%s: the retry's reply %v has no %s: it ran again rather than answer the recorded outcome", tc.name, reply, tc.retried)
		}
		t.Logf("%s: kill -9 of member %d, retried on %s after %v", tc.name, p, okHost, time.Since(started))
		// Applied once, on the new primary.
		primaryColl := c.Database("test").Collection("rw")
		if n := count(t, primaryColl, tc.filter); n != 1 {
			t.Fatalf("%s: %d documents match %v, want 1", tc.name, n, tc.filter)
		}
		s.start(p)
	}
	s.waitHealthy(3)

	// A transaction committed with w: "majority", then the kill -9 of the
	// primary: commitTransaction retried on the new primary answers ok
	// (the members recorded the commit in config.transactions), and the
	// transaction's write is there once.
	p := s.primary()
	pdb := s.direct(p).Database("test")
	lsid := newLSID(t)
	mustRetryable(t, pdb, bson.D{{Key: "insert", Value: "rw"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: "txn"}}}},
		{Key: "startTransaction", Value: true}, {Key: "autocommit", Value: false}}, lsid, 1)
	commit := bson.D{{Key: "commitTransaction", Value: 1}, {Key: "autocommit", Value: false}, {Key: "writeConcern", Value: bson.D{{Key: "w", Value: "majority"}}}}
	mustRetryable(t, s.direct(p).Database("admin"), commit, lsid, 1)
	applied := onSecondaries(p, bson.D{{Key: "_id", Value: "txn"}})
	for deadline := time.Now().Add(20 * time.Second); !applied(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the transaction's write did not reach the secondaries\n%s", s.logs())
		}
	}
	s.members[p].Kill()
	np := s.waitOtherPrimary(p)
	if _, err := retryable(t, s.direct(np).Database("admin"), commit, lsid, 1); err != nil {
		t.Fatalf("commitTransaction retried on the new primary: %v (want ok: the commit was recorded)", err)
	}
	if n := count(t, c.Database("test").Collection("rw"), bson.D{{Key: "_id", Value: "txn"}}); n != 1 {
		t.Fatalf("the transaction's document: %d, want 1", n)
	}
	s.start(p)
	s.waitHealthy(3)
	// Every member holds the same session records (the driver's
	// sessions and their last txnNumbers).
	want := ""
	for i := range s.members {
		got := ""
		deadline := time.Now().Add(20 * time.Second)
		for {
			got = txnRecords(t, s.direct(i))
			if want == "" || got == want || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if got == "" {
			t.Fatalf("member %d: no config.transactions record", i)
		}
		if want == "" {
			want = got
		} else if got != want {
			t.Fatalf("member %d config.transactions:\n%s\nmember 0:\n%s", i, got, want)
		}
	}
}

// txnRecords lists a member's config.transactions records (_id and
// txnNum, in _id order) as text.
func txnRecords(t *testing.T, c *mongo.Client) string {
	t.Helper()
	cur, err := c.Database("config", options.Database().SetReadPreference(readpref.SecondaryPreferred())).
		Collection("transactions").Find(ctx(t), bson.D{}, options.Find().
		SetProjection(bson.D{{Key: "_id", Value: 1}, {Key: "txnNum", Value: 1}}).SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for cur.Next(ctx(t)) {
		out.WriteString(cur.Current.String())
		out.WriteByte('\n')
	}
	if err := cur.Err(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}
