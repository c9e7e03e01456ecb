package e2e

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
	"github.com/cairndb/cairn/internal/wire"
)

// startRS starts cairnd as a member of rs0 (not initiated) and a direct
// client without retryable writes.
func startRS(t *testing.T) (*cairndtest.Server, *mongo.Client) {
	t.Helper()
	srv := cairndtest.Start(t, "--replSet", "rs0")
	return srv, dial(t, srv.URI+"&retryWrites=false")
}

func runCmd(t *testing.T, c *mongo.Client, cmd bson.D) (bson.Raw, error) {
	t.Helper()
	return c.Database("admin").RunCommand(ctx(t), cmd).Raw()
}

func mustCmd(t *testing.T, c *mongo.Client, cmd bson.D) bson.Raw {
	t.Helper()
	r, err := runCmd(t, c, cmd)
	if err != nil {
		t.Fatalf("%v: %v", cmd, err)
	}
	return r
}

// keys lists a document's field names in order.
func keys(t *testing.T, d bson.Raw) string {
	t.Helper()
	els, err := d.Elements()
	if err != nil {
		t.Fatal(err)
	}
	var ks []string
	for _, e := range els {
		ks = append(ks, e.Key())
	}
	return strings.Join(ks, " ")
}

func me(srv *cairndtest.Server) string { return fmt.Sprintf("127.0.0.1:%d", srv.Port) }

// TestReplSetInitiate: before initiation the member says it has no
// configuration and refuses writes; replSetInitiate validates a given
// configuration as mongod does for one member, builds one when none is
// given, and the member becomes PRIMARY with mongod's hello fields.
func TestReplSetInitiate(t *testing.T) {
	srv, c := startRS(t)
	h := mustCmd(t, c, bson.D{{Key: "hello", Value: 1}})
	if got, want := keys(t, h), "topologyVersion isWritablePrimary secondary info isreplicaset maxBsonObjectSize"; !strings.HasPrefix(got, want) {
		t.Fatalf("hello before initiation: fields %q, want prefix %q", got, want)
	}
	if h.Lookup("info").StringValue() != "Does not have a valid replica set config" || h.Lookup("isWritablePrimary").Boolean() {
		t.Fatalf("hello before initiation: %v", h)
	}
	_, err := runCmd(t, c, bson.D{{Key: "replSetGetStatus", Value: 1}})
	cmdErr(t, err, 94)
	_, err = c.Database("d").Collection("c").InsertOne(ctx(t), bson.D{{Key: "x", Value: 1}})
	cmdErr(t, err, 10107)
	// The state change error carries the topologyVersion the driver has
	// (so it does not mark the member unknown and wait for its monitor).
	raw := rawDial(t, srv)
	e := raw.command(marshal(t, bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{}}}, {Key: "$db", Value: "d"}}))
	if e.Lookup("code").Int32() != 10107 || e.Lookup("errmsg").StringValue() != "not primary" ||
		!bytes.Equal(e.Lookup("topologyVersion").Value, h.Lookup("topologyVersion").Value) {
		t.Fatalf("not primary: %v (hello's topologyVersion %v)", e, h.Lookup("topologyVersion"))
	}

	bad := []struct {
		name string
		cfg  bson.D
		code int32
	}{
		{"wrong name", bson.D{{Key: "_id", Value: "other"}, {Key: "members", Value: bson.A{bson.D{{Key: "_id", Value: 0}, {Key: "host", Value: me(srv)}}}}}, 93},
		{"not this node", bson.D{{Key: "_id", Value: "rs0"}, {Key: "members", Value: bson.A{bson.D{{Key: "_id", Value: 0}, {Key: "host", Value: "elsewhere:1"}}}}}, 74},
		{"three members with an arbiter", bson.D{{Key: "_id", Value: "rs0"}, {Key: "members", Value: bson.A{
			bson.D{{Key: "_id", Value: 0}, {Key: "host", Value: me(srv)}},
			bson.D{{Key: "_id", Value: 1}, {Key: "host", Value: "b:1"}},
			bson.D{{Key: "_id", Value: 2}, {Key: "host", Value: "c:1"}, {Key: "arbiterOnly", Value: true}}}}}, 93},
		{"no members", bson.D{{Key: "_id", Value: "rs0"}}, 93},
		{"unknown field", bson.D{{Key: "_id", Value: "rs0"}, {Key: "x", Value: 1}, {Key: "members", Value: bson.A{bson.D{{Key: "_id", Value: 0}, {Key: "host", Value: me(srv)}}}}}, 93},
	}
	for _, b := range bad {
		_, err := runCmd(t, c, bson.D{{Key: "replSetInitiate", Value: b.cfg}})
		if err == nil {
			t.Fatalf("%s: initiated", b.name)
		}
		cmdErr(t, err, b.code)
	}
	r := mustCmd(t, c, bson.D{{Key: "replSetInitiate", Value: bson.D{}}})
	if r.Lookup("me").StringValue() != me(srv) || !strings.HasPrefix(r.Lookup("info2").StringValue(), "no configuration specified") {
		t.Fatalf("replSetInitiate: %v", r)
	}
	_, err = runCmd(t, c, bson.D{{Key: "replSetInitiate", Value: 1}})
	cmdErr(t, err, 23)

	h = mustCmd(t, c, bson.D{{Key: "hello", Value: 1}})
	want := "topologyVersion hosts setName setVersion isWritablePrimary secondary primary me electionId lastWrite maxBsonObjectSize maxMessageSizeBytes maxWriteBatchSize localTime logicalSessionTimeoutMinutes connectionId minWireVersion maxWireVersion readOnly ok $clusterTime operationTime"
	if got := keys(t, h); got != want {
		t.Fatalf("hello as primary:\n got %s\nwant %s", got, want)
	}
	if h.Lookup("setName").StringValue() != "rs0" || !h.Lookup("isWritablePrimary").Boolean() || h.Lookup("primary").StringValue() != me(srv) ||
		h.Lookup("electionId").ObjectID().Hex() != "7fffffff0000000000000001" || h.Lookup("hosts", "0").StringValue() != me(srv) {
		t.Fatalf("hello as primary: %v", h)
	}
	if got := keys(t, h.Lookup("lastWrite").Document()); got != "opTime lastWriteDate majorityOpTime majorityWriteDate" {
		t.Fatalf("lastWrite fields %s", got)
	}
	ism := mustCmd(t, c, bson.D{{Key: "isMaster", Value: 1}})
	if !ism.Lookup("ismaster").Boolean() || ism.Lookup("setName").StringValue() != "rs0" {
		t.Fatalf("isMaster: %v", ism)
	}
	// The configuration is a document of local.system.replset.
	var cfg bson.M
	if err := c.Database("local").Collection("system.replset").FindOne(ctx(t), bson.D{}).Decode(&cfg); err != nil {
		t.Fatal(err)
	}
	if cfg["_id"] != "rs0" || cfg["version"] != int32(1) {
		t.Fatalf("local.system.replset: %v", cfg)
	}
	if _, err := c.Database("d").Collection("c").InsertOne(ctx(t), bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatalf("insert on the primary: %v", err)
	}
}

// TestReplSetGetStatusShape checks replSetGetStatus's fields in mongod's
// order and the member's.
func TestReplSetGetStatusShape(t *testing.T) {
	srv, c := startRS(t)
	mustCmd(t, c, bson.D{{Key: "replSetInitiate", Value: bson.D{{Key: "_id", Value: "rs0"},
		{Key: "members", Value: bson.A{bson.D{{Key: "_id", Value: 5}, {Key: "host", Value: me(srv)}}}}}}})
	st := mustCmd(t, c, bson.D{{Key: "replSetGetStatus", Value: 1}})
	want := "set date myState term syncSourceHost syncSourceId heartbeatIntervalMillis majorityVoteCount writeMajorityCount votingMembersCount writableVotingMembersCount optimes lastStableRecoveryTimestamp electionCandidateMetrics members ok $clusterTime operationTime"
	if got := keys(t, st); got != want {
		t.Fatalf("replSetGetStatus:\n got %s\nwant %s", got, want)
	}
	if st.Lookup("myState").Int32() != 1 || st.Lookup("term").Int64() != 1 || st.Lookup("set").StringValue() != "rs0" {
		t.Fatalf("replSetGetStatus: %v", st)
	}
	m := st.Lookup("members", "0").Document()
	want = "_id name health state stateStr uptime optime optimeDate lastAppliedWallTime lastDurableWallTime syncSourceHost syncSourceId infoMessage electionTime electionDate configVersion configTerm self lastHeartbeatMessage"
	if got := keys(t, m); got != want {
		t.Fatalf("member:\n got %s\nwant %s", got, want)
	}
	if m.Lookup("_id").Int32() != 5 || m.Lookup("stateStr").StringValue() != "PRIMARY" || !m.Lookup("self").Boolean() || m.Lookup("name").StringValue() != me(srv) {
		t.Fatalf("member: %v", m)
	}
	if got := keys(t, st.Lookup("optimes").Document()); got != "lastCommittedOpTime lastCommittedWallTime readConcernMajorityOpTime appliedOpTime durableOpTime lastAppliedWallTime lastDurableWallTime" {
		t.Fatalf("optimes: %s", got)
	}
	gc := mustCmd(t, c, bson.D{{Key: "replSetGetConfig", Value: 1}})
	if gc.Lookup("config", "_id").StringValue() != "rs0" || gc.Lookup("config", "members", "0", "_id").Int32() != 5 ||
		gc.Lookup("config", "term").Int32() != 1 {
		t.Fatalf("replSetGetConfig: %v", gc)
	}
}

// TestReplSetRestartKeepsConfig: a restarted member finds its
// configuration in local.system.replset and is PRIMARY in a new term.
func TestReplSetRestartKeepsConfig(t *testing.T) {
	dir := t.TempDir()
	srv, err := cairndtest.StartDir(dir, "--replSet", "rs0")
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv.URI+"&retryWrites=false")
	mustCmd(t, c, bson.D{{Key: "replSetInitiate", Value: 1}})
	mustCmd(t, c, bson.D{{Key: "replSetReconfig", Value: bson.D{{Key: "_id", Value: "rs0"}, {Key: "version", Value: 2},
		{Key: "members", Value: bson.A{bson.D{{Key: "_id", Value: 0}, {Key: "host", Value: me(srv)}}}}}}})
	c.Disconnect(ctx(t))
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	// Another set's name is refused at start.
	if s, err := cairndtest.StartDir(dir, "--replSet", "other"); err == nil {
		s.Stop()
		t.Fatal("started as a member of another set on rs0's data")
	}
	// The restarted member listens on another port: the one-member set
	// moves to it (version 3) and is PRIMARY in a new term.
	srv2, err := cairndtest.StartDir(dir, "--replSet", "rs0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv2.Stop()
	c2 := dial(t, srv2.URI+"&retryWrites=false")
	h := mustCmd(t, c2, bson.D{{Key: "hello", Value: 1}})
	if !h.Lookup("isWritablePrimary").Boolean() || h.Lookup("setVersion").Int32() != 3 || h.Lookup("me").StringValue() != me(srv2) ||
		h.Lookup("electionId").ObjectID().Hex() != "7fffffff0000000000000002" {
		t.Fatalf("after restart: %v", h)
	}
}

// TestClusterTimeAndOperationTime: replies carry $clusterTime (unsigned,
// as mongod without a keyFile) and operationTime, which grows with writes;
// a client's $clusterTime advances the clock.
func TestClusterTimeAndOperationTime(t *testing.T) {
	srv, c := startRS(t)
	mustCmd(t, c, bson.D{{Key: "replSetInitiate", Value: 1}})
	coll := c.Database("d").Collection("c")
	var last uint64
	for i := 0; i < 3; i++ {
		r := mustCmd(t, c, bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "i", Value: i}}}}})
		_ = coll
		ct := r.Lookup("$clusterTime").Document()
		if sig := ct.Lookup("signature").Document(); sig.Lookup("keyId").Int64() != 0 {
			t.Fatalf("signature %v", sig)
		} else if _, data := sig.Lookup("hash").Binary(); len(data) != 20 || string(data) != string(make([]byte, 20)) {
			t.Fatalf("signature hash %x", data)
		}
		ts, in := r.Lookup("operationTime").Timestamp()
		op := uint64(ts)<<32 | uint64(in)
		if op <= last {
			t.Fatalf("operationTime %d after %d", op, last)
		}
		last = op
		if r.Lookup("opTime", "ts").Type != bson.TypeTimestamp || r.Lookup("electionId").Type != bson.TypeObjectID {
			t.Fatalf("insert reply: %v", r)
		}
	}
	// Gossip: a later cluster time from the client becomes the member's.
	future := bson.Timestamp{T: uint32(time.Now().Unix()) + 100, I: 7}
	raw := rawDial(t, srv)
	r := raw.command(marshal(t, bson.D{{Key: "ping", Value: 1}, {Key: "$clusterTime", Value: bson.D{{Key: "clusterTime", Value: future},
		{Key: "signature", Value: bson.D{{Key: "hash", Value: bson.Binary{Data: make([]byte, 20)}}, {Key: "keyId", Value: int64(0)}}}}}, {Key: "$db", Value: "admin"}}))
	if t1, i1 := r.Lookup("$clusterTime", "clusterTime").Timestamp(); t1 != future.T || i1 != future.I {
		t.Fatalf("after gossip: %v", r)
	}
	// afterClusterTime at the gossiped time is served (the member writes
	// its no-op), a later one is refused as mongod refuses it.
	r = raw.command(marshal(t, bson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: bson.D{{Key: "afterClusterTime", Value: future}}}, {Key: "$db", Value: "d"}}))
	if r.Lookup("ok").Double() != 1 {
		t.Fatalf("afterClusterTime at the cluster time: %v", r)
	}
	later := bson.Timestamp{T: future.T + 10, I: 1}
	r = raw.command(marshal(t, bson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: bson.D{{Key: "afterClusterTime", Value: later}}}, {Key: "$db", Value: "d"}}))
	if r.Lookup("code").Int32() != 72 {
		t.Fatalf("afterClusterTime after the cluster time: %v", r)
	}
	r = raw.command(marshal(t, bson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: bson.D{{Key: "level", Value: "snapshot"}}}, {Key: "$db", Value: "d"}}))
	if r.Lookup("ok").Double() != 1 || r.Lookup("cursor", "atClusterTime").Type != bson.TypeTimestamp {
		t.Fatalf("snapshot: %v", r)
	}
	for _, level := range []string{"local", "majority", "available", "linearizable"} {
		r = raw.command(marshal(t, bson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: bson.D{{Key: "level", Value: level}}}, {Key: "$db", Value: "d"}}))
		if r.Lookup("ok").Double() != 1 {
			t.Fatalf("readConcern %s: %v", level, r)
		}
	}
}

// TestReplSetWriteConcern: w: "majority" and w: 1 are met; w: 2 and an
// unknown mode are applied and reported in writeConcernError, as a
// one-member mongod set reports them; getDefaultRWConcern reports the
// replica set's implicit default.
func TestReplSetWriteConcern(t *testing.T) {
	srv, c := startRS(t)
	mustCmd(t, c, bson.D{{Key: "replSetInitiate", Value: 1}})
	db := c.Database("d")
	for i, wc := range []*writeconcern.WriteConcern{writeconcern.Majority(), writeconcern.W1(), writeconcern.Journaled()} {
		coll := db.Collection("c", options.Collection().SetWriteConcern(wc))
		if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "ok", Value: i}}); err != nil {
			t.Fatalf("%v: %v", wc, err)
		}
	}
	r := mustCmd(t, c, bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "ok", Value: "wtimeout"}}}},
		{Key: "writeConcern", Value: bson.D{{Key: "w", Value: "majority"}, {Key: "wtimeout", Value: 1000}}}, {Key: "$db", Value: "d"}})
	if r.Lookup("writeConcernError").Type != 0 || r.Lookup("n").Int32() != 1 {
		t.Fatalf("w: majority, wtimeout: %v", r)
	}
	cases := []struct {
		w    any
		code int32
		msg  string
	}{
		{2, 100, "Not enough data-bearing nodes"},
		{"dc1", 79, "No write concern mode named 'dc1' found in replica set configuration"},
	}
	raw := rawDial(t, srv)
	for _, tc := range cases {
		r := raw.command(marshal(t, bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "w", Value: tc.w}}}},
			{Key: "writeConcern", Value: bson.D{{Key: "w", Value: tc.w}}}, {Key: "$db", Value: "d"}}))
		wce := r.Lookup("writeConcernError").Document()
		if wce.Lookup("code").Int32() != tc.code || wce.Lookup("errmsg").StringValue() != tc.msg ||
			wce.Lookup("errInfo", "writeConcern", "provenance").StringValue() != "clientSupplied" || r.Lookup("n").Int32() != 1 {
			t.Fatalf("w: %v: %v", tc.w, r)
		}
	}
	n, err := db.Collection("c").CountDocuments(ctx(t), bson.D{{Key: "w", Value: bson.D{{Key: "$exists", Value: true}}}})
	if err != nil || n != 2 {
		t.Fatalf("writes with unsatisfiable concerns applied: %d, %v", n, err)
	}
	d := mustCmd(t, c, bson.D{{Key: "getDefaultRWConcern", Value: 1}})
	if d.Lookup("defaultWriteConcern", "w").StringValue() != "majority" || d.Lookup("defaultWriteConcernSource").StringValue() != "implicit" {
		t.Fatalf("getDefaultRWConcern: %v", d)
	}
}

// TestStandaloneReplCommands: without --replSet every replSet command
// answers NoReplicationEnabled, as a standalone mongod.
func TestStandaloneReplCommands(t *testing.T) {
	_, c := connect(t)
	for _, cmd := range []string{"replSetGetStatus", "replSetGetConfig", "replSetReconfig", "replSetStepDown", "replSetFreeze", "replSetInitiate"} {
		_, err := runCmd(t, c, bson.D{{Key: cmd, Value: 1}})
		cmdErr(t, err, 76)
		want := "not running with --replSet"
		if cmd == "replSetInitiate" {
			want = "This node was not started with replication enabled."
		}
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
	h := mustCmd(t, c, bson.D{{Key: "hello", Value: 1}})
	if h.Lookup("setName").Type != 0 || h.Lookup("$clusterTime").Type != 0 {
		t.Fatalf("standalone hello: %v", h)
	}
}

// TestReplSetDriverDiscovery: the driver connects with ?replicaSet=rs0,
// discovers the set from hello, finds the primary and writes.
func TestReplSetDriverDiscovery(t *testing.T) {
	srv, c := startRS(t)
	mustCmd(t, c, bson.D{{Key: "replSetInitiate", Value: 1}})
	for i, uri := range []string{
		fmt.Sprintf("mongodb://%s/?replicaSet=rs0&retryWrites=false", me(srv)),
		fmt.Sprintf("mongodb://%s/?retryWrites=false", me(srv)), // one seed, no directConnection: discovery
	} {
		rs := dial(t, uri)
		if _, err := rs.Database("d").Collection("c").InsertOne(ctx(t), bson.D{{Key: "x", Value: i}}); err != nil {
			t.Fatalf("%s: insert: %v", uri, err)
		}
		n, err := rs.Database("d").Collection("c").CountDocuments(ctx(t), bson.D{})
		if err != nil || n != int64(i+1) {
			t.Fatalf("%s: count: %d, %v", uri, n, err)
		}
	}
}

// TestReplSetStepDownAndFreeze: a one-member set cannot hand over without
// force (ExceededTimeLimit); forced, it is SECONDARY and refuses writes;
// replSetFreeze 0 lets it elect itself again, in a new term. The
// awaitable hello answers each change at once.
func TestReplSetStepDownAndFreeze(t *testing.T) {
	srv, c := startRS(t)
	raw := rawDial(t, srv)
	first := raw.command(marshal(t, bson.D{{Key: "hello", Value: 1}, {Key: "$db", Value: "admin"}}))
	tv := first.Lookup("topologyVersion")
	// Await a change for a minute: initiation answers it at once.
	raw.id++
	raw.send(wire.AppendMsg(nil, raw.id, 0, 0, marshal(t, bson.D{{Key: "hello", Value: 1}, {Key: "topologyVersion", Value: tv}, {Key: "maxAwaitTimeMS", Value: 60000}, {Key: "$db", Value: "admin"}})))
	mustCmd(t, c, bson.D{{Key: "replSetInitiate", Value: 1}})
	start := time.Now()
	r := raw.read()
	if r.Lookup("setName").StringValue() != "rs0" || time.Since(start) > 20*time.Second {
		t.Fatalf("awaited hello after initiation: %v", r)
	}
	if c1, c0 := r.Lookup("topologyVersion", "counter").Int64(), tv.Document().Lookup("counter").Int64(); c1 <= c0 {
		t.Fatalf("topologyVersion counter %d after %d", c1, c0)
	}

	_, err := runCmd(t, c, bson.D{{Key: "replSetStepDown", Value: 60}, {Key: "secondaryCatchUpPeriodSecs", Value: 0}})
	cmdErr(t, err, 262)
	_, err = runCmd(t, c, bson.D{{Key: "replSetFreeze", Value: 10}})
	cmdErr(t, err, 95)
	mustCmd(t, c, bson.D{{Key: "replSetStepDown", Value: 60}, {Key: "force", Value: true}})
	h := mustCmd(t, c, bson.D{{Key: "hello", Value: 1}})
	if h.Lookup("isWritablePrimary").Boolean() || !h.Lookup("secondary").Boolean() || h.Lookup("primary").Type != 0 {
		t.Fatalf("hello after step down: %v", h)
	}
	_, err = c.Database("d").Collection("c").InsertOne(ctx(t), bson.D{{Key: "x", Value: 1}})
	cmdErr(t, err, 10107)
	_, err = runCmd(t, c, bson.D{{Key: "replSetStepDown", Value: 60}, {Key: "force", Value: true}})
	cmdErr(t, err, 10107)
	r = mustCmd(t, c, bson.D{{Key: "replSetFreeze", Value: 0}})
	if r.Lookup("info").StringValue() != "unfreezing" {
		t.Fatalf("replSetFreeze 0: %v", r)
	}
	h = mustCmd(t, c, bson.D{{Key: "hello", Value: 1}})
	if !h.Lookup("isWritablePrimary").Boolean() || h.Lookup("electionId").ObjectID().Hex() != "7fffffff0000000000000002" {
		t.Fatalf("hello after unfreezing: %v", h)
	}

	// Reconfig: the version must grow; a forced one moves it far ahead.
	member := bson.A{bson.D{{Key: "_id", Value: 0}, {Key: "host", Value: me(srv)}}}
	_, err = runCmd(t, c, bson.D{{Key: "replSetReconfig", Value: bson.D{{Key: "_id", Value: "rs0"}, {Key: "version", Value: 1}, {Key: "members", Value: member}}}})
	cmdErr(t, err, 103)
	mustCmd(t, c, bson.D{{Key: "replSetReconfig", Value: bson.D{{Key: "_id", Value: "rs0"}, {Key: "version", Value: 2}, {Key: "members", Value: member}}}})
	mustCmd(t, c, bson.D{{Key: "replSetReconfig", Value: bson.D{{Key: "_id", Value: "rs0"}, {Key: "version", Value: 3}, {Key: "members", Value: member}}}, {Key: "force", Value: true}})
	gc := mustCmd(t, c, bson.D{{Key: "replSetGetConfig", Value: 1}})
	if v := gc.Lookup("config", "version").Int32(); v < 10003 || gc.Lookup("config", "term").Int32() != -1 {
		t.Fatalf("forced reconfig: %v", gc)
	}
}

// TestDefaultReplicaSet: cairnd without --replSet or --standalone is the
// primary of the one-member set rs0, initiated at its first start and
// still initiated after a restart; direct and ?replicaSet=rs0 connections
// both write.
func TestDefaultReplicaSet(t *testing.T) {
	dir := t.TempDir()
	srv, err := cairndtest.StartDir(dir, cairndtest.DefaultMode)
	if err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{
		srv.URI + "&retryWrites=false",
		fmt.Sprintf("mongodb://%s/?retryWrites=false", me(srv)),
		fmt.Sprintf("mongodb://%s/?replicaSet=rs0&retryWrites=false", me(srv)),
	} {
		c := dial(t, uri)
		h := mustCmd(t, c, bson.D{{Key: "hello", Value: 1}})
		if h.Lookup("setName").StringValue() != "rs0" || !h.Lookup("isWritablePrimary").Boolean() || h.Lookup("me").StringValue() != me(srv) {
			t.Fatalf("%s: hello: %v", uri, h)
		}
		if _, err := c.Database("d").Collection("c").InsertOne(ctx(t), bson.D{{Key: "uri", Value: uri}}); err != nil {
			t.Fatalf("%s: insert: %v", uri, err)
		}
		c.Disconnect(ctx(t))
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	srv, err = cairndtest.StartDir(dir, cairndtest.DefaultMode)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c := dial(t, srv.URI+"&retryWrites=false")
	st := mustCmd(t, c, bson.D{{Key: "replSetGetStatus", Value: 1}})
	if st.Lookup("set").StringValue() != "rs0" || st.Lookup("myState").Int32() != 1 || st.Lookup("term").Int64() != 2 {
		t.Fatalf("after restart: %v", st)
	}
	n, err := c.Database("d").Collection("c").CountDocuments(ctx(t), bson.D{})
	if err != nil || n != 3 {
		t.Fatalf("documents after restart: %d, %v", n, err)
	}
}
