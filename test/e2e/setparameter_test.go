package e2e

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestSetParameterAtRunTime: every parameter getParameter lists that
// mongod sets at run time is set by setParameter (answering the old value
// as was, read back by getParameter), the startup-only ones are refused,
// and ttlMonitorSleepSecs takes effect on the running TTL monitor.
func TestSetParameterAtRunTime(t *testing.T) {
	_, client := connect(t)
	admin := client.Database("admin")
	get := func(name string) any {
		t.Helper()
		var out bson.M
		if err := admin.RunCommand(ctx(t), bson.D{{Key: "getParameter", Value: 1}, {Key: name, Value: 1}}).Decode(&out); err != nil {
			t.Fatalf("getParameter %s: %v", name, err)
		}
		return out[name]
	}
	for _, tc := range []struct {
		name     string
		value    any
		was, now any
	}{
		{"ttlMonitorSleepSecs", 1, int32(60), int32(1)},
		{"transactionLifetimeLimitSeconds", 30, int32(60), int32(30)},
		{"cursorTimeoutMillis", int64(120000), int64(600000), int64(120000)},
		{"internalQueryMaxBlockingSortMemoryUsageBytes", 50 << 20, int32(100 << 20), int32(50 << 20)},
		{"minSnapshotHistoryWindowInSeconds", 10, int32(300), int32(10)},
		{"logLevel", 1, int32(0), int32(1)},
	} {
		var out bson.M
		if err := admin.RunCommand(ctx(t), bson.D{{Key: "setParameter", Value: 1}, {Key: tc.name, Value: tc.value}}).Decode(&out); err != nil {
			t.Errorf("setParameter %s: %v", tc.name, err)
			continue
		}
		if out["was"] != tc.was {
			t.Errorf("setParameter %s: was %v (%T), want %v", tc.name, out["was"], out["was"], tc.was)
		}
		if got := get(tc.name); got != tc.now {
			t.Errorf("getParameter %s after setParameter = %v (%T), want %v", tc.name, got, got, tc.now)
		}
	}
	// Put back the process-wide sort budget for the other tests.
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "setParameter", Value: 1}, {Key: "internalQueryMaxBlockingSortMemoryUsageBytes", Value: 100 << 20}}).Err(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cmd  bson.D
		code int32
	}{
		{bson.D{{Key: "setParameter", Value: 1}, {Key: "ttlMonitorSleepSecs", Value: 0}}, 2},
		{bson.D{{Key: "setParameter", Value: 1}, {Key: "cursorTimeoutMillis", Value: "x"}}, 2},
		{bson.D{{Key: "setParameter", Value: 1}, {Key: "maxBSONDepth", Value: 10}}, 2},
		{bson.D{{Key: "setParameter", Value: 1}, {Key: "enableTestCommands", Value: true}}, 2},
		{bson.D{{Key: "setParameter", Value: 1}, {Key: "noSuchParameter", Value: 1}}, 72},
	} {
		cmdErr(t, admin.RunCommand(ctx(t), tc.cmd).Err(), tc.code)
	}
	// The TTL monitor, started with the default 60 s, now runs every second.
	coll := client.Database("ttl").Collection("rt")
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1}, {Key: "at", Value: time.Now().Add(-time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "at", Value: 1}}, Options: options.Index().SetExpireAfterSeconds(60)}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for coll.FindOne(ctx(t), bson.D{}).Err() != mongo.ErrNoDocuments {
		if time.Now().After(deadline) {
			t.Fatal("ttlMonitorSleepSecs set to 1 at run time: the expired document was not deleted within 15 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
