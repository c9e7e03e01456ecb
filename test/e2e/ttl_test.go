package e2e

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// TestTTLIndex: with ttlMonitorSleepSecs=1, a TTL index deletes expired
// documents within seconds and keeps the others.
func TestTTLIndex(t *testing.T) {
	srv := cairndtest.Start(t, "--setParameter", "ttlMonitorSleepSecs=1")
	client := dial(t, srv.URI)
	coll := client.Database("ttl").Collection("sessions")
	now := time.Now()
	if _, err := coll.InsertMany(ctx(t), []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "at", Value: now.Add(-2 * time.Hour)}},
		bson.D{{Key: "_id", Value: 2}, {Key: "at", Value: now}},
		bson.D{{Key: "_id", Value: 3}, {Key: "at", Value: "not a date"}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "at", Value: 1}}, Options: options.Index().SetExpireAfterSeconds(3600)}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		if err := coll.FindOne(ctx(t), bson.D{{Key: "_id", Value: 1}}).Err(); err == mongo.ErrNoDocuments {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the expired document was not deleted within 15 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n, _ := coll.CountDocuments(ctx(t), bson.D{}); n != 2 {
		t.Fatalf("%d documents left, want 2", n)
	}
}
