package e2e

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func TestDocumentValidation(t *testing.T) {
	srv, client := connect(t)
	db := client.Database("valid")
	err := db.CreateCollection(ctx(t), "c", options.CreateCollection().SetValidator(bson.D{{Key: "x", Value: bson.D{{Key: "$type", Value: "string"}}}}))
	if err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("c")
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: "ok"}}); err != nil {
		t.Fatal(err)
	}
	_, err = coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 2}, {Key: "x", Value: 5}})
	var we mongo.WriteException
	if !errors.As(err, &we) || we.WriteErrors[0].Code != 121 {
		t.Fatalf("invalid insert: %v", err)
	}
	if id, err := we.WriteErrors[0].Details.LookupErr("failingDocumentId"); err != nil || id.Int32() != 2 {
		t.Fatalf("errInfo = %v", we.WriteErrors[0].Details)
	}
	// Updates are validated too; bypassDocumentValidation skips it.
	_, err = coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}})
	if !errors.As(err, &we) || we.WriteErrors[0].Code != 121 {
		t.Fatalf("invalid update: %v", err)
	}
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 3}, {Key: "x", Value: 5}}, options.InsertOne().SetBypassDocumentValidation(true)); err != nil {
		t.Fatalf("bypass: %v", err)
	}
	// moderate: documents that already failed may be updated.
	if err := db.RunCommand(ctx(t), bson.D{{Key: "collMod", Value: "c"}, {Key: "validationLevel", Value: "moderate"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 3}}, bson.D{{Key: "$set", Value: bson.D{{Key: "y", Value: 1}}}}); err != nil {
		t.Fatalf("moderate update of an invalid document: %v", err)
	}
	// warn: the write succeeds and mongod's warning (STORAGE, 20294) is
	// logged with the namespace, the document and its errInfo.
	if err := db.RunCommand(ctx(t), bson.D{{Key: "collMod", Value: "c"}, {Key: "validationAction", Value: "warn"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 4}, {Key: "x", Value: 7}}); err != nil {
		t.Fatalf("insert under warn: %v", err)
	}
	warned := func() map[string]any {
		for _, line := range strings.Split(srv.Logs(), "\n") {
			var l map[string]any
			if json.Unmarshal([]byte(line), &l) == nil && l["msg"] == "Document would fail validation" {
				return l
			}
		}
		return nil
	}
	var l map[string]any
	for deadline := time.Now().Add(5 * time.Second); l == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		l = warned()
	}
	if l == nil || l["s"] != "W" || l["c"] != "STORAGE" || l["id"] != float64(20294) {
		t.Fatalf("warning line = %v", l)
	}
	attr := l["attr"].(map[string]any)
	doc, _ := attr["document"].(map[string]any)
	info, _ := attr["errInfo"].(map[string]any)
	if attr["namespace"] != "valid.c" || doc["_id"] != float64(4) || doc["x"] != float64(7) || info["failingDocumentId"] != float64(4) {
		t.Errorf("warning attr = %v", attr)
	}
	// $jsonSchema validators: MongoDB's JSON Schema, refused documents
	// name the operator in errInfo.
	schema := bson.D{{Key: "$jsonSchema", Value: bson.D{
		{Key: "bsonType", Value: "object"},
		{Key: "required", Value: bson.A{"name"}},
		{Key: "properties", Value: bson.D{
			{Key: "name", Value: bson.D{{Key: "bsonType", Value: "string"}, {Key: "minLength", Value: 1}}},
			{Key: "age", Value: bson.D{{Key: "bsonType", Value: "int"}, {Key: "minimum", Value: 0}}},
			{Key: "tags", Value: bson.D{{Key: "bsonType", Value: "array"}, {Key: "items", Value: bson.D{{Key: "bsonType", Value: "string"}}}}},
		}},
	}}}
	if err := db.CreateCollection(ctx(t), "people", options.CreateCollection().SetValidator(schema)); err != nil {
		t.Fatal(err)
	}
	people := db.Collection("people")
	if _, err := people.InsertOne(ctx(t), bson.D{{Key: "name", Value: "ann"}, {Key: "age", Value: int32(30)}, {Key: "tags", Value: bson.A{"a"}}}); err != nil {
		t.Fatalf("valid person: %v", err)
	}
	for _, bad := range []bson.D{
		{{Key: "age", Value: int32(3)}},
		{{Key: "name", Value: ""}},
		{{Key: "name", Value: "bob"}, {Key: "age", Value: int32(-1)}},
		{{Key: "name", Value: "bob"}, {Key: "age", Value: 3.5}},
		{{Key: "name", Value: "bob"}, {Key: "tags", Value: bson.A{"a", 1}}},
	} {
		_, err := people.InsertOne(ctx(t), bad)
		if !errors.As(err, &we) || we.WriteErrors[0].Code != 121 {
			t.Errorf("insert %v: %v", bad, err)
			continue
		}
		if op, err := we.WriteErrors[0].Details.LookupErr("details", "operatorName"); err != nil || op.StringValue() != "$jsonSchema" {
			t.Errorf("errInfo = %v", we.WriteErrors[0].Details)
		}
	}
	// The same schema as a query.
	if n, err := people.CountDocuments(ctx(t), schema); err != nil || n != 1 {
		t.Errorf("count by schema = %d, %v", n, err)
	}
	cmdErr(t, db.CreateCollection(ctx(t), "bad", options.CreateCollection().SetValidator(bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "format", Value: "email"}}}})), 9)
	// The options show in listCollections.
	specs, err := db.ListCollectionSpecifications(ctx(t), bson.D{{Key: "name", Value: "c"}})
	if err != nil || len(specs) != 1 || specs[0].Options.Lookup("validationLevel").StringValue() != "moderate" {
		t.Fatalf("listCollections options = %+v, %v", specs, err)
	}
	// A bad validator is refused when set.
	cmdErr(t, db.RunCommand(ctx(t), bson.D{{Key: "collMod", Value: "c"}, {Key: "validator", Value: bson.D{{Key: "$bogus", Value: 1}}}}).Err(), 2)
	// collMod hides an index.
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "x", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "collMod", Value: "c"}, {Key: "index", Value: bson.D{{Key: "name", Value: "x_1"}, {Key: "hidden", Value: true}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	cur, err := coll.Indexes().List(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var idx []bson.M
	if err := cur.All(ctx(t), &idx); err != nil || len(idx) != 2 || idx[1]["hidden"] != true {
		t.Fatalf("hidden index = %+v, %v", idx, err)
	}
}
