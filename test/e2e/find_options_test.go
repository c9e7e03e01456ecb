package e2e

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestFindOptionsRefused: find options Cairn does not run answer an error
// instead of a different result.
func TestFindOptionsRefused(t *testing.T) {
	_, client := connect(t)
	db := client.Database("fopts")
	if _, err := db.Collection("c").InsertOne(ctx(t), bson.D{{Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("c").Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		extra bson.D
		code  int32
	}{
		{bson.D{{Key: "min", Value: bson.D{{Key: "a", Value: 0}}}}, 51173},
		{bson.D{{Key: "max", Value: bson.D{{Key: "a", Value: 5}}}, {Key: "hint", Value: bson.D{{Key: "a", Value: 1}}}}, 238},
		{bson.D{{Key: "returnKey", Value: true}}, 238},
		{bson.D{{Key: "showRecordId", Value: true}}, 238},
	} {
		cmd := append(bson.D{{Key: "find", Value: "c"}}, tc.extra...)
		cmdErr(t, db.RunCommand(ctx(t), cmd).Err(), tc.code)
	}
	// Turned off, they change nothing.
	if err := db.RunCommand(ctx(t), bson.D{{Key: "find", Value: "c"}, {Key: "returnKey", Value: false}, {Key: "showRecordId", Value: false}}).Err(); err != nil {
		t.Error(err)
	}
}
