package e2e

import (
	"context"
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestTransactionsRefused: as a standalone mongod, cairnd refuses
// transaction numbers (IllegalOperation), so a driver's transaction fails
// before anything is written.
func TestTransactionsRefused(t *testing.T) {
	_, client := connect(t)
	coll := client.Database("txn").Collection("c")
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx(t))
	_, err = sess.WithTransaction(ctx(t), func(sc context.Context) (any, error) {
		_, err := coll.InsertOne(sc, bson.D{{Key: "x", Value: 1}})
		return nil, err
	})
	var ce mongo.CommandError
	if !errors.As(err, &ce) || ce.Code != 20 || ce.Message != "Transaction numbers are only allowed on a replica set member or mongos" {
		t.Fatalf("WithTransaction = %v", err)
	}
	if n, err := coll.CountDocuments(ctx(t), bson.D{}); err != nil || n != 0 {
		t.Errorf("documents after the refused transaction: %d, %v", n, err)
	}
	// A session without a transaction works.
	err = mongo.WithSession(ctx(t), sess, func(sc context.Context) error {
		_, err := coll.InsertOne(sc, bson.D{{Key: "x", Value: 2}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReadConcernStandalone: snapshot and linearizable reads need a
// replica set, as on a standalone mongod; local and majority are served.
func TestReadConcernStandalone(t *testing.T) {
	_, client := connect(t)
	db := client.Database("rc")
	for level, code := range map[string]int32{"snapshot": 123, "linearizable": 123} {
		err := db.RunCommand(ctx(t), bson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: bson.D{{Key: "level", Value: level}}}}).Err()
		cmdErr(t, err, code)
	}
	for _, level := range []string{"local", "majority", "available"} {
		if err := db.RunCommand(ctx(t), bson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: bson.D{{Key: "level", Value: level}}}}).Err(); err != nil {
			t.Errorf("%s: %v", level, err)
		}
	}
}
