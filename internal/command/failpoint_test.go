package command

import (
	"context"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/failpoint"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func fpEnv(t *testing.T, testCommands bool) (*Env, func(db string, body dbson.D) bson.Doc) {
	t.Helper()
	env := memEnv(t)
	env.TestCommands = testCommands
	env.FailPoints = failpoint.NewRegistry(failpoint.Defs()...)
	run := func(db string, body dbson.D) bson.Doc {
		t.Helper()
		raw, err := dbson.Marshal(append(body, dbson.E{Key: "$db", Value: db}))
		if err != nil {
			t.Fatal(err)
		}
		c := &Ctx{Context: context.Background(), Env: env, Conn: &Conn{ID: 3}, DB: db, Body: bson.Doc(raw), Reply: &bson.Builder{}}
		return bson.Doc(append([]byte(nil), Dispatch(c)...))
	}
	return env, run
}

func replyCode(r bson.Doc) int64 {
	v, _ := r.Lookup("code")
	n, _ := v.AsInt64()
	return n
}

// TestConfigureFailPointIsTestOnly: without enableTestCommands the command
// does not exist, whatever database it is sent to.
func TestConfigureFailPointIsTestOnly(t *testing.T) {
	_, run := fpEnv(t, false)
	for _, db := range []string{"admin", "test"} {
		r := run(db, dbson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "alwaysOn"}})
		if replyCode(r) != int64(mongoerr.CommandNotFound) {
			t.Errorf("on %s: %s, want CommandNotFound", db, r.String())
		}
	}
}

// TestFailCommandReplies: the replies failCommand makes, through Dispatch.
func TestFailCommandReplies(t *testing.T) {
	env, run := fpEnv(t, true)
	set := func(mode any, data dbson.D) {
		t.Helper()
		r := run("admin", dbson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: mode}, {Key: "data", Value: data}})
		if !ok(r) {
			t.Fatalf("configureFailPoint: %s", r.String())
		}
	}
	// An empty errorLabels array means no labels at all.
	set("alwaysOn", dbson.D{{Key: "failCommands", Value: dbson.A{"ping"}}, {Key: "errorCode", Value: 91}, {Key: "errorLabels", Value: dbson.A{}}})
	r := run("t", dbson.D{{Key: "ping", Value: 1}})
	if replyCode(r) != 91 {
		t.Fatalf("ping: %s", r.String())
	}
	if _, has := r.Lookup("errorLabels"); has {
		t.Errorf("empty errorLabels gave labels: %s", r.String())
	}
	// The namespace filter uses db.collection.
	set("alwaysOn", dbson.D{{Key: "failCommands", Value: dbson.A{"insert"}}, {Key: "errorCode", Value: 2}, {Key: "namespace", Value: "t.a"}})
	if r := run("t", dbson.D{{Key: "insert", Value: "b"}, {Key: "documents", Value: dbson.A{dbson.D{}}}}); !ok(r) {
		t.Errorf("insert into t.b: %s", r.String())
	}
	if r := run("t", dbson.D{{Key: "insert", Value: "a"}, {Key: "documents", Value: dbson.A{dbson.D{}}}}); replyCode(r) != 2 {
		t.Errorf("insert into t.a: %s", r.String())
	}
	// The threadName filter is the connection's currentOp desc.
	set("alwaysOn", dbson.D{{Key: "failCommands", Value: dbson.A{"ping"}}, {Key: "errorCode", Value: 2}, {Key: "threadName", Value: "conn3"}})
	if r := run("t", dbson.D{{Key: "ping", Value: 1}}); replyCode(r) != 2 {
		t.Errorf("ping on conn3: %s", r.String())
	}
	// closeConnection: the reply is never sent, and the server is told.
	set("alwaysOn", dbson.D{{Key: "failCommands", Value: dbson.A{"ping"}}, {Key: "closeConnection", Value: true}})
	raw, _ := dbson.Marshal(dbson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "t"}})
	c := &Ctx{Context: context.Background(), Env: env, Conn: &Conn{ID: 3}, DB: "t", Body: bson.Doc(raw), Reply: &bson.Builder{}}
	if r := Dispatch(c); !c.CloseConnection || replyCode(r) != int64(mongoerr.FailCommandCloseConnection) {
		t.Errorf("closeConnection: CloseConnection %v, reply %s", c.CloseConnection, r.String())
	}
	// writeConcernError with labels on a write that runs.
	set("alwaysOn", dbson.D{{Key: "failCommands", Value: dbson.A{"insert"}},
		{Key: "writeConcernError", Value: dbson.D{{Key: "code", Value: 91}, {Key: "errmsg", Value: "shutting down"}}},
		{Key: "errorLabels", Value: dbson.A{"RetryableWriteError"}}})
	r = run("t", dbson.D{{Key: "insert", Value: "w"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "_id", Value: 1}}}}})
	if !ok(r) {
		t.Fatalf("insert: %s", r.String())
	}
	if n, _ := r.Lookup("n"); n.Int32() != 1 {
		t.Errorf("insert with writeConcernError: %s", r.String())
	}
	if wce, has := r.Lookup("writeConcernError"); !has || replyCode(wce.Document()) != 91 {
		t.Errorf("no writeConcernError: %s", r.String())
	}
	if l, has := r.Lookup("errorLabels"); !has || len(l.Document().Values()) != 1 || l.Document().Values()[0].StringValue() != "RetryableWriteError" {
		t.Errorf("labels: %s", r.String())
	}
	run("admin", dbson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "off"}})
	if env.FailPoints.Active() {
		t.Fatal("still active after off")
	}
}
