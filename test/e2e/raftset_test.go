package e2e

// A replica set of three cairnd processes on loopback ports, replicated
// on Raft (internal/raftrepl), driven through mongodb://h1,h2,h3/?replicaSet=rs0.

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
	"github.com/cairndb/cairn/internal/testutil/netproxy"
)

// raftSet is a running set.
type raftSet struct {
	t       *testing.T
	name    string
	ports   []int
	dirs    []string
	members []*cairndtest.Server
	extra   []string
	// args, when set, are member i's own arguments after extra.
	args [][]string
	// proxies, when set, stand in front of the members: member i is
	// known by (and reached at) proxies[i]'s address (--replHost).
	proxies []*netproxy.Proxy
	// tls, when set, is the test's clients' TLS configuration (members
	// started with --tlsMode requireTLS).
	tls *tls.Config
	// polls are the direct clients the polling helpers (primary,
	// waitOtherPrimary) reuse, by host: a new client per poll left
	// hundreds to disconnect at the test's end.
	pollMu sync.Mutex
	polls  map[string]*mongo.Client
	// made are every client direct and client made, disconnected
	// together at the test's end (one by one, those of a member already
	// stopped each waited out disconnectSoon's 2 s).
	made []*mongo.Client
}

// track registers c for the disconnect at the test's end; the first
// registers the cleanup, which so runs before the members stop.
func (s *raftSet) track(c *mongo.Client) {
	s.pollMu.Lock()
	defer s.pollMu.Unlock()
	if s.made == nil {
		s.t.Cleanup(func() {
			s.pollMu.Lock()
			cs := s.made
			s.pollMu.Unlock()
			var wg sync.WaitGroup
			for _, c := range cs {
				wg.Add(1)
				go func() { defer wg.Done(); disconnectSoon(c) }()
			}
			wg.Wait()
		})
	}
	s.made = append(s.made, c)
}

// poller is a direct client of member i for the polling helpers, made
// once per host (the driver reconnects it when the member restarts).
func (s *raftSet) poller(i int) *mongo.Client {
	h := s.host(i)
	s.pollMu.Lock()
	c, ok := s.polls[h]
	s.pollMu.Unlock()
	if ok {
		return c
	}
	// direct registers the client with track, which takes pollMu: the
	// client is made outside it.
	c = s.direct(i)
	s.pollMu.Lock()
	defer s.pollMu.Unlock()
	if old, ok := s.polls[h]; ok {
		return old // made meanwhile by another poller; c is still tracked
	}
	if s.polls == nil {
		s.polls = map[string]*mongo.Client{}
	}
	s.polls[h] = c
	return c
}

// host is member i's address in the set (its proxy's, when proxied).
func (s *raftSet) host(i int) string {
	if s.proxies != nil {
		return s.proxies[i].Addr()
	}
	return fmt.Sprintf("127.0.0.1:%d", s.ports[i])
}

// uri is the replica-set URI of the members.
func (s *raftSet) uri() string {
	hosts := make([]string, len(s.ports))
	for i := range s.ports {
		hosts[i] = s.host(i)
	}
	return "mongodb://" + strings.Join(hosts, ",") + "/?replicaSet=" + s.name
}

// start (re)starts member i on its port and data directory.
func (s *raftSet) start(i int) {
	s.t.Helper()
	args := append([]string{"--replSet", s.name}, s.extra...)
	if i < len(s.args) {
		args = append(args, s.args[i]...)
	}
	if s.proxies != nil {
		args = append(args, "--replHost", s.host(i))
	}
	srv, err := cairndtest.StartDirPort(s.dirs[i], s.ports[i], args...)
	if err != nil {
		s.t.Fatal(err)
	}
	s.members[i] = srv
}

// startRaftSet starts n members and initiates them with settings (nil:
// the defaults); it returns once a primary and n-1 secondaries are seen.
func startRaftSet(t *testing.T, n int, settings bson.D) *raftSet {
	return startRaftSetWith(t, n, settings, 0)
}

// startRaftSetWith starts a set as startRaftSet does; seed != 0 puts a
// netproxy in front of each member (seeded with seed+i).
func startRaftSetWith(t *testing.T, n int, settings bson.D, seed int64) *raftSet {
	t.Helper()
	return startRaftSetArgs(t, n, settings, seed)
}

// startRaftSetArgs starts a set as startRaftSetWith does, each member
// with the extra arguments extra.
func startRaftSetArgs(t *testing.T, n int, settings bson.D, seed int64, extra ...string) *raftSet {
	t.Helper()
	s := newRaftSetSeeded(t, n, seed, extra...)
	s.startAll()
	members := bson.A{}
	for i := 0; i < n; i++ {
		members = append(members, bson.D{{Key: "_id", Value: i}, {Key: "host", Value: s.host(i)}})
	}
	cfg := bson.D{{Key: "_id", Value: s.name}, {Key: "members", Value: members}}
	if settings != nil {
		cfg = append(cfg, bson.E{Key: "settings", Value: settings})
	}
	c := s.direct(0)
	if err := c.Database("admin").RunCommand(ctx(t), bson.D{{Key: "replSetInitiate", Value: cfg}}).Err(); err != nil {
		t.Fatalf("replSetInitiate: %v\n%s", err, s.members[0].Logs())
	}
	s.waitHealthy(n)
	return s
}

// newRaftSetSeeded prepares a set of n members started with the
// arguments extra (their ports and data directories; startAll starts
// them); seed != 0 puts a netproxy in front of each member (seeded with
// seed+i).
func newRaftSetSeeded(t *testing.T, n int, seed int64, extra ...string) *raftSet {
	t.Helper()
	s := &raftSet{t: t, name: "rs0", members: make([]*cairndtest.Server, n), extra: extra}
	for i := 0; i < n; i++ {
		p, err := cairndtest.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		s.ports = append(s.ports, p)
		s.dirs = append(s.dirs, t.TempDir())
		if seed != 0 {
			px, err := netproxy.Listen(fmt.Sprintf("127.0.0.1:%d", p), seed+int64(i))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(px.Close)
			s.proxies = append(s.proxies, px)
		}
	}
	return s
}

// startAll starts every member and stops, at the test's end, those still
// running.
func (s *raftSet) startAll() {
	t := s.t
	t.Helper()
	n := len(s.members)
	for i := 0; i < n; i++ {
		s.start(i)
	}
	// The members stop at once, not one after the other: each takes
	// about a second (its peers' connections close), which adds up over
	// the tests' sets.
	t.Cleanup(func() {
		var wg sync.WaitGroup
		for i, m := range s.members {
			if m != nil && !m.Exited() {
				wg.Add(1)
				go func() {
					defer wg.Done()
					m.Resume()
					if err := m.Stop(); err != nil {
						t.Errorf("stopping member %d: %v\n%s", i, err, m.Logs())
					}
				}()
			}
		}
		wg.Wait()
	})
}

// direct is a direct connection to member i.
func (s *raftSet) direct(i int) *mongo.Client {
	s.t.Helper()
	o := options.Client().ApplyURI(fmt.Sprintf("mongodb://%s/?directConnection=true", s.host(i))).SetTimeout(10 * time.Second)
	if s.tls != nil {
		o.SetTLSConfig(s.tls.Clone())
	}
	c, err := mongo.Connect(o)
	if err != nil {
		s.t.Fatal(err)
	}
	s.track(c)
	return c
}

// disconnectSoon disconnects c, waiting at most two seconds: a client of
// a killed member would otherwise wait out its monitor's dial (30 s).
func disconnectSoon(c *mongo.Client) {
	cx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = c.Disconnect(cx)
}

// client connects through the replica-set URI.
func (s *raftSet) client(opts ...*options.ClientOptions) *mongo.Client {
	s.t.Helper()
	o := options.Client().ApplyURI(s.uri()).SetTimeout(30 * time.Second)
	if s.tls != nil {
		o.SetTLSConfig(s.tls.Clone())
	}
	c, err := mongo.Connect(options.MergeClientOptions(append([]*options.ClientOptions{o}, opts...)...))
	if err != nil {
		s.t.Fatal(err)
	}
	s.track(c)
	return c
}

// hello runs hello on member i.
func (s *raftSet) hello(c *mongo.Client) (bson.M, error) {
	var h bson.M
	cx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := c.Database("admin").RunCommand(cx, bson.D{{Key: "hello", Value: 1}}).Decode(&h)
	return h, err
}

// primary returns the index of the member that says it is primary (-1:
// none), among the running ones.
func (s *raftSet) primary() int {
	for i, m := range s.members {
		if m == nil || m.Exited() {
			continue
		}
		h, err := s.hello(s.poller(i))
		if err == nil && h["isWritablePrimary"] == true {
			return i
		}
	}
	return -1
}

// waitHealthy waits (up to 30 s) until one member is primary and the
// other want-1 members are secondaries that see it.
func (s *raftSet) waitHealthy(want int) int {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	clients := make([]*mongo.Client, len(s.members))
	for {
		primaries, secondaries, p := 0, 0, -1
		for i, m := range s.members {
			if m == nil || m.Exited() {
				continue
			}
			if clients[i] == nil {
				clients[i] = s.direct(i)
			}
			h, err := s.hello(clients[i])
			if err != nil {
				continue
			}
			if h["isWritablePrimary"] == true {
				primaries++
				p = i
			} else if h["secondary"] == true && h["primary"] != nil && h["primary"] != "" {
				secondaries++
			}
		}
		if primaries == 1 && secondaries == want-1 {
			return p
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("no healthy set within 30s (%d primaries, %d secondaries)\n%s", primaries, secondaries, s.logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// logs is the end of every member's log (failure reports).
func (s *raftSet) logs() string {
	var logs strings.Builder
	for i, m := range s.members {
		if m != nil {
			var keep []string
			for _, l := range strings.Split(m.Logs(), "\n") {
				if !strings.Contains(l, `"c":"NETWORK"`) {
					keep = append(keep, l)
				}
			}
			fmt.Fprintf(&logs, "--- member %d ---\n%s\n", i, tail(strings.Join(keep, "\n"), 6000))
		}
	}
	return logs.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// waitDoc waits (up to 20 s) until member i's secondary read finds filter
// in db.coll.
func (s *raftSet) waitDoc(c *mongo.Client, coll string, filter bson.D) bson.M {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var got bson.M
		err := c.Database("test", options.Database().SetReadPreference(readpref.SecondaryPreferred())).
			Collection(coll).FindOne(ctx(s.t), filter).Decode(&got)
		if err == nil {
			return got
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("document %v not replicated within 20s: %v", filter, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRaftSetReplicates: a three-member set elects one primary; a
// majority write through the replica-set URI reaches both secondaries,
// which serve reads with secondaryOk and refuse them without it
// (NotPrimaryNoSecondaryOk) and refuse writes (NotWritablePrimary); DDL
// (createIndexes, drop) replicates; replSetGetStatus reports every member.
func TestRaftSetReplicates(t *testing.T) {
	s := startRaftSet(t, 3, nil)
	c := s.client()
	coll := c.Database("test").Collection("r", options.Collection().SetWriteConcern(writeconcern.Majority()))
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: "a"}}); err != nil {
		t.Fatalf("%v\n%s", err, s.logs())
	}
	if _, err := coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: "b"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "x", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertMany(ctx(t), []any{bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "_id", Value: 3}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.DeleteOne(ctx(t), bson.D{{Key: "_id", Value: 3}}); err != nil {
		t.Fatal(err)
	}
	p := s.primary()
	for i := range s.members {
		if i == p {
			continue
		}
		d := s.direct(i)
		got := s.waitDoc(d, "r", bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: "b"}})
		if got["x"] != "b" {
			t.Fatalf("member %d: %v", i, got)
		}
		s.waitDoc(d, "r", bson.D{{Key: "_id", Value: 2}})
		sec := d.Database("test", options.Database().SetReadPreference(readpref.Secondary())).Collection("r")
		deadline := time.Now().Add(10 * time.Second)
		for {
			n, err := sec.CountDocuments(ctx(t), bson.D{})
			if err != nil {
				t.Fatal(err)
			}
			if n == 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("member %d holds %d documents, want 2 (the delete replicated)", i, n)
			}
			time.Sleep(20 * time.Millisecond)
		}
		// The index was built on the secondary.
		cur, err := sec.Indexes().List(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		var idx []bson.M
		if err := cur.All(ctx(t), &idx); err != nil {
			t.Fatal(err)
		}
		if len(idx) != 2 {
			t.Fatalf("member %d has indexes %v, want _id_ and x_1", i, idx)
		}
		// Without secondaryOk: 13435; writes: 10107.
		// (The driver reads from a directly connected member with
		// primaryPreferred: the raw command carries no read preference.)
		raw := rawDial(t, s.members[i])
		if code := codeOf(raw.command(marshal(t, bson.D{{Key: "find", Value: "r"}, {Key: "$db", Value: "test"}}))); code != 13435 {
			t.Fatalf("member %d: find without secondaryOk answered code %d, want 13435", i, code)
		}
		if code := codeOf(raw.command(marshal(t, bson.D{{Key: "insert", Value: "r"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 9}}}}, {Key: "$db", Value: "test"}}))); code != 10107 {
			t.Fatalf("member %d: insert on a secondary answered code %d, want 10107", i, code)
		}
		var h bson.M
		if err := d.Database("admin").RunCommand(ctx(t), bson.D{{Key: "hello", Value: 1}}).Decode(&h); err != nil {
			t.Fatal(err)
		}
		if h["primary"] != s.host(p) || h["secondary"] != true || h["me"] != s.host(i) || len(h["hosts"].(bson.A)) != 3 {
			t.Fatalf("member %d hello: %v", i, h)
		}
	}
	var st struct {
		Members []struct {
			Name     string  `bson:"name"`
			StateStr string  `bson:"stateStr"`
			Health   float64 `bson:"health"`
			Optime   struct {
				TS bson.Timestamp `bson:"ts"`
			} `bson:"optime"`
			SyncSourceHost string `bson:"syncSourceHost"`
		} `bson:"members"`
	}
	if err := s.direct(p).Database("admin").RunCommand(ctx(t), bson.D{{Key: "replSetGetStatus", Value: 1}}).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if len(st.Members) != 3 {
		t.Fatalf("replSetGetStatus members: %+v", st.Members)
	}
	for i, m := range st.Members {
		want := "SECONDARY"
		if i == p {
			want = "PRIMARY"
		}
		if m.StateStr != want || m.Health != 1 || m.Optime.TS.T == 0 {
			t.Fatalf("member %d status %+v, want %s, healthy, with an optime", i, m, want)
		}
		if i != p && m.SyncSourceHost != s.host(p) {
			t.Fatalf("member %d syncs from %q, want the primary %s", i, m.SyncSourceHost, s.host(p))
		}
	}
}

// TestRaftSetFailover: a majority write survives the kill -9 of the
// primary; the two others elect a new primary, and a majority write
// through the replica-set URI succeeds again (the time from the kill to
// that write is logged).
func TestRaftSetFailover(t *testing.T) {
	s := startRaftSet(t, 3, nil)
	c := s.client()
	coll := c.Database("test").Collection("f", options.Collection().SetWriteConcern(writeconcern.Majority()))
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: "before"}}); err != nil {
		t.Fatalf("%v\n%s", err, s.logs())
	}
	old := s.primary()
	killed := time.Now()
	s.members[old].Kill()
	deadline := time.Now().Add(30 * time.Second)
	for {
		cx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := coll.InsertOne(cx, bson.D{{Key: "_id", Value: fmt.Sprint("after-", time.Now().UnixNano())}})
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no majority write within 30s of the kill: %v\n%s", err, s.logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("failover: primary killed -> first majority write: %v", time.Since(killed))
	p := s.primary()
	if p < 0 || p == old {
		t.Fatalf("primary after the kill: %d (old %d)", p, old)
	}
	var got bson.M
	if err := s.direct(p).Database("test").Collection("f").FindOne(ctx(t), bson.D{{Key: "_id", Value: "before"}}).Decode(&got); err != nil {
		t.Fatalf("the majority write before the kill is lost on the new primary: %v", err)
	}
	// The killed member restarts and catches up as a secondary.
	s.start(old)
	s.waitDoc(s.direct(old), "f", bson.D{{Key: "_id", Value: "before"}})
}
