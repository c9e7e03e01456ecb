package e2e

import (
	"errors"
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

// TestUpdateConstants: an update statement's c gives its pipeline
// variables, beside the command's let.
func TestUpdateConstants(t *testing.T) {
	_, client := connect(t)
	db := client.Database("uconst")
	coll := db.Collection("c")
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	stmt := bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}},
		{Key: "u", Value: bson.A{bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: "$$v"}, {Key: "y", Value: "$$w"}}}}}},
		{Key: "c", Value: bson.D{{Key: "v", Value: 5}}}}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{stmt}},
		{Key: "let", Value: bson.D{{Key: "w", Value: "let"}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	var got struct {
		X int32
		Y string
	}
	if err := coll.FindOne(ctx(t), bson.D{}).Decode(&got); err != nil || got.X != 5 || got.Y != "let" {
		t.Errorf("after the update: %+v, %v", got, err)
	}
	bad := bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "c", Value: bson.D{{Key: "v", Value: 5}}}}
	err := db.RunCommand(ctx(t), bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bad}}}).Err()
	var we mongo.WriteException
	if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 51198 {
		t.Errorf("c with a modifier update: %v", err)
	}
}

// TestIgnoreUnknownIndexOptions: createIndexes refuses an option it does
// not know (197) unless ignoreUnknownIndexOptions drops it.
func TestIgnoreUnknownIndexOptions(t *testing.T) {
	_, client := connect(t)
	db := client.Database("ixopts")
	spec := bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}, {Key: "bogus", Value: true}}
	cmdErr(t, db.RunCommand(ctx(t), bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{spec}}}).Err(), 197)
	if err := db.RunCommand(ctx(t), bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{spec}}, {Key: "ignoreUnknownIndexOptions", Value: true}}).Err(); err != nil {
		t.Fatal(err)
	}
	cur, err := db.Collection("c").Indexes().List(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var ixs []bson.Raw
	if err := cur.All(ctx(t), &ixs); err != nil || len(ixs) != 2 {
		t.Fatal(ixs, err)
	}
	if _, err := ixs[1].LookupErr("bogus"); err == nil {
		t.Errorf("the unknown option was kept: %v", ixs[1])
	}
}
