package e2e

// Replication figures of a three-member set: serverStatus' repl section
// (hello's fields and Cairn's raft section) and the Prometheus metrics
// (--metricsAddr) report the Raft term, the leader changes, the commit
// latency and each member's replication lag.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// replStatus is serverStatus' repl section.
type replStatus struct {
	Repl struct {
		SetName           string `bson:"setName"`
		IsWritablePrimary bool   `bson:"isWritablePrimary"`
		Secondary         bool   `bson:"secondary"`
		Me                string `bson:"me"`
		Raft              *struct {
			Term          int64 `bson:"term"`
			LeaderChanges int64 `bson:"leaderChanges"`
			CommitLatency struct {
				Count       int64 `bson:"count"`
				TotalMicros int64 `bson:"totalMicros"`
			} `bson:"commitLatency"`
			Members []struct {
				Host       string `bson:"host"`
				Self       bool   `bson:"self"`
				LagEntries int64  `bson:"lagEntries"`
				LagSecs    *int64 `bson:"lagSecs"`
			} `bson:"members"`
		} `bson:"raft"`
	} `bson:"repl"`
}

func serverRepl(t *testing.T, c *mongo.Client) replStatus {
	t.Helper()
	var st replStatus
	if err := c.Database("admin").RunCommand(ctx(t), bson.D{{Key: "serverStatus", Value: 1}}).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.Repl.Raft == nil {
		t.Fatalf("serverStatus has no repl.raft section: %+v", st.Repl)
	}
	return st
}

// memberLag is the lag (entries, seconds; -1: not reported) the status
// reports for host.
func (st replStatus) memberLag(host string) (int64, int64, bool) {
	for _, m := range st.Repl.Raft.Members {
		if m.Host == host {
			secs := int64(-1)
			if m.LagSecs != nil {
				secs = *m.LagSecs
			}
			return m.LagEntries, secs, true
		}
	}
	return 0, 0, false
}

// TestRaftMetrics: member 0 (priority 2) stays primary. After majority
// writes its serverStatus reports the Raft term of replSetGetStatus, the
// writes' commit latencies and three members not lagging, and its metrics
// the same; a secondary reports only itself, and its replSetGetStatus
// shows the other secondary healthy (heartbeats). A paused secondary lags (in
// entries, and in seconds once writes went on for more than a second) on
// the primary's figures and catches up once resumed. The primary killed,
// the new primary's leader changes and term grow.
func TestRaftMetrics(t *testing.T) {
	s := newRaftSet(t, 3)
	ports := make([]int, 3)
	for i := range ports {
		p, err := cairndtest.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = p
		s.args = append(s.args, []string{"--metricsAddr", fmt.Sprintf("127.0.0.1:%d", p)})
	}
	s.launch([]bson.D{{{Key: "priority", Value: 2}}, nil, nil})
	cl := s.clients()
	s.waitPrimaryIs(cl, 0, 30*time.Second)

	coll := s.client().Database("test").Collection("m", options.Collection().SetWriteConcern(writeconcern.Majority()))
	const writes = 20
	for i := 0; i < writes; i++ {
		if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatalf("%v\n%s", err, s.logs())
		}
	}
	var rs struct {
		Term int64 `bson:"term"`
	}
	if err := cl[0].Database("admin").RunCommand(ctx(t), bson.D{{Key: "replSetGetStatus", Value: 1}}).Decode(&rs); err != nil {
		t.Fatal(err)
	}
	st := s.waitLag(cl[0], func(st replStatus) bool {
		for i := range s.members {
			if e, secs, ok := st.memberLag(s.host(i)); !ok || e != 0 || secs != 0 {
				return false
			}
		}
		return true
	}, "every member caught up")
	r := st.Repl.Raft
	if !st.Repl.IsWritablePrimary || st.Repl.SetName != "rs0" || st.Repl.Me != s.host(0) {
		t.Fatalf("serverStatus.repl: %+v", st.Repl)
	}
	if r.Term != rs.Term || r.LeaderChanges < 1 || r.CommitLatency.Count < writes || r.CommitLatency.TotalMicros <= 0 || len(r.Members) != 3 {
		t.Fatalf("serverStatus.repl.raft: %+v (replSetGetStatus term %d, %d majority writes)", r, rs.Term, writes)
	}
	body := scrapeMetrics(t, ports[0])
	if v := seriesValue(t, body, "cairn_repl_raft_term"); int64(v) != rs.Term {
		t.Errorf("cairn_repl_raft_term %v, want %d", v, rs.Term)
	}
	if v := seriesValue(t, body, "cairn_repl_primary"); v != 1 {
		t.Errorf("cairn_repl_primary %v on the primary", v)
	}
	if v := seriesValue(t, body, "cairn_repl_commit_latency_seconds_count"); v < writes {
		t.Errorf("cairn_repl_commit_latency_seconds_count %v, want at least %d", v, writes)
	}
	if v := seriesValue(t, body, `cairn_repl_commit_latency_seconds_bucket{le="+Inf"}`); v < writes {
		t.Errorf("commit latency +Inf bucket %v", v)
	}
	for i := range s.members {
		if v := seriesValue(t, body, fmt.Sprintf(`cairn_repl_member_lag_entries{member=%q}`, s.host(i))); v != 0 {
			t.Errorf("member %d lags %v entries on a caught-up set", i, v)
		}
	}
	// A secondary reports itself only.
	sec := serverRepl(t, cl[1])
	if !sec.Repl.Secondary || len(sec.Repl.Raft.Members) != 1 || !sec.Repl.Raft.Members[0].Self || sec.Repl.Raft.LeaderChanges < 1 {
		t.Fatalf("secondary's serverStatus.repl: %+v raft %+v", sec.Repl, sec.Repl.Raft)
	}
	if v := seriesValue(t, scrapeMetrics(t, ports[1]), "cairn_repl_primary"); v != 0 {
		t.Errorf("cairn_repl_primary %v on a secondary", v)
	}
	// A secondary knows the other secondary's health, though Raft's
	// messages go between the leader and the followers only (the members'
	// heartbeats).
	deadline := time.Now().Add(10 * time.Second)
	for {
		var rst struct {
			Members []struct {
				Name     string  `bson:"name"`
				StateStr string  `bson:"stateStr"`
				Health   float64 `bson:"health"`
			} `bson:"members"`
		}
		if err := cl[1].Database("admin").RunCommand(ctx(t), bson.D{{Key: "replSetGetStatus", Value: 1}}).Decode(&rst); err != nil {
			t.Fatal(err)
		}
		if len(rst.Members) == 3 && rst.Members[2].Health == 1 && rst.Members[2].StateStr == "SECONDARY" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("member 1's replSetGetStatus of member 2: %+v", rst.Members)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Member 2 paused: it lags while writes go on for over a second.
	s.members[2].Pause()
	start := time.Now()
	for i := 0; time.Since(start) < 2500*time.Millisecond; i++ {
		if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: fmt.Sprint("paused-", i)}}); err != nil {
			t.Fatalf("%v\n%s", err, s.logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.waitLag(cl[0], func(st replStatus) bool {
		e, secs, _ := st.memberLag(s.host(2))
		return e > 0 && secs >= 1
	}, "member 2 lagging")
	if v := seriesValue(t, scrapeMetrics(t, ports[0]), fmt.Sprintf(`cairn_repl_member_lag_entries{member=%q}`, s.host(2))); v <= 0 {
		t.Errorf("cairn_repl_member_lag_entries of the paused member: %v", v)
	}
	s.members[2].Resume()
	s.waitLag(cl[0], func(st replStatus) bool {
		e, secs, _ := st.memberLag(s.host(2))
		return e == 0 && secs == 0
	}, "member 2 caught up")

	// The primary killed: a new one is elected, and sees its election.
	before := []replStatus{{}, serverRepl(t, cl[1]), serverRepl(t, cl[2])}
	s.members[0].Kill()
	deadline = time.Now().Add(30 * time.Second)
	for {
		p := s.primaryOf(cl)
		if p > 0 {
			after, was := serverRepl(t, cl[p]).Repl.Raft, before[p].Repl.Raft
			if after.Term <= was.Term || after.LeaderChanges <= was.LeaderChanges {
				t.Fatalf("member %d after the failover: term %d, leader changes %d (before %d, %d)", p, after.Term, after.LeaderChanges, was.Term, was.LeaderChanges)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new primary within 30s\n%s", s.logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitLag polls the member's serverStatus (up to 30 s) until ok holds.
func (s *raftSet) waitLag(c *mongo.Client, ok func(replStatus) bool, what string) replStatus {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		cx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var st replStatus
		err := c.Database("admin").RunCommand(cx, bson.D{{Key: "serverStatus", Value: 1}}).Decode(&st)
		cancel()
		if err == nil && st.Repl.Raft != nil && ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: not within 30s: %+v %v\n%s", what, st.Repl.Raft, err, s.logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRaftMajorityNoWrite: a command that takes a write concern and
// writes nothing (a drop of a missing collection) answers w: "majority"
// at once on an idle set, though its write transaction advanced the
// member's applied optime past every oplog entry (it waited for the next
// write before).
func TestRaftMajorityNoWrite(t *testing.T) {
	s := startRaftSet(t, 3, nil)
	db := s.client().Database("test", options.Database().SetWriteConcern(writeconcern.Majority()))
	for i := 0; i < 3; i++ {
		cx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := db.Collection(fmt.Sprint("missing", i)).Drop(cx)
		cancel()
		if err != nil {
			t.Fatalf("drop %d of a missing collection with w: majority: %v\n%s", i, err, s.logs())
		}
	}
}
