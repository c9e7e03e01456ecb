package e2e

import (
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func TestIndexes(t *testing.T) {
	_, client := connect(t)
	db := client.Database("idx")
	coll := db.Collection("people")
	for i := 0; i < 100; i++ {
		if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: i}, {Key: "email", Value: "u" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)}, {Key: "tags", Value: bson.A{"t", i % 3}}}); err != nil {
			t.Fatal(err)
		}
	}
	name, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "email", Value: 1}}, Options: options.Index().SetUnique(true)})
	if err != nil || name != "email_1" {
		t.Fatalf("createIndex = %q, %v", name, err)
	}
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "tags", Value: 1}, {Key: "_id", Value: -1}}}); err != nil {
		t.Fatal(err)
	}
	specs, err := coll.Indexes().ListSpecifications(ctx(t))
	if err != nil || len(specs) != 3 || specs[1].Name != "email_1" || specs[1].Unique == nil || !*specs[1].Unique {
		t.Fatalf("listIndexes = %+v, %v", specs, err)
	}
	// Unique violations: insert, update, and the error names the index.
	_, err = coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1000}, {Key: "email", Value: "ua"}})
	var we mongo.WriteException
	if !errors.As(err, &we) || we.WriteErrors[0].Code != 11000 || !strings.Contains(we.WriteErrors[0].Message, "index: email_1 dup key: { email: \"ua\" }") {
		t.Fatalf("duplicate email insert: %v", err)
	}
	_, err = coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "email", Value: "ua"}}}})
	if !errors.As(err, &we) || we.WriteErrors[0].Code != 11000 {
		t.Fatalf("duplicate email update: %v", err)
	}
	// Changing a value frees the old one.
	if _, err := coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 0}}, bson.D{{Key: "$set", Value: bson.D{{Key: "email", Value: "new"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1001}, {Key: "email", Value: "ua"}}); err != nil {
		t.Fatalf("re-using a freed value: %v", err)
	}
	// Deleting frees values too.
	if _, err := coll.DeleteOne(ctx(t), bson.D{{Key: "_id", Value: 1001}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1002}, {Key: "email", Value: "ua"}}); err != nil {
		t.Fatalf("re-using a deleted value: %v", err)
	}
	// Parallel arrays in a compound index are refused.
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	_, err = coll.InsertOne(ctx(t), bson.D{{Key: "a", Value: bson.A{1}}, {Key: "b", Value: bson.A{2}}})
	if !errors.As(err, &we) || we.WriteErrors[0].Code != 171 {
		t.Fatalf("parallel arrays: %v", err)
	}
	// Building a unique index over duplicates fails and leaves no index.
	_, err = coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "tags", Value: 1}}, Options: options.Index().SetUnique(true)})
	cmdErr(t, err, 11000)
	// Same key, other name: IndexOptionsConflict; same name, other key: IndexKeySpecsConflict.
	_, err = coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "email", Value: 1}}, Options: options.Index().SetUnique(true).SetName("other")})
	cmdErr(t, err, 85)
	_, err = coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "zzz", Value: 1}}, Options: options.Index().SetName("email_1")})
	cmdErr(t, err, 86)
	// Dropping: by name, by key, "*"; the _id index stays.
	if err := coll.Indexes().DropOne(ctx(t), "email_1"); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 2000}, {Key: "email", Value: "ua"}}); err != nil {
		t.Fatalf("after dropping the unique index: %v", err)
	}
	cmdErr(t, coll.Indexes().DropOne(ctx(t), "email_1"), 27)
	cmdErr(t, coll.Indexes().DropOne(ctx(t), "_id_"), 72)
	if err := db.RunCommand(ctx(t), bson.D{{Key: "dropIndexes", Value: "people"}, {Key: "index", Value: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := coll.Indexes().DropAll(ctx(t)); err != nil {
		t.Fatal(err)
	}
	specs, _ = coll.Indexes().ListSpecifications(ctx(t))
	if len(specs) != 1 || specs[0].Name != "_id_" {
		t.Fatalf("after dropping all: %+v", specs)
	}
}
