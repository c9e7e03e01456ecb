package e2e

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestReadConcernLevelRefused: an unknown readConcern level is refused
// (BadValue, mongod's IDL enumeration message) on a standalone too, and
// an unknown readConcern field answers IDLUnknownField.
func TestReadConcernLevelRefused(t *testing.T) {
	_, client := connect(t)
	db := client.Database("rc")
	for _, tc := range []struct {
		rc   bson.D
		code int32
	}{
		{bson.D{{Key: "level", Value: "banana"}}, 2},
		{bson.D{{Key: "level", Value: 1}}, 14},
		{bson.D{{Key: "levle", Value: "local"}}, 40415},
	} {
		err := db.RunCommand(ctx(t), bson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: tc.rc}}).Err()
		cmdErr(t, err, tc.code)
	}
	for _, level := range []string{"local", "available", "majority"} {
		if err := db.RunCommand(ctx(t), bson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: bson.D{{Key: "level", Value: level}}}}).Err(); err != nil {
			t.Errorf("level %s: %v", level, err)
		}
	}
}

// TestInvalidUpdatePipelineIsCommandError: an update whose pipeline does
// not parse fails the command (ok: 0), as mongod, while an unknown update
// operator stays a write error.
func TestInvalidUpdatePipelineIsCommandError(t *testing.T) {
	_, client := connect(t)
	coll := client.Database("up").Collection("c")
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	_, err := coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 1}}, bson.A{bson.D{{Key: "$notAStage", Value: bson.D{}}}})
	var we mongo.WriteException
	if errors.As(err, &we) && len(we.WriteErrors) > 0 {
		t.Fatalf("invalid pipeline answered as a write error: %v", err)
	}
	cmdErr(t, err, 40324)
	_, err = coll.UpdateOne(ctx(t), bson.D{}, bson.D{{Key: "$unsupported", Value: bson.D{{Key: "x", Value: 1}}}})
	if !errors.As(err, &we) || len(we.WriteErrors) != 1 {
		t.Fatalf("unknown operator: %v; want ok: 1 with writeErrors", err)
	}
}

// TestEmptyCollationIsNone: collation: {} is no collation, as mongod: the
// query runs, and a collection's default collation applies.
func TestEmptyCollationIsNone(t *testing.T) {
	_, client := connect(t)
	db := client.Database("coll0")
	if err := db.CreateCollection(ctx(t), "ci", options.CreateCollection().SetCollation(&options.Collation{Locale: "en", Strength: 2})); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("ci").InsertOne(ctx(t), bson.D{{Key: "s", Value: "ABC"}}); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []bson.D{
		{{Key: "find", Value: "ci"}, {Key: "filter", Value: bson.D{{Key: "s", Value: "abc"}}}, {Key: "collation", Value: bson.D{}}},
		{{Key: "count", Value: "ci"}, {Key: "query", Value: bson.D{{Key: "s", Value: "abc"}}}, {Key: "collation", Value: bson.D{}}},
		{{Key: "aggregate", Value: "ci"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "s", Value: "abc"}}}}}}, {Key: "cursor", Value: bson.D{}}, {Key: "collation", Value: bson.D{}}},
	} {
		raw, err := db.RunCommand(ctx(t), cmd).Raw()
		if err != nil {
			t.Errorf("%s with collation {}: %v", cmd[0].Key, err)
			continue
		}
		if cmd[0].Key == "count" && raw.Lookup("n").Int32() != 1 || cmd[0].Key != "count" && len(raw.Lookup("cursor", "firstBatch").Array()) == 0 {
			t.Errorf("%s with collation {} did not use the default collation: %v", cmd[0].Key, raw)
		}
	}
	res, err := db.Collection("ci").UpdateOne(ctx(t), bson.D{{Key: "s", Value: "abc"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}},
		options.UpdateOne().SetCollation(&options.Collation{}))
	if err != nil || res.MatchedCount != 1 {
		t.Errorf("update with collation {}: %+v, %v", res, err)
	}
}

// TestNearInUpsertFilter: $near and $nearSphere in an upsert's filter
// select as in a find and, when nothing matches, insert a document
// without the geo field, as mongod.
func TestNearInUpsertFilter(t *testing.T) {
	_, client := connect(t)
	coll := client.Database("geoup").Collection("places")
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "loc", Value: "2dsphere"}}}); err != nil {
		t.Fatal(err)
	}
	point := bson.D{{Key: "type", Value: "Point"}, {Key: "coordinates", Value: bson.A{2.0, 48.0}}}
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1}, {Key: "loc", Value: point}}); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"$near", "$nearSphere"} {
		near := bson.D{{Key: "loc", Value: bson.D{{Key: op, Value: bson.D{{Key: "$geometry", Value: point}, {Key: "$maxDistance", Value: 1000}}}}}}
		res, err := coll.UpdateOne(ctx(t), near, bson.D{{Key: "$inc", Value: bson.D{{Key: "hits", Value: 1}}}}, options.UpdateOne().SetUpsert(true))
		if err != nil || res.MatchedCount != 1 {
			t.Errorf("%s upsert matching: %+v, %v", op, res, err)
		}
		far := bson.D{{Key: "tag", Value: op}, {Key: "loc", Value: bson.D{{Key: op, Value: bson.D{{Key: "$geometry", Value: bson.D{{Key: "type", Value: "Point"}, {Key: "coordinates", Value: bson.A{-70.0, -40.0}}}}, {Key: "$maxDistance", Value: 10}}}}}}
		res, err = coll.UpdateOne(ctx(t), far, bson.D{{Key: "$set", Value: bson.D{{Key: "new", Value: true}}}}, options.UpdateOne().SetUpsert(true))
		if err != nil || res.UpsertedID == nil {
			t.Errorf("%s upsert inserting: %+v, %v", op, res, err)
			continue
		}
		var got bson.M
		if err := coll.FindOne(ctx(t), bson.D{{Key: "_id", Value: res.UpsertedID}}).Decode(&got); err != nil || got["tag"] != op || got["new"] != true || got["loc"] != nil {
			t.Errorf("%s upserted %v, %v; want {tag, new} without loc", op, got, err)
		}
	}
}
