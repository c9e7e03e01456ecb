package command

import (
	"context"
	"runtime"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/concern"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
)

// replEnv is memEnv as a member of rs0 at h:1, not initiated.
func replEnv(t *testing.T) *Env {
	t.Helper()
	env := memEnv(t)
	env.Repl = repl.NewSet("rs0", nil)
	env.Repl.SetMe("h:1")
	if err := env.AttachRepl(false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Repl.Stop)
	return env
}

func runIn(t *testing.T, ctx context.Context, env *Env, db string, body dbson.D) bson.Doc {
	t.Helper()
	raw, err := dbson.Marshal(append(body, dbson.E{Key: "$db", Value: db}))
	if err != nil {
		t.Fatal(err)
	}
	c := &Ctx{Context: ctx, Env: env, DB: db, Body: bson.Doc(raw), Reply: &bson.Builder{}}
	return bson.Doc(append([]byte(nil), Dispatch(c)...))
}

// TestReplSetCommands runs the replSet commands in order on one member,
// each with the code it must answer (0: ok).
func TestReplSetCommands(t *testing.T) {
	env := replEnv(t)
	member := func(id int, host string) dbson.D { return dbson.D{{Key: "_id", Value: id}, {Key: "host", Value: host}} }
	cfg := func(name string, version int, members ...dbson.D) dbson.D {
		a := dbson.A{}
		for _, m := range members {
			a = append(a, m)
		}
		return dbson.D{{Key: "_id", Value: name}, {Key: "version", Value: version}, {Key: "members", Value: a}}
	}
	steps := []struct {
		name string
		db   string
		cmd  dbson.D
		code int32
	}{
		{"status before initiation", "admin", dbson.D{{Key: "replSetGetStatus", Value: 1}}, 94},
		{"afterClusterTime before initiation", "d", dbson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: dbson.D{{Key: "afterClusterTime", Value: dbson.Timestamp{T: 1, I: 1}}}}}, 13436},
		{"config before initiation", "admin", dbson.D{{Key: "replSetGetConfig", Value: 1}}, 94},
		{"write before initiation", "d", dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{}}}}, 10107},
		{"local is writable", "local", dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{}}}}, 0},
		{"not on admin", "d", dbson.D{{Key: "replSetInitiate", Value: 1}}, 13},
		{"wrong name", "admin", dbson.D{{Key: "replSetInitiate", Value: cfg("rs1", 1, member(0, "h:1"))}}, 93},
		{"other host", "admin", dbson.D{{Key: "replSetInitiate", Value: cfg("rs0", 1, member(0, "h:2"))}}, 74},
		{"two members on one host", "admin", dbson.D{{Key: "replSetInitiate", Value: cfg("rs0", 1, member(0, "h:1"), member(1, "h:1"))}}, 93},
		{"priority 0", "admin", dbson.D{{Key: "replSetInitiate", Value: dbson.D{{Key: "_id", Value: "rs0"},
			{Key: "members", Value: dbson.A{dbson.D{{Key: "_id", Value: 0}, {Key: "host", Value: "h:1"}, {Key: "priority", Value: 0}}}}}}}, 93},
		{"initiate", "admin", dbson.D{{Key: "replSetInitiate", Value: cfg("rs0", 1, member(3, "h:1"))}}, 0},
		{"again", "admin", dbson.D{{Key: "replSetInitiate", Value: 1}}, 23},
		{"again with a bad config", "admin", dbson.D{{Key: "replSetInitiate", Value: cfg("rs1", 1, member(0, "h:1"))}}, 23},
		{"write", "d", dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{}}}}, 0},
		{"status", "admin", dbson.D{{Key: "replSetGetStatus", Value: 1}}, 0},
		{"reconfig same version", "admin", dbson.D{{Key: "replSetReconfig", Value: cfg("rs0", 1, member(3, "h:1"))}}, 103},
		{"reconfig other name", "admin", dbson.D{{Key: "replSetReconfig", Value: cfg("rs9", 2, member(3, "h:1"))}}, 103},
		{"reconfig other id", "admin", dbson.D{{Key: "replSetReconfig", Value: cfg("rs0", 2, member(4, "h:1"))}}, 103},
		{"reconfig other host", "admin", dbson.D{{Key: "replSetReconfig", Value: cfg("rs0", 2, member(3, "h:9"))}}, 74},
		{"reconfig to two members", "admin", dbson.D{{Key: "replSetReconfig", Value: cfg("rs0", 2, member(3, "h:1"), member(4, "h:2"))}}, 74},
		{"reconfig", "admin", dbson.D{{Key: "replSetReconfig", Value: cfg("rs0", 2, member(3, "h:1"))}}, 0},
		{"stepdown negative", "admin", dbson.D{{Key: "replSetStepDown", Value: -1}}, 2},
		{"stepdown shorter than catch-up", "admin", dbson.D{{Key: "replSetStepDown", Value: 5}}, 2},
		{"stepdown without force", "admin", dbson.D{{Key: "replSetStepDown", Value: 60}, {Key: "secondaryCatchUpPeriodSecs", Value: 0}}, 262},
		{"freeze a primary", "admin", dbson.D{{Key: "replSetFreeze", Value: 30}}, 95},
		{"stepdown forced", "admin", dbson.D{{Key: "replSetStepDown", Value: 60}, {Key: "force", Value: true}}, 0},
		{"write on a secondary", "d", dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{}}}}, 10107},
		{"linearizable on a secondary", "d", dbson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: dbson.D{{Key: "level", Value: "linearizable"}}}}, 10107},
		{"freeze", "admin", dbson.D{{Key: "replSetFreeze", Value: 30}}, 0},
		{"unfreeze", "admin", dbson.D{{Key: "replSetFreeze", Value: 0}}, 0},
		{"write again", "d", dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{}}}}, 0},
		{"linearizable $out", "d", dbson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: dbson.A{dbson.D{{Key: "$out", Value: "o"}}}}, {Key: "cursor", Value: dbson.D{}}, {Key: "readConcern", Value: dbson.D{{Key: "level", Value: "linearizable"}}}}, 72},
		{"linearizable $merge", "d", dbson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: dbson.A{dbson.D{{Key: "$match", Value: dbson.D{}}}, dbson.D{{Key: "$merge", Value: "o"}}}}, {Key: "cursor", Value: dbson.D{}}, {Key: "readConcern", Value: dbson.D{{Key: "level", Value: "linearizable"}}}}, 72},
		{"linearizable aggregate", "d", dbson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: dbson.A{}}, {Key: "cursor", Value: dbson.D{}}, {Key: "readConcern", Value: dbson.D{{Key: "level", Value: "linearizable"}}}}, 0},
		{"bad readConcern level", "d", dbson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: dbson.D{{Key: "level", Value: "x"}}}}, 2},
		{"unknown readConcern field", "d", dbson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: dbson.D{{Key: "x", Value: 1}}}}, 40415},
		{"snapshot read", "d", dbson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: dbson.D{{Key: "level", Value: "snapshot"}}}}, 0},
		{"snapshot $out", "d", dbson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: dbson.A{dbson.D{{Key: "$out", Value: "o"}}}}, {Key: "cursor", Value: dbson.D{}}, {Key: "readConcern", Value: dbson.D{{Key: "level", Value: "snapshot"}}}}, 72},
		{"snapshot count", "d", dbson.D{{Key: "count", Value: "c"}, {Key: "readConcern", Value: dbson.D{{Key: "level", Value: "snapshot"}}}}, 72},
		{"snapshot with afterOpTime", "d", dbson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: dbson.D{{Key: "level", Value: "snapshot"}, {Key: "afterOpTime", Value: dbson.D{{Key: "ts", Value: dbson.Timestamp{T: 1, I: 1}}, {Key: "t", Value: int64(1)}}}}}}, 72},
		{"atClusterTime and afterClusterTime", "d", dbson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: dbson.D{{Key: "level", Value: "snapshot"}, {Key: "afterClusterTime", Value: dbson.Timestamp{T: 1, I: 1}}, {Key: "atClusterTime", Value: dbson.Timestamp{T: 1, I: 1}}}}}, 72},
		{"atClusterTime null", "d", dbson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: dbson.D{{Key: "level", Value: "snapshot"}, {Key: "atClusterTime", Value: dbson.Timestamp{}}}}}, 72},
		{"atClusterTime before the oplog", "d", dbson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: dbson.D{{Key: "level", Value: "snapshot"}, {Key: "atClusterTime", Value: dbson.Timestamp{T: 1, I: 1}}}}}, 239},
		{"bad $clusterTime", "d", dbson.D{{Key: "ping", Value: 1}, {Key: "$clusterTime", Value: dbson.D{{Key: "clusterTime", Value: 5}}}}, 14},
	}
	for _, s := range steps {
		r := runIn(t, context.Background(), env, s.db, s.cmd)
		if got := replyCode(r); got != int64(s.code) {
			t.Fatalf("%s: code %d, want %d: %s", s.name, got, s.code, r.String())
		}
	}
	// rs.reconfig's flow: the configuration replSetGetConfig reports, with
	// the next version, is accepted as it is.
	gc := runIn(t, context.Background(), env, "admin", dbson.D{{Key: "replSetGetConfig", Value: 1}})
	cv, _ := gc.Lookup("config")
	var cur dbson.D
	if err := dbson.Unmarshal(cv.Document(), &cur); err != nil {
		t.Fatal(err)
	}
	for i := range cur {
		if cur[i].Key == "version" {
			cur[i].Value = 3
		}
	}
	if r := runIn(t, context.Background(), env, "admin", dbson.D{{Key: "replSetReconfig", Value: cur}}); !ok(r) {
		t.Fatalf("reconfig with replSetGetConfig's document: %s", r.String())
	}
	st := env.Repl.Status()
	if st.Term != 2 || st.Config.Version != 3 || st.State != repl.StatePrimary {
		t.Fatalf("after the steps: term %d, version %d, state %s", st.Term, st.Config.Version, st.State)
	}
	// A standalone answers every one of them NoReplicationEnabled.
	alone := memEnv(t)
	for _, name := range []string{"replSetInitiate", "replSetGetStatus", "replSetGetConfig", "replSetReconfig", "replSetStepDown", "replSetFreeze"} {
		if r := runIn(t, context.Background(), alone, "admin", dbson.D{{Key: name, Value: 1}}); replyCode(r) != 76 {
			t.Fatalf("standalone %s: %s", name, r.String())
		}
	}
	// ... and refuses to wait for a cluster time or an optime, as mongod.
	for rc, code := range map[string]int32{"afterClusterTime": 20, "atClusterTime": 20, "afterOpTime": 123} {
		var v any = dbson.Timestamp{T: 1, I: 1}
		if rc == "afterOpTime" {
			v = dbson.D{{Key: "ts", Value: v}, {Key: "t", Value: int64(1)}}
		}
		if r := runIn(t, context.Background(), alone, "d", dbson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: dbson.D{{Key: rc, Value: v}}}}); replyCode(r) != int64(code) {
			t.Fatalf("standalone readConcern %s: %s", rc, r.String())
		}
	}
}

// TestReplSetRestart: a second environment over the same engine (a
// restart) loads the configuration and elects itself in the next term.
func TestReplSetRestart(t *testing.T) {
	env := replEnv(t)
	if r := runIn(t, context.Background(), env, "admin", dbson.D{{Key: "replSetInitiate", Value: 1}}); !ok(r) {
		t.Fatal(r.String())
	}
	env.Repl.Stop()
	again := &Env{Engine: exec.Engine{KV: env.KV}, Cursors: env.Cursors, Log: env.Log, Started: env.Started, Repl: repl.NewSet("rs0", nil)}
	if err := again.AttachRepl(false); err != nil {
		t.Fatal(err)
	}
	st := again.Repl.Status()
	if st.Config == nil || st.Term != 2 || st.State != repl.StatePrimary || st.Config.Members[0].Host != "h:1" {
		t.Fatalf("after restart: %+v", st)
	}
	other := &Env{Engine: exec.Engine{KV: env.KV}, Log: env.Log, Repl: repl.NewSet("rs1", nil)}
	if err := other.AttachRepl(false); err == nil {
		t.Fatal("loaded rs0's configuration as rs1")
	}
	// The default set (cairnd without --replSet) keeps the stored name.
	adopt := &Env{Engine: exec.Engine{KV: env.KV}, Log: env.Log, Repl: repl.NewSet("rs1", nil)}
	if err := adopt.AttachRepl(true); err != nil || adopt.Repl.Name != "rs0" {
		t.Fatalf("default set over rs0's data: %v, name %s", err, adopt.Repl.Name)
	}
	adopt.Repl.Stop()
}

// TestAfterClusterTimeWaitsForWrite: a read with afterClusterTime at the
// stamp of a write still in its transaction waits for that write, sees it
// once committed, and a cancelled wait ends with its context.
func TestAfterClusterTimeWaitsForWrite(t *testing.T) {
	env := replEnv(t)
	runIn(t, context.Background(), env, "admin", dbson.D{{Key: "replSetInitiate", Value: 1}})
	tx, err := env.KV.BeginWrite(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ts := env.Repl.Clock.Next() // the write's stamp, taken under the writer
	coll, err := exec.CollectionForWrite(tx, "d", "c", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := exec.OpenWriter(tx, coll)
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := dbson.Marshal(dbson.D{{Key: "_id", Value: 1}})
	if _, _, err := w.Insert(bson.Doc(doc)); err != nil {
		t.Fatal(err)
	}
	rc := dbson.D{{Key: "readConcern", Value: dbson.D{{Key: "afterClusterTime", Value: dbson.Timestamp{T: ts.T(), I: ts.I()}}}}}
	read := make(chan bson.Doc, 1)
	go func() {
		read <- runIn(t, context.Background(), env, "d", append(dbson.D{{Key: "find", Value: "c"}}, rc...))
	}()
	cctx, cancel := context.WithCancel(context.Background())
	cancelled := make(chan bson.Doc, 1)
	go func() {
		cancelled <- runIn(t, cctx, env, "d", append(dbson.D{{Key: "find", Value: "c"}}, rc...))
	}()
	for env.Stats.WritersQueued.Load() < 2 { // both reads wait for the writer
		runtime.Gosched()
	}
	select {
	case r := <-read:
		t.Fatalf("the read did not wait for the write: %s", r.String())
	default:
	}
	cancel()
	if r := <-cancelled; ok(r) {
		t.Fatalf("cancelled wait answered: %s", r.String())
	}
	if err := tx.CommitWith(kv.Lazy); err != nil {
		t.Fatal(err)
	}
	r := <-read
	batch, _ := r.Lookup("cursor")
	if n := len(mustArray(t, batch.Document(), "firstBatch")); n != 1 {
		t.Fatalf("the read after the write saw %d documents: %s", n, r.String())
	}
	if applied, _ := env.Repl.Applied(); applied <= ts {
		t.Fatalf("applied %v, not past the write's %v", applied, ts)
	}
}

func mustArray(t *testing.T, d bson.Doc, key string) []bson.Value {
	t.Helper()
	v, found := d.Lookup(key)
	if !found || v.Type != bson.TypeArray {
		t.Fatalf("%s is not an array in %s", key, d.String())
	}
	var out []bson.Value
	it := v.Document().Iter()
	for it.Next() {
		out = append(out, it.Element().Value)
	}
	return out
}

// TestReplWriteConcern: the write concerns of a one-member set.
func TestReplWriteConcern(t *testing.T) {
	env := replEnv(t)
	runIn(t, context.Background(), env, "admin", dbson.D{{Key: "replSetInitiate", Value: 1}})
	cases := []struct {
		name    string
		wc      any
		dur     kv.Durability
		pending int32
		prov    string
	}{
		{"implicit default", nil, kv.Sync, 0, concern.ProvImplicit},
		{"w1", dbson.D{{Key: "w", Value: 1}}, kv.Lazy, 0, concern.ProvClient},
		{"majority", dbson.D{{Key: "w", Value: "majority"}, {Key: "wtimeout", Value: 10}}, kv.Sync, 0, concern.ProvClient},
		{"w2", dbson.D{{Key: "w", Value: 2}}, kv.Lazy, 100, concern.ProvClient},
		{"unknown mode", dbson.D{{Key: "w", Value: "dc1"}}, kv.Sync, 79, concern.ProvClient},
	}
	for _, tc := range cases {
		body := dbson.D{{Key: "insert", Value: "c"}}
		if tc.wc != nil {
			body = append(body, dbson.E{Key: "writeConcern", Value: tc.wc})
		}
		c := ctxWith(t, body)
		c.Env = env
		wc, err := parseWriteConcern(c)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var pending int32
		if c.WCPending != nil {
			pending = c.WCPending.Code
		}
		if (tc.name != "unknown mode" && wc.durability() != tc.dur) || pending != tc.pending || wc.Provenance != tc.prov {
			t.Fatalf("%s: durability %v, pending %d, provenance %s", tc.name, wc.durability(), pending, wc.Provenance)
		}
	}
	r := runIn(t, context.Background(), env, "admin", dbson.D{{Key: "getDefaultRWConcern", Value: 1}})
	if v, _ := r.Lookup("defaultWriteConcern"); v.Document().String() != `{ w: "majority", wtimeout: 0 }` {
		t.Fatalf("getDefaultRWConcern: %s", r.String())
	}
}

// BenchmarkInsertReplSet compares a one-document insert (w: 1) on a
// standalone and on a one-member replica set: the member adds a stamp,
// $clusterTime, operationTime, opTime and electionId.
func BenchmarkInsertReplSet(b *testing.B) {
	for _, mode := range []string{"standalone", "replset"} {
		b.Run(mode, func(b *testing.B) {
			t := &testing.T{}
			env := memEnv(t)
			if mode == "replset" {
				env.Repl = repl.NewSet("rs0", nil)
				env.Repl.SetMe("h:1")
				if err := env.AttachRepl(false); err != nil {
					b.Fatal(err)
				}
				defer env.Repl.Stop()
				runIn(t, context.Background(), env, "admin", dbson.D{{Key: "replSetInitiate", Value: 1}})
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r := runIn(t, context.Background(), env, "d", dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "i", Value: i}}}},
					{Key: "writeConcern", Value: dbson.D{{Key: "w", Value: 1}}}})
				if !ok(r) {
					b.Fatal(r.String())
				}
			}
		})
	}
}
