package e2e

// replSetStepDown, replSetFreeze and reconfig add/remove on a set of
// three members, through the Go driver and its replica-set URI.

import (
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// majorityWrite inserts _id through the replica-set client, retrying
// while the set elects.
func majorityWrite(t *testing.T, s *raftSet, coll *mongo.Collection, id string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: id}})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("majority write %s: %v\n%s", id, err, s.logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRaftSetStepDownFreezeReconfig: replSetStepDown with
// secondaryCatchUpPeriodSecs hands the primary to a secondary and keeps
// the old one from being re-elected; a member frozen with replSetFreeze
// is not the one a step-down elects; replSetReconfig adds a fourth member
// (it becomes SECONDARY with the data) and removes it; through all of it
// the driver follows the new primary and majority writes succeed.
func TestRaftSetStepDownFreezeReconfig(t *testing.T) {
	began := time.Now()
	phase := func(name string) { t.Logf("%s: %v", name, time.Since(began).Round(time.Millisecond)) }
	s := startRaftSet(t, 3, nil)
	phase("set started")
	c := s.client()
	coll := c.Database("test").Collection("sd", options.Collection().SetWriteConcern(writeconcern.Majority()))
	majorityWrite(t, s, coll, "before")

	// rs.stepDown(3, 2): a secondary takes over, the old primary is
	// SECONDARY and sees it.
	old := s.primary()
	stepped := time.Now()
	if err := s.direct(old).Database("admin").RunCommand(ctx(t), bson.D{{Key: "replSetStepDown", Value: 3}, {Key: "secondaryCatchUpPeriodSecs", Value: 2}}).Err(); err != nil {
		t.Fatalf("replSetStepDown: %v\n%s", err, s.logs())
	}
	next := s.waitOtherPrimary(old)
	majorityWrite(t, s, coll, "after-stepdown")
	if p := s.primary(); p != next {
		t.Fatalf("primary %d after the write, want %d", p, next)
	}
	if h, err := s.hello(s.direct(old)); err != nil || h["secondary"] != true || h["primary"] != s.host(next) {
		t.Fatalf("the stepped-down member's hello: %v (%v), want SECONDARY seeing %s", h, err, s.host(next))
	}
	// Not primary any more: a step-down there is NotWritablePrimary.
	err := s.direct(old).Database("admin").RunCommand(ctx(t), bson.D{{Key: "replSetStepDown", Value: 10}}).Err()
	var se mongo.ServerError
	if !errors.As(err, &se) || !se.HasErrorCode(10107) {
		t.Fatalf("replSetStepDown on a secondary: %v, want NotWritablePrimary (10107)", err)
	}

	phase("stepped down")
	// replSetFreeze on the third member, then (the old primary's
	// step-down period over) a step-down of the new primary: the old
	// primary, the one member free to run, takes over.
	third := 3 - old - next
	if err := s.direct(third).Database("admin").RunCommand(ctx(t), bson.D{{Key: "replSetFreeze", Value: 120}}).Err(); err != nil {
		t.Fatalf("replSetFreeze: %v", err)
	}
	time.Sleep(time.Until(stepped.Add(4 * time.Second)))
	if err := s.direct(next).Database("admin").RunCommand(ctx(t), bson.D{{Key: "replSetStepDown", Value: 6}, {Key: "secondaryCatchUpPeriodSecs", Value: 5}}).Err(); err != nil {
		t.Fatalf("replSetStepDown of %d with %d frozen: %v\n%s", next, third, err, s.logs())
	}
	if p := s.waitOtherPrimary(next); p != old {
		t.Fatalf("member %d elected, want %d (%d is frozen)", p, old, third)
	}
	majorityWrite(t, s, coll, "frozen")
	// replSetFreeze on the primary is NotSecondary; {replSetFreeze: 0}
	// unfreezes.
	p := s.primary()
	if err := s.direct(p).Database("admin").RunCommand(ctx(t), bson.D{{Key: "replSetFreeze", Value: 10}}).Err(); !errors.As(err, &se) || !se.HasErrorCode(10107) && !se.HasErrorCode(95) {
		t.Fatalf("replSetFreeze on the primary: %v, want NotSecondary (95)", err)
	}
	var unfreeze bson.M
	if err := s.direct(third).Database("admin").RunCommand(ctx(t), bson.D{{Key: "replSetFreeze", Value: 0}}).Decode(&unfreeze); err != nil || unfreeze["info"] != "unfreezing" {
		t.Fatalf("replSetFreeze 0: %v %v", unfreeze, err)
	}

	phase("frozen member passed over")
	// rs.add: a fourth member joins and syncs; rs.remove takes it out.
	port, err := cairndtest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	s.ports = append(s.ports, port)
	s.dirs = append(s.dirs, t.TempDir())
	s.members = append(s.members, nil)
	s.start(3)
	admin := s.direct(p).Database("admin")
	version := configVersion(t, admin)
	members := bson.A{}
	for i := 0; i < 4; i++ {
		members = append(members, bson.D{{Key: "_id", Value: i}, {Key: "host", Value: s.host(i)}})
	}
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "replSetReconfig", Value: bson.D{{Key: "_id", Value: s.name}, {Key: "version", Value: version + 1}, {Key: "members", Value: members}}}}).Err(); err != nil {
		t.Fatalf("replSetReconfig adding member 3: %v\n%s", err, s.logs())
	}
	waitSecondaryState(t, s, 3, 60*time.Second)
	phase("fourth member SECONDARY")
	s.waitDoc(s.direct(3), "sd", bson.D{{Key: "_id", Value: "frozen"}})
	majorityWrite(t, s, coll, "four")
	s.waitDoc(s.direct(3), "sd", bson.D{{Key: "_id", Value: "four"}})
	if h, err := s.hello(c); err != nil || len(h["hosts"].(bson.A)) != 4 {
		t.Fatalf("hello through the driver after rs.add: %v %v", h, err)
	}
	p = s.primary()
	admin = s.direct(p).Database("admin")
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "replSetReconfig", Value: bson.D{{Key: "_id", Value: s.name}, {Key: "version", Value: version + 2}, {Key: "members", Value: members[:3]}}}}).Err(); err != nil {
		t.Fatalf("replSetReconfig removing member 3: %v\n%s", err, s.logs())
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		h, err := s.hello(s.poller(p))
		if err == nil && len(h["hosts"].(bson.A)) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("hello after rs.remove: %v %v", h, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	phase("fourth member removed")
	if err := s.members[3].Stop(); err != nil {
		t.Fatalf("stopping the removed member: %v", err)
	}
	phase("removed member stopped")
	s.members = s.members[:3]
	s.ports, s.dirs = s.ports[:3], s.dirs[:3]
	majorityWrite(t, s, coll, "three-again")
	phase("written")
	if n := count(t, coll, bson.D{}); n != 5 {
		t.Fatalf("%d documents, want 5", n)
	}
}
