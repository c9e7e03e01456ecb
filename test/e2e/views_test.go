package e2e

import (
	"errors"
	"reflect"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func TestViews(t *testing.T) {
	_, client := connect(t)
	db := client.Database("views")
	src := db.Collection("src")
	for i := 0; i < 20; i++ {
		if _, err := src.InsertOne(ctx(t), bson.D{{Key: "_id", Value: i}, {Key: "g", Value: i % 4}, {Key: "tags", Value: bson.A{"t", i % 2}}}); err != nil {
			t.Fatal(err)
		}
	}
	err := db.CreateView(ctx(t), "big", "src", mongo.Pipeline{{{Key: "$match", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: 10}}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	// A view over a view.
	if err := db.CreateView(ctx(t), "bigEven", "big", mongo.Pipeline{{{Key: "$match", Value: bson.D{{Key: "g", Value: bson.D{{Key: "$in", Value: bson.A{0, 2}}}}}}}}); err != nil {
		t.Fatal(err)
	}
	// $out and $merge may not be part of a view (167).
	cmdErr(t, db.CreateView(ctx(t), "bad", "src", mongo.Pipeline{{{Key: "$out", Value: "x"}}}), 167)
	view := db.Collection("big")
	cur, err := view.Find(ctx(t), bson.D{{Key: "g", Value: 1}}, options.Find().SetSort(bson.D{{Key: "_id", Value: -1}}).SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.D
	if err := cur.All(ctx(t), &got); err != nil {
		t.Fatal(err)
	}
	want := []bson.D{{{Key: "_id", Value: int32(17)}}, {{Key: "_id", Value: int32(13)}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("find on view = %v, want %v", got, want)
	}
	if n, err := view.CountDocuments(ctx(t), bson.D{}); err != nil || n != 10 {
		t.Fatalf("countDocuments on view = %d, %v", n, err)
	}
	if n, err := view.EstimatedDocumentCount(ctx(t)); err != nil || n != 10 {
		t.Fatalf("estimatedDocumentCount on view = %d, %v", n, err)
	}
	if n, err := db.Collection("bigEven").CountDocuments(ctx(t), bson.D{}); err != nil || n != 5 {
		t.Fatalf("count on a view of a view = %d, %v", n, err)
	}
	var gs []int32
	if err := view.Distinct(ctx(t), "g", bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: 13}}}}).Decode(&gs); err != nil || !reflect.DeepEqual(gs, []int32{0, 2, 3}) {
		t.Fatalf("distinct on view = %v, %v", gs, err)
	}
	// Writes and index builds on a view are refused.
	_, err = view.InsertOne(ctx(t), bson.D{{Key: "x", Value: 1}})
	var we mongo.WriteException
	if !errors.As(err, &we) || we.WriteErrors[0].Code != 166 {
		cmdErr(t, err, 166)
	}
	_, err = view.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "g", Value: 1}}})
	cmdErr(t, err, 166)
	// listCollections shows the view.
	specs, err := db.ListCollectionSpecifications(ctx(t), bson.D{{Key: "name", Value: "big"}})
	if err != nil || len(specs) != 1 || specs[0].Type != "view" {
		t.Fatalf("listCollections = %+v, %v", specs, err)
	}
	// Dropping the view leaves the collection.
	if err := view.Drop(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if n, _ := src.CountDocuments(ctx(t), bson.D{}); n != 20 {
		t.Fatalf("source has %d documents after dropping the view", n)
	}
}
