package e2e

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestHandshakeAndAdmin(t *testing.T) {
	_, client := connect(t)
	admin := client.Database("admin")
	var hello bson.M
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"isWritablePrimary": true, "maxBsonObjectSize": int32(16777216), "maxMessageSizeBytes": int32(48000000),
		"maxWriteBatchSize": int32(100000), "logicalSessionTimeoutMinutes": int32(30), "maxWireVersion": int32(21),
		"minWireVersion": int32(0), "readOnly": false,
	}
	for k, v := range want {
		if hello[k] != v {
			t.Errorf("hello.%s = %#v, want %#v", k, hello[k], v)
		}
	}
	for _, k := range []string{"connectionId", "localTime"} {
		if _, ok := hello[k]; !ok {
			t.Errorf("hello has no %s", k)
		}
	}
	var isMaster bson.M
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "isMaster", Value: 1}}).Decode(&isMaster); err != nil {
		t.Fatal(err)
	}
	if isMaster["ismaster"] != true {
		t.Errorf("isMaster.ismaster = %v", isMaster["ismaster"])
	}

	var bi bson.M
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "buildInfo", Value: 1}}).Decode(&bi); err != nil {
		t.Fatal(err)
	}
	if bi["version"] != "7.0.0" || bi["cairnVersion"] == nil {
		t.Errorf("buildInfo = %v", bi)
	}

	for _, cmd := range []bson.D{
		{{Key: "ping", Value: 1}},
		{{Key: "hostInfo", Value: 1}},
		{{Key: "whatsmyuri", Value: 1}},
		{{Key: "getParameter", Value: "*"}},
		{{Key: "getCmdLineOpts", Value: 1}},
		{{Key: "connectionStatus", Value: 1}},
		{{Key: "listCommands", Value: 1}},
		{{Key: "serverStatus", Value: 1}},
		{{Key: "getLog", Value: "startupWarnings"}},
		{{Key: "getLog", Value: "global"}},
		{{Key: "endSessions", Value: bson.A{}}},
		{{Key: "killAllSessions", Value: bson.A{}}},
		{{Key: "getDefaultRWConcern", Value: 1}},
	} {
		if err := admin.RunCommand(ctx(t), cmd).Err(); err != nil {
			t.Errorf("%s: %v", cmd[0].Key, err)
		}
	}

	var fcv struct {
		FCV struct{ Version string } `bson:"featureCompatibilityVersion"`
	}
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "getParameter", Value: 1}, {Key: "featureCompatibilityVersion", Value: 1}}).Decode(&fcv); err != nil {
		t.Fatal(err)
	}
	if fcv.FCV.Version != "7.0" {
		t.Errorf("featureCompatibilityVersion = %+v", fcv)
	}
	cmdErr(t, admin.RunCommand(ctx(t), bson.D{{Key: "getParameter", Value: 1}, {Key: "noSuchParameter", Value: 1}}).Err(), 72)

	var ss bson.M
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "serverStatus", Value: 1}}).Decode(&ss); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"uptime", "connections", "opcounters", "mem", "cairn", "network"} {
		if _, ok := ss[k]; !ok {
			t.Errorf("serverStatus has no %s", k)
		}
	}

	// top counts per namespace.
	if _, err := client.Database("topdb").Collection("c").InsertOne(ctx(t), bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	tp, err := admin.RunCommand(ctx(t), bson.D{{Key: "top", Value: 1}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if ins, err := tp.LookupErr("totals", "topdb.c", "insert", "count"); err != nil || ins.AsInt64() != 1 {
		t.Fatalf("top = %v", tp)
	}
	// currentOp sees itself.
	var cur struct {
		Inprog []struct {
			Opid    int64
			Command bson.M
		}
	}
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "currentOp", Value: 1}, {Key: "command.currentOp", Value: bson.D{{Key: "$exists", Value: true}}}}).Decode(&cur); err != nil || len(cur.Inprog) != 1 || cur.Inprog[0].Opid == 0 {
		t.Fatalf("currentOp = %+v, %v", cur, err)
	}
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "killOp", Value: 1}, {Key: "op", Value: 123456}}).Err(); err != nil {
		t.Fatalf("killOp of a finished op: %v", err)
	}
	// Unknown commands answer CommandNotFound, never success.
	cmdErr(t, admin.RunCommand(ctx(t), bson.D{{Key: "noSuchCommand", Value: 1}}).Err(), 59)
	// Admin-only commands elsewhere are refused.
	cmdErr(t, client.Database("test").RunCommand(ctx(t), bson.D{{Key: "listDatabases", Value: 1}}).Err(), 13)
}
