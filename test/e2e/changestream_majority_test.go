package e2e

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// TestChangeStreamMajorityCommitted: on a set of three members, a change
// stream on the primary returns only majority-committed events, as
// mongod's. With the primary cut off from both secondaries, a w: 1 insert
// it acknowledges is not returned by two awaiting getMores (the set has
// not committed it, and may roll it back); once the links heal, the
// stream returns it if the set kept it (the primary was not replaced in
// the meantime), and never when it was rolled back.
func TestChangeStreamMajorityCommitted(t *testing.T) {
	_, seed := seededRand(t)
	s := startRaftSetWith(t, 3, nil, seed)
	p := s.primary()
	t.Logf("set up")
	c := s.direct(p)
	db := c.Database("csmaj")
	if err := db.CreateCollection(ctx(t), "c"); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("c", options.Collection().SetWriteConcern(writeconcern.Majority()))
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	cs, err := coll.Watch(ctx(t), mongo.Pipeline{}, options.ChangeStream().SetMaxAwaitTime(150*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(context.Background())

	s.isolate(p)
	w1 := db.Collection("c", options.Collection().SetWriteConcern(writeconcern.W1()))
	if _, err := w1.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatalf("w: 1 insert on the isolated primary: %v\n%s", err, s.logs())
	}
	for i := range 2 {
		if cs.TryNext(ctx(t)) {
			t.Fatalf("getMore %d on the isolated primary returned an event the set has not committed: %s", i, cs.Current)
		}
		if err := cs.Err(); err != nil {
			t.Logf("getMore %d: %v (the primary stepped down)", i, err)
			break
		}
	}
	t.Logf("isolated phase done")
	s.heal()
	s.waitSameData("csmaj")
	t.Logf("same data")
	q := s.waitHealthy(3)
	t.Logf("healthy")
	n, err := s.direct(q).Database("csmaj").Collection("c").CountDocuments(ctx(t), bson.D{{Key: "_id", Value: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Logf("the w: 1 insert was rolled back (primary %d replaced by %d): the stream rightly never returned it", p, q)
		return
	}
	next, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if !cs.Next(next) {
		t.Fatalf("the committed insert never reached the stream: %v\n%s", cs.Err(), s.logs())
	}
	var ev struct {
		DocumentKey struct {
			ID int32 `bson:"_id"`
		} `bson:"documentKey"`
	}
	if err := bson.Unmarshal(cs.Current, &ev); err != nil || ev.DocumentKey.ID != 1 {
		t.Fatalf("event %s, want the insert of _id 1", cs.Current)
	}
}
