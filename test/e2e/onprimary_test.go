package e2e

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

func onPrimaryWrite(mode any, data bson.D) bson.D {
	cmd := bson.D{{Key: "configureFailPoint", Value: "onPrimaryTransactionalWrite"}, {Key: "mode", Value: mode}}
	if data != nil {
		cmd = append(cmd, bson.E{Key: "data", Value: data})
	}
	return cmd
}

// setPoint runs configureFailPoint on a replica set (whose replies carry
// $clusterTime) and returns its count.
func setPoint(t *testing.T, admin *mongo.Database, cmd bson.D) int64 {
	t.Helper()
	var res struct{ Count int64 }
	if err := admin.RunCommand(ctx(t), cmd).Decode(&res); err != nil {
		t.Fatalf("%v: %v", cmd, err)
	}
	return res.Count
}

// TestOnPrimaryTransactionalWrite drives mongod's onPrimaryTransactionalWrite
// fail point through the Go driver's retryable writes: it fires on a
// retryable write's statement before its commit, closing the connection
// (the write committed: the retry answers the recorded result) or failing
// it with failBeforeCommitExceptionCode (the write rolled back).
func TestOnPrimaryTransactionalWrite(t *testing.T) {
	srv := cairndtest.Start(t, cairndtest.DefaultMode, "--setParameter", "enableTestCommands=1")
	client := dial(t, srv.URI)
	admin := client.Database("admin")
	coll := client.Database("opw").Collection("c")

	t.Run("committed, connection closed, retried once", func(t *testing.T) {
		setPoint(t, admin, onPrimaryWrite(bson.D{{Key: "times", Value: 1}}, nil))
		if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1}}); err != nil {
			t.Fatal(err)
		}
		res, err := coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "x", Value: 1}}}})
		if err != nil {
			t.Fatal(err)
		}
		if res.ModifiedCount != 0 && res.ModifiedCount != 1 {
			t.Errorf("modified %d", res.ModifiedCount)
		}
		if n := setPoint(t, admin, onPrimaryWrite("off", nil)); n != 1 {
			t.Errorf("fail point fired %d times, want 1", n)
		}
	})

	t.Run("the retry of a committed findAndModify answers its image", func(t *testing.T) {
		setPoint(t, admin, onPrimaryWrite(bson.D{{Key: "times", Value: 1}}, nil))
		var doc bson.M
		err := coll.FindOneAndUpdate(ctx(t), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "x", Value: 1}}}},
			options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&doc)
		if err != nil {
			t.Fatal(err)
		}
		if intOf(doc["x"]) != 2 {
			t.Errorf("returned %v, want x: 2 (each $inc applied once)", doc)
		}
		setPoint(t, admin, onPrimaryWrite("off", nil))
	})

	t.Run("failBeforeCommit rolls back, the retry applies it", func(t *testing.T) {
		setPoint(t, admin, onPrimaryWrite(bson.D{{Key: "times", Value: 1}}, bson.D{{Key: "failBeforeCommitExceptionCode", Value: 1}}))
		if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 2}}); err != nil {
			t.Fatal(err)
		}
		if n := count(t, coll, bson.D{{Key: "_id", Value: 2}}); n != 1 {
			t.Errorf("documents _id 2: %d", n)
		}
	})

	t.Run("failBeforeCommit without closeConnection answers the error", func(t *testing.T) {
		setPoint(t, admin, onPrimaryWrite("alwaysOn", bson.D{{Key: "closeConnection", Value: false}, {Key: "failBeforeCommitExceptionCode", Value: 2}}))
		_, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 3}})
		cmdErr(t, err, 2)
		var se mongo.ServerError
		if errors.As(err, &se) && se.HasErrorLabel("RetryableWriteError") {
			t.Errorf("BadValue labelled RetryableWriteError: %v", err)
		}
		if n := count(t, coll, bson.D{{Key: "_id", Value: 3}}); n != 0 {
			t.Errorf("documents _id 3 after the failed write: %d", n)
		}
		setPoint(t, admin, onPrimaryWrite("off", nil))
	})

	t.Run("a retriable code is labelled RetryableWriteError and retried", func(t *testing.T) {
		// 91 (ShutdownInProgress) is retriable: the driver sees the label,
		// retries once, and the second attempt (the point being off) applies.
		setPoint(t, admin, onPrimaryWrite(bson.D{{Key: "times", Value: 1}}, bson.D{{Key: "closeConnection", Value: false}, {Key: "failBeforeCommitExceptionCode", Value: 91}}))
		if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 4}}); err != nil {
			t.Fatal(err)
		}
		if n := count(t, coll, bson.D{{Key: "_id", Value: 4}}); n != 1 {
			t.Errorf("documents _id 4: %d", n)
		}
		// Without the driver's retry, the reply itself carries the label.
		setPoint(t, admin, onPrimaryWrite(bson.D{{Key: "times", Value: 1}}, bson.D{{Key: "closeConnection", Value: false}, {Key: "failBeforeCommitExceptionCode", Value: 91}}))
		_, err := retryable(t, coll.Database(), bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 5}}}}}, newLSID(t), 1)
		var se mongo.ServerError
		if !errors.As(err, &se) || !se.HasErrorCode(91) || !se.HasErrorLabel("RetryableWriteError") {
			t.Errorf("insert with txnNumber: %v, want 91 labelled RetryableWriteError", err)
		}
	})

	t.Run("not a retryable write: not evaluated", func(t *testing.T) {
		before := setPoint(t, admin, onPrimaryWrite("alwaysOn", bson.D{{Key: "failBeforeCommitExceptionCode", Value: 1}}))
		if _, err := coll.UpdateMany(ctx(t), bson.D{}, bson.D{{Key: "$set", Value: bson.D{{Key: "m", Value: 1}}}}); err != nil {
			t.Fatal(err)
		}
		if n := setPoint(t, admin, onPrimaryWrite("off", nil)) - before; n != 0 {
			t.Errorf("fired %d times on updateMany (no txnNumber)", n)
		}
	})

	t.Run("bad data", func(t *testing.T) {
		err := admin.RunCommand(ctx(t), onPrimaryWrite("alwaysOn", bson.D{{Key: "closeConnection", Value: 1}})).Err()
		cmdErr(t, err, 14)
	})
}
