package e2e

import (
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestKillOpEndsUpdate: killOp stops a long multi-document update while
// it applies (not only while it reads), the update answers Interrupted
// (11601), and none of its documents is updated: the command's
// transaction is rolled back.
func TestKillOpEndsUpdate(t *testing.T) {
	_, client := connect(t)
	c := client.Database("killupd").Collection("c")
	var docs []any
	for i := range 2000 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}})
	}
	if _, err := c.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	// Each document costs a 300,000-step $reduce: minutes for all of
	// them, far longer than the test waits.
	slow := mongo.Pipeline{{{Key: "$set", Value: bson.D{{Key: "s", Value: bson.D{{Key: "$reduce", Value: bson.D{
		{Key: "input", Value: bson.D{{Key: "$range", Value: bson.A{0, 300_000}}}},
		{Key: "initialValue", Value: 0},
		{Key: "in", Value: bson.D{{Key: "$add", Value: bson.A{"$$value", 1}}}},
	}}}}}}}}
	done := make(chan error, 1)
	go func() {
		_, err := c.UpdateMany(ctx(t), bson.D{}, slow)
		done <- err
	}()
	admin := client.Database("admin")
	var opid int64
	for deadline := time.Now().Add(20 * time.Second); opid == 0; time.Sleep(20 * time.Millisecond) {
		var cur struct {
			Inprog []struct{ Opid int64 }
		}
		filter := bson.D{{Key: "currentOp", Value: 1}, {Key: "command.update", Value: "c"}}
		if err := admin.RunCommand(ctx(t), filter).Decode(&cur); err != nil {
			t.Fatal(err)
		}
		if len(cur.Inprog) == 1 {
			opid = cur.Inprog[0].Opid
		}
		select {
		case err := <-done:
			t.Fatalf("the update ended before it was killed: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the update never showed in currentOp")
		}
	}
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "killOp", Value: 1}, {Key: "op", Value: opid}}).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var ce mongo.CommandError
		if !errors.As(err, &ce) || ce.Code != 11601 {
			t.Fatalf("killed update answered %v, want Interrupted (11601)", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the update still runs 30 s after killOp")
	}
	n, err := c.CountDocuments(ctx(t), bson.D{{Key: "s", Value: bson.D{{Key: "$exists", Value: true}}}})
	if err != nil || n != 0 {
		t.Fatalf("%d documents updated by the killed update (%v), want 0", n, err)
	}
}

// TestMaxTimeMSEndsAddToSet: an $addToSet of 400,000 values with
// maxTimeMS: 50 answers MaxTimeMSExpired (50) and leaves the document as
// it was; the same update without a limit applies.
func TestMaxTimeMSEndsAddToSet(t *testing.T) {
	_, client := connect(t)
	db := client.Database("maxtimeupd")
	c := db.Collection("c")
	if _, err := c.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.A{-1}}}); err != nil {
		t.Fatal(err)
	}
	const n = 400_000
	each := make(bson.A, n)
	for i := range each {
		each[i] = int32(i)
	}
	stmt := bson.D{
		{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}},
		{Key: "u", Value: bson.D{{Key: "$addToSet", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$each", Value: each}}}}}}},
	}
	update := bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{stmt}}}
	err := db.RunCommand(ctx(t), append(update, bson.E{Key: "maxTimeMS", Value: 50})).Err()
	cmdErr(t, err, 50)
	var got struct{ A []int32 }
	if err := c.FindOne(ctx(t), bson.D{}).Decode(&got); err != nil || len(got.A) != 1 {
		t.Fatalf("after the expired update the array holds %d values (%v), want 1", len(got.A), err)
	}
	var res struct{ NModified int32 }
	if err := db.RunCommand(ctx(t), update).Decode(&res); err != nil || res.NModified != 1 {
		t.Fatalf("update without maxTimeMS: %+v, %v", res, err)
	}
	if err := c.FindOne(ctx(t), bson.D{}).Decode(&got); err != nil || len(got.A) != n+1 {
		t.Fatalf("after the update the array holds %d values (%v), want %d", len(got.A), err, n+1)
	}
}
