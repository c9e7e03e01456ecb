package e2e

// Member priorities on a three-member set (internal/raftrepl/priority.go):
// the member of the highest priority ends up primary (priority takeover),
// a member of priority 0 never becomes primary, and a reconfig that raises
// a member's priority hands it the primary.

import (
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// startRaftSetMembers starts len(fields) members and initiates them on
// member 0, member i's configuration document getting fields[i] (priority,
// votes, ...); it returns once a primary and the secondaries are seen.
func startRaftSetMembers(t *testing.T, fields []bson.D, extra ...string) *raftSet {
	t.Helper()
	s := newRaftSet(t, len(fields), extra...)
	s.launch(fields)
	return s
}

// newRaftSet prepares a set of n members started with the arguments
// extra: their ports and data directories (launch starts them).
func newRaftSet(t *testing.T, n int, extra ...string) *raftSet {
	t.Helper()
	return newRaftSetSeeded(t, n, 0, extra...)
}

// launch starts the members and initiates the set on member 0 (member i's
// configuration document getting fields[i]); it returns once a primary and
// the secondaries are seen.
func (s *raftSet) launch(fields []bson.D) {
	t := s.t
	t.Helper()
	n := len(fields)
	s.startAll()
	if err := s.direct(0).Database("admin").RunCommand(ctx(t), bson.D{{Key: "replSetInitiate", Value: s.config(fields, 1)}}).Err(); err != nil {
		t.Fatalf("replSetInitiate: %v\n%s", err, s.logs())
	}
	s.waitHealthy(n)
}

// config is the set's configuration document of version v, member i's
// document getting fields[i].
func (s *raftSet) config(fields []bson.D, v int) bson.D {
	members := bson.A{}
	for i, f := range fields {
		members = append(members, append(bson.D{{Key: "_id", Value: i}, {Key: "host", Value: s.host(i)}}, f...))
	}
	return bson.D{{Key: "_id", Value: s.name}, {Key: "version", Value: v}, {Key: "members", Value: members}}
}

// waitPrimaryIs waits (up to d) until member want says it is primary,
// asking through clients, failing at once if a member of never does.
func (s *raftSet) waitPrimaryIs(clients []*mongo.Client, want int, d time.Duration, never ...int) {
	s.t.Helper()
	deadline := time.Now().Add(d)
	for {
		p := s.primaryOf(clients)
		for _, n := range never {
			if p == n {
				s.t.Fatalf("member %d (priority 0) became primary\n%s", n, s.logs())
			}
		}
		if p == want {
			s.t.Logf("member %d primary after %v", want, d-time.Until(deadline))
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("member %d is not primary within %v (primary: %d)\n%s", want, d, p, s.logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// clients are direct connections to every member, made once for a
// polling loop (which would otherwise open one per member and round).
func (s *raftSet) clients() []*mongo.Client {
	s.t.Helper()
	out := make([]*mongo.Client, len(s.members))
	for i := range out {
		out[i] = s.direct(i)
	}
	return out
}

// primaryOf returns the running member that says it is primary (-1:
// none), asked through clients.
func (s *raftSet) primaryOf(clients []*mongo.Client) int {
	for i, m := range s.members {
		if m == nil || m.Exited() {
			continue
		}
		if h, err := s.hello(clients[i]); err == nil && h["isWritablePrimary"] == true {
			return i
		}
	}
	return -1
}

// prioColl is the collection TestRaftPriorities writes to, with
// w: "majority", through the replica-set URI.
func prioColl(s *raftSet) *mongo.Collection {
	return s.client().Database("test").Collection("prio", options.Collection().SetWriteConcern(writeconcern.Majority()))
}

// TestRaftPriorities: members of priorities 1, 0 and 2. Member 0
// initiates the set and is its first primary; member 2, of the highest
// priority, takes the primary over once it caught up. Killed, member 0
// (priority 1) succeeds it, never member 1 (priority 0); replSetStepDown
// on member 0 then finds no electable secondary (ExceededTimeLimit 262).
// Restarted, member 2 catches up and takes the primary over again; a
// reconfig giving member 1 priority 3 hands it the primary.
func TestRaftPriorities(t *testing.T) {
	fields := []bson.D{
		{{Key: "priority", Value: 1}},
		{{Key: "priority", Value: 0}},
		{{Key: "priority", Value: 2}},
	}
	s := startRaftSetMembers(t, fields)
	cl := s.clients()
	s.waitPrimaryIs(cl, 2, 30*time.Second, 1)
	majorityWrite(t, s, prioColl(s), "on-2")

	// The configuration says so.
	var cfg struct {
		Config struct {
			Members []struct {
				Priority float64 `bson:"priority"`
			} `bson:"members"`
		} `bson:"config"`
	}
	if err := s.direct(1).Database("admin").RunCommand(ctx(t), bson.D{{Key: "replSetGetConfig", Value: 1}}).Decode(&cfg); err != nil {
		t.Fatal(err)
	}
	if m := cfg.Config.Members; len(m) != 3 || m[0].Priority != 1 || m[1].Priority != 0 || m[2].Priority != 2 {
		t.Fatalf("replSetGetConfig members: %+v", m)
	}

	// Member 2 killed: member 0 succeeds it, member 1 never does.
	s.members[2].Kill()
	s.waitPrimaryIs(cl, 0, 30*time.Second, 1)
	majorityWrite(t, s, prioColl(s), "on-0")
	// Member 1 is the only other member up, and it cannot be primary.
	err := s.direct(0).Database("admin").RunCommand(ctx(t), bson.D{{Key: "replSetStepDown", Value: 5}, {Key: "secondaryCatchUpPeriodSecs", Value: 2}}).Err()
	cmdErr(t, err, 262)
	// Nor does member 1 run when member 0's leadership times out:
	// several election timeouts later member 0 is primary still.
	for i := 0; i < 40; i++ {
		if p := s.primaryOf(cl); p == 1 {
			t.Fatalf("member 1 (priority 0) became primary\n%s", s.logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.waitPrimaryIs(cl, 0, 10*time.Second, 1)

	// Member 2 restarts, catches up and takes the primary over.
	s.start(2)
	s.waitPrimaryIs(cl, 2, 30*time.Second, 1)
	majorityWrite(t, s, prioColl(s), "on-2-again")
	s.waitDoc(s.direct(1), "prio", bson.D{{Key: "_id", Value: "on-2-again"}})

	// A reconfig raises member 1's priority above member 2's.
	fields[1] = bson.D{{Key: "priority", Value: 3}}
	var cur struct {
		Config struct {
			Version int `bson:"version"`
		} `bson:"config"`
	}
	if err := s.direct(2).Database("admin").RunCommand(ctx(t), bson.D{{Key: "replSetGetConfig", Value: 1}}).Decode(&cur); err != nil {
		t.Fatal(err)
	}
	if err := s.direct(2).Database("admin").RunCommand(ctx(t), bson.D{{Key: "replSetReconfig", Value: s.config(fields, cur.Config.Version+1)}}).Err(); err != nil {
		t.Fatalf("replSetReconfig: %v\n%s", err, s.logs())
	}
	s.waitPrimaryIs(cl, 1, 30*time.Second)
	majorityWrite(t, s, prioColl(s), fmt.Sprint("on-1-", time.Now().UnixNano()))
}
