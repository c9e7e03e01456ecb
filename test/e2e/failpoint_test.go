package e2e

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// setFailPoint configures a fail point and returns configureFailPoint's
// count.
func setFailPoint(t *testing.T, admin *mongo.Database, cmd bson.D) int64 {
	t.Helper()
	var res bson.Raw
	if err := admin.RunCommand(ctx(t), cmd).Decode(&res); err != nil {
		t.Fatalf("%v: %v", cmd, err)
	}
	keys := []string{}
	elems, _ := res.Elements()
	for _, e := range elems {
		keys = append(keys, e.Key())
	}
	if !slices.Equal(keys, []string{"count", "ok"}) {
		t.Fatalf("configureFailPoint answered %v, want {count, ok}", res)
	}
	return res.Lookup("count").AsInt64()
}

func failCommand(mode any, data bson.D) bson.D {
	return bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: mode}, {Key: "data", Value: data}}
}

func failPointOff(t *testing.T, admin *mongo.Database, name string) int64 {
	t.Helper()
	return setFailPoint(t, admin, bson.D{{Key: "configureFailPoint", Value: name}, {Key: "mode", Value: "off"}})
}

// TestFailPointsNeedTestCommands: without enableTestCommands,
// configureFailPoint is not a command (as mongod: no such command), and
// getParameter says test commands are off.
func TestFailPointsNeedTestCommands(t *testing.T) {
	_, client := connect(t)
	admin := client.Database("admin")
	err := admin.RunCommand(ctx(t), failCommand("alwaysOn", bson.D{{Key: "failCommands", Value: bson.A{"ping"}}, {Key: "errorCode", Value: 2}})).Err()
	cmdErr(t, err, 59)
	if !strings.Contains(err.Error(), "no such command: 'configureFailPoint'") {
		t.Errorf("message %q", err)
	}
	var p struct {
		EnableTestCommands *bool `bson:"enableTestCommands"`
	}
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "getParameter", Value: "*"}}).Decode(&p); err != nil {
		t.Fatal(err)
	}
	if p.EnableTestCommands == nil || *p.EnableTestCommands {
		t.Errorf("getParameter '*' enableTestCommands = %v, want false", p.EnableTestCommands)
	}
	var lc struct{ Commands map[string]bson.Raw }
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "listCommands", Value: 1}}).Decode(&lc); err != nil {
		t.Fatal(err)
	}
	if _, ok := lc.Commands["configureFailPoint"]; ok {
		t.Error("listCommands lists configureFailPoint without test commands")
	}
	if err := client.Ping(ctx(t), nil); err != nil {
		t.Fatal(err)
	}
}

// TestFailCommand drives mongod's failCommand fail point through the Go
// driver on a server started with --setParameter enableTestCommands=1.
func TestFailCommand(t *testing.T) {
	srv := cairndtest.Start(t, "--setParameter", "enableTestCommands=1")
	client := dial(t, srv.URI)
	admin := client.Database("admin")
	coll := client.Database("fp").Collection("c")

	t.Run("parameters", func(t *testing.T) {
		var one struct{ EnableTestCommands bool }
		if err := admin.RunCommand(ctx(t), bson.D{{Key: "getParameter", Value: 1}, {Key: "enableTestCommands", Value: 1}}).Decode(&one); err != nil {
			t.Fatal(err)
		}
		if !one.EnableTestCommands {
			t.Error("getParameter enableTestCommands = false")
		}
		// pymongo's harness reads getParameter('*')['enableTestCommands'].
		var all bson.Raw
		if err := admin.RunCommand(ctx(t), bson.D{{Key: "getParameter", Value: "*"}}).Decode(&all); err != nil {
			t.Fatal(err)
		}
		if v, ok := all.Lookup("enableTestCommands").BooleanOK(); !ok || !v {
			t.Errorf("getParameter '*' enableTestCommands: %v", all.Lookup("enableTestCommands"))
		}
		if v, ok := all.Lookup("ttlMonitorSleepSecs").Int32OK(); !ok || v != 60 {
			t.Errorf("getParameter '*' ttlMonitorSleepSecs: %v", all.Lookup("ttlMonitorSleepSecs"))
		}
		var opts struct {
			Parsed struct {
				SetParameter map[string]string `bson:"setParameter"`
			}
		}
		if err := admin.RunCommand(ctx(t), bson.D{{Key: "getCmdLineOpts", Value: 1}}).Decode(&opts); err != nil {
			t.Fatal(err)
		}
		if opts.Parsed.SetParameter["enableTestCommands"] != "1" {
			t.Errorf("getCmdLineOpts parsed.setParameter = %v", opts.Parsed.SetParameter)
		}
		var lc struct{ Commands map[string]bson.Raw }
		if err := admin.RunCommand(ctx(t), bson.D{{Key: "listCommands", Value: 1}}).Decode(&lc); err != nil {
			t.Fatal(err)
		}
		if _, ok := lc.Commands["configureFailPoint"]; !ok {
			t.Error("listCommands does not list configureFailPoint")
		}
	})

	t.Run("refusals", func(t *testing.T) {
		err := client.Database("fp").RunCommand(ctx(t), failCommand("alwaysOn", bson.D{})).Err()
		cmdErr(t, err, 13) // Unauthorized: admin only
		err = admin.RunCommand(ctx(t), bson.D{{Key: "configureFailPoint", Value: "noSuchFailPoint"}, {Key: "mode", Value: "alwaysOn"}}).Err()
		cmdErr(t, err, 266) // FailPointSetFailed
		if !strings.Contains(err.Error(), "noSuchFailPoint not found") {
			t.Errorf("message %q", err)
		}
		err = admin.RunCommand(ctx(t), failCommand(bson.D{{Key: "times", Value: -1}}, bson.D{})).Err()
		cmdErr(t, err, 2)
	})

	t.Run("errorCode and errorLabels", func(t *testing.T) {
		if n := setFailPoint(t, admin, failCommand(bson.D{{Key: "times", Value: 1}}, bson.D{
			{Key: "failCommands", Value: bson.A{"find"}}, {Key: "errorCode", Value: 2},
			{Key: "errorLabels", Value: bson.A{"LabelA", "LabelB"}},
		})); n != 0 {
			t.Errorf("first count %d, want 0", n)
		}
		err := coll.FindOne(ctx(t), bson.D{}).Err()
		var ce mongo.CommandError
		if !errors.As(err, &ce) {
			t.Fatalf("find: %T %v, want a CommandError", err, err)
		}
		if ce.Code != 2 || ce.Message != "Failing command via 'failCommand' failpoint" || !ce.HasErrorLabel("LabelA") || !ce.HasErrorLabel("LabelB") {
			t.Errorf("find failed with %+v", ce)
		}
		// times: 1 is used up; the next find runs.
		if err := coll.FindOne(ctx(t), bson.D{}).Err(); err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
			t.Fatalf("second find: %v", err)
		}
		if n := failPointOff(t, admin, "failCommand"); n != 1 {
			t.Errorf("count after one firing %d, want 1", n)
		}
	})

	t.Run("no labels on a standalone's plain write", func(t *testing.T) {
		setFailPoint(t, admin, failCommand(bson.D{{Key: "times", Value: 1}}, bson.D{
			{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "errorCode", Value: 262}, // ExceededTimeLimit: retriable
		}))
		noRetry := dial(t, srv.URI, options.Client().SetRetryWrites(false))
		_, err := noRetry.Database("fp").Collection("c").InsertOne(ctx(t), bson.D{{Key: "x", Value: 1}})
		var ce mongo.CommandError
		if !errors.As(err, &ce) || ce.Code != 262 || len(ce.Labels) != 0 {
			t.Fatalf("insert: %#v, want code 262 and no labels (no txnNumber)", err)
		}
		failPointOff(t, admin, "failCommand")
	})

	t.Run("times and skip", func(t *testing.T) {
		before := setFailPoint(t, admin, failCommand(bson.D{{Key: "times", Value: 2}}, bson.D{
			{Key: "failCommands", Value: bson.A{"ping"}}, {Key: "errorCode", Value: 8},
		}))
		got := ""
		for range 4 {
			if err := client.Ping(ctx(t), nil); err != nil {
				cmdErr(t, err, 8)
				got += "x"
			} else {
				got += "."
			}
		}
		if got != "xx.." {
			t.Errorf("times 2: pings %q, want xx..", got)
		}
		mid := setFailPoint(t, admin, failCommand(bson.D{{Key: "skip", Value: 2}}, bson.D{
			{Key: "failCommands", Value: bson.A{"ping"}}, {Key: "errorCode", Value: 8},
		}))
		if mid-before != 2 {
			t.Errorf("count went from %d to %d, want +2", before, mid)
		}
		got = ""
		for range 4 {
			if err := client.Ping(ctx(t), nil); err != nil {
				cmdErr(t, err, 8)
				got += "x"
			} else {
				got += "."
			}
		}
		if got != "..xx" {
			t.Errorf("skip 2: pings %q, want ..xx", got)
		}
		if n := failPointOff(t, admin, "failCommand"); n-mid != 2 {
			t.Errorf("count went from %d to %d, want +2", mid, n)
		}
		if err := client.Ping(ctx(t), nil); err != nil {
			t.Fatalf("ping with the fail point off: %v", err)
		}
	})

	t.Run("closeConnection", func(t *testing.T) {
		if _, err := coll.DeleteMany(ctx(t), bson.D{}); err != nil {
			t.Fatal(err)
		}
		setFailPoint(t, admin, failCommand(bson.D{{Key: "times", Value: 1}}, bson.D{
			{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "closeConnection", Value: true},
		}))
		noRetry := dial(t, srv.URI, options.Client().SetRetryWrites(false))
		_, err := noRetry.Database("fp").Collection("c").InsertOne(ctx(t), bson.D{{Key: "_id", Value: "closed"}})
		if !mongo.IsNetworkError(err) {
			t.Fatalf("insert: %T %v, want a network error", err, err)
		}
		if n, err := coll.CountDocuments(ctx(t), bson.D{}); err != nil || n != 0 {
			t.Fatalf("the insert whose connection closed wrote %d documents (%v)", n, err)
		}
		// The client reconnects: the next insert goes through.
		if _, err := noRetry.Database("fp").Collection("c").InsertOne(ctx(t), bson.D{{Key: "_id", Value: "after"}}); err != nil {
			t.Fatal(err)
		}
		failPointOff(t, admin, "failCommand")
	})

	t.Run("blockConnection", func(t *testing.T) {
		const blockMS = 300
		setFailPoint(t, admin, failCommand(bson.D{{Key: "times", Value: 1}}, bson.D{
			{Key: "failCommands", Value: bson.A{"find"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: blockMS},
		}))
		start := time.Now()
		cur, err := coll.Find(ctx(t), bson.D{}, options.Find().SetComment("fp-block"))
		if err != nil {
			t.Fatal(err)
		}
		cur.Close(ctx(t))
		if d := time.Since(start); d < blockMS*time.Millisecond {
			t.Errorf("blocked find answered after %v, want at least %d ms", d, blockMS)
		}
		// The server's own measure: its slow-operation line for the find.
		if ms := slowLineMillis(t, admin, "fp-block"); ms < blockMS {
			t.Errorf("the server logged the blocked find at %d ms, want at least %d", ms, blockMS)
		}
		failPointOff(t, admin, "failCommand")
	})

	t.Run("blockConnection is killable", func(t *testing.T) {
		setFailPoint(t, admin, failCommand("alwaysOn", bson.D{
			{Key: "failCommands", Value: bson.A{"count"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 60000},
		}))
		done := make(chan error, 1)
		go func() {
			done <- client.Database("fp").RunCommand(ctx(t), bson.D{{Key: "count", Value: "c"}, {Key: "comment", Value: "fp-kill"}}).Err()
		}()
		var opid int64
		for deadline := time.Now().Add(20 * time.Second); opid == 0; time.Sleep(20 * time.Millisecond) {
			var res struct {
				Inprog []struct{ Opid int64 }
			}
			if err := admin.RunCommand(ctx(t), bson.D{{Key: "currentOp", Value: 1}, {Key: "command.comment", Value: "fp-kill"}}).Decode(&res); err != nil {
				t.Fatal(err)
			}
			if len(res.Inprog) == 1 {
				opid = res.Inprog[0].Opid
			}
			if time.Now().After(deadline) {
				t.Fatal("the blocked count never showed in currentOp")
			}
		}
		failPointOff(t, admin, "failCommand")
		if err := admin.RunCommand(ctx(t), bson.D{{Key: "killOp", Value: 1}, {Key: "op", Value: opid}}).Err(); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			cmdErr(t, err, 11601)
		case <-time.After(20 * time.Second):
			t.Fatal("the blocked count still waits 20 s after killOp")
		}
	})

	t.Run("appName", func(t *testing.T) {
		setFailPoint(t, admin, failCommand("alwaysOn", bson.D{
			{Key: "failCommands", Value: bson.A{"ping"}}, {Key: "errorCode", Value: 8}, {Key: "appName", Value: "fpApp"},
		}))
		app := dial(t, srv.URI, options.Client().SetAppName("fpOther"))
		if err := app.Ping(ctx(t), nil); err != nil {
			t.Fatalf("ping from another appName: %v", err)
		}
		if err := client.Ping(ctx(t), nil); err != nil {
			t.Fatalf("ping without an appName: %v", err)
		}
		o := options.Client().ApplyURI(srv.URI).SetAppName("fpApp")
		named, err := mongo.Connect(o)
		if err != nil {
			t.Fatal(err)
		}
		defer named.Disconnect(ctx(t))
		cmdErr(t, named.Ping(ctx(t), nil), 8)
		failPointOff(t, admin, "failCommand")
	})

	t.Run("writeConcernError", func(t *testing.T) {
		setFailPoint(t, admin, failCommand(bson.D{{Key: "times", Value: 1}}, bson.D{
			{Key: "failCommands", Value: bson.A{"insert"}},
			{Key: "writeConcernError", Value: bson.D{{Key: "code", Value: 100}, {Key: "codeName", Value: "UnsatisfiableWriteConcern"}, {Key: "errmsg", Value: "Not enough data-bearing nodes"}}},
		}))
		_, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: "wce"}})
		var we mongo.WriteException
		if !errors.As(err, &we) || we.WriteConcernError == nil || we.WriteConcernError.Code != 100 || len(we.WriteErrors) != 0 {
			t.Fatalf("insert: %#v, want a write concern error 100", err)
		}
		if n, err := coll.CountDocuments(ctx(t), bson.D{{Key: "_id", Value: "wce"}}); err != nil || n != 1 {
			t.Fatalf("the insert with a write concern error wrote %d documents (%v), want 1", n, err)
		}
		// A find is no write: the writeConcernError fail point leaves it alone.
		setFailPoint(t, admin, failCommand("alwaysOn", bson.D{
			{Key: "failCommands", Value: bson.A{"find"}},
			{Key: "writeConcernError", Value: bson.D{{Key: "code", Value: 100}, {Key: "errmsg", Value: "x"}}},
		}))
		if err := coll.FindOne(ctx(t), bson.D{{Key: "_id", Value: "wce"}}).Err(); err != nil {
			t.Fatalf("find: %v", err)
		}
		failPointOff(t, admin, "failCommand")
	})

	t.Run("configureFailPoint is exempt", func(t *testing.T) {
		setFailPoint(t, admin, failCommand("alwaysOn", bson.D{
			{Key: "failCommands", Value: bson.A{"configureFailPoint", "ping"}}, {Key: "errorCode", Value: 8},
		}))
		cmdErr(t, client.Ping(ctx(t), nil), 8)
		failPointOff(t, admin, "failCommand") // would fail if configureFailPoint were failed
		if err := client.Ping(ctx(t), nil); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("failGetMoreAfterCursorCheckout", func(t *testing.T) {
		gm := client.Database("fp").Collection("gm")
		if _, err := gm.InsertMany(ctx(t), []any{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "_id", Value: 3}}}); err != nil {
			t.Fatal(err)
		}
		cur, err := gm.Find(ctx(t), bson.D{}, options.Find().SetBatchSize(1))
		if err != nil {
			t.Fatal(err)
		}
		id := cur.ID()
		setFailPoint(t, admin, bson.D{{Key: "configureFailPoint", Value: "failGetMoreAfterCursorCheckout"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}},
			{Key: "data", Value: bson.D{{Key: "errorCode", Value: 6}, {Key: "closeConnection", Value: false}}}})
		cur.Next(ctx(t)) // the first batch
		if cur.Next(ctx(t)) {
			t.Fatal("getMore succeeded under the fail point")
		}
		cmdErr(t, cur.Err(), 6)
		// The cursor is gone, as mongod destroys it.
		err = client.Database("fp").RunCommand(ctx(t), bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "gm"}}).Err()
		cmdErr(t, err, 43)
		failPointOff(t, admin, "failGetMoreAfterCursorCheckout")
	})
}

// slowLineMillis finds the server's slow-operation line of the command with
// comment and returns its durationMillis.
func slowLineMillis(t *testing.T, admin *mongo.Database, comment string) int64 {
	t.Helper()
	var res struct{ Log []string }
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "getLog", Value: "global"}}).Decode(&res); err != nil {
		t.Fatal(err)
	}
	for _, l := range res.Log {
		if !strings.Contains(l, comment) || !strings.Contains(l, "Slow query") {
			continue
		}
		var line struct {
			Attr struct {
				DurationMillis int64 `json:"durationMillis"`
			} `json:"attr"`
		}
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		return line.Attr.DurationMillis
	}
	t.Fatalf("no slow-operation line with comment %q", comment)
	return 0
}
