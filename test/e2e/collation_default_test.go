package e2e

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestCollectionDefaultCollation: a collection created with a collation
// compares strings by it in every command that gives none; its indexes
// take it; {locale: "simple"} asks for binary comparison.
func TestCollectionDefaultCollation(t *testing.T) {
	_, client := connect(t)
	db := client.Database("coll8n")
	ci := &options.Collation{Locale: "en", Strength: 2}
	if err := db.CreateCollection(ctx(t), "fruit", options.CreateCollection().SetCollation(ci)); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("fruit")
	if _, err := coll.InsertMany(ctx(t), []any{
		bson.D{{Key: "_id", Value: int32(1)}, {Key: "name", Value: "apple"}},
		bson.D{{Key: "_id", Value: int32(2)}, {Key: "name", Value: "Apple"}},
		bson.D{{Key: "_id", Value: int32(3)}, {Key: "name", Value: "banana"}},
		bson.D{{Key: "_id", Value: int32(4)}, {Key: "name", Value: "Cherry"}},
	}); err != nil {
		t.Fatal(err)
	}
	apple := bson.D{{Key: "name", Value: "APPLE"}}
	byID := options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})
	if got := textFind(t, coll, apple, byID); !equalIDs(got, []int32{1, 2}) {
		t.Errorf("find: %v", got)
	}
	if got := textFind(t, coll, apple, options.Find().SetCollation(&options.Collation{Locale: "simple"})); len(got) != 0 {
		t.Errorf("find with the simple collation: %v", got)
	}
	if got := textFind(t, coll, bson.D{{Key: "name", Value: bson.D{{Key: "$gt", Value: "B"}}}}, byID); !equalIDs(got, []int32{3, 4}) {
		t.Errorf("range: %v", got)
	}
	if n, err := coll.CountDocuments(ctx(t), apple); err != nil || n != 2 {
		t.Errorf("count = %d, %v", n, err)
	}
	var names []string
	if err := coll.Distinct(ctx(t), "name", bson.D{}).Decode(&names); err != nil || len(names) != 3 {
		t.Errorf("distinct = %v, %v", names, err)
	}
	res, err := coll.UpdateMany(ctx(t), apple, bson.D{{Key: "$set", Value: bson.D{{Key: "fruit", Value: true}}}})
	if err != nil || res.ModifiedCount != 2 {
		t.Errorf("updateMany = %+v, %v", res, err)
	}
	// The index takes the collection's collation, and serves the query.
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "name", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	icur, err := coll.Indexes().List(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var ixs []bson.Raw
	if err := icur.All(ctx(t), &ixs); err != nil || len(ixs) != 2 {
		t.Fatal(ixs, err)
	}
	if loc := ixs[1].Lookup("collation", "locale"); loc.Type != bson.TypeString || loc.StringValue() != "en" {
		t.Errorf("index = %v", ixs[1])
	}
	ex, err := db.RunCommand(ctx(t), bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "fruit"}, {Key: "filter", Value: apple}}}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if ix := ex.Lookup("queryPlanner", "winningPlan", "inputStage", "indexName"); ix.Type != bson.TypeString || ix.StringValue() != "name_1" {
		t.Errorf("plan: %v", ex.Lookup("queryPlanner", "winningPlan"))
	}
	cur, err := coll.Aggregate(ctx(t), bson.A{bson.D{{Key: "$match", Value: apple}}, bson.D{{Key: "$count", Value: "n"}}})
	if err != nil {
		t.Fatal(err)
	}
	var agg []struct{ N int32 }
	if err := cur.All(ctx(t), &agg); err != nil || len(agg) != 1 || agg[0].N != 2 {
		t.Errorf("aggregate = %v, %v", agg, err)
	}
	del, err := coll.DeleteMany(ctx(t), bson.D{{Key: "name", Value: "CHERRY"}})
	if err != nil || del.DeletedCount != 1 {
		t.Errorf("deleteMany = %+v, %v", del, err)
	}
	// listCollections shows the collation in full.
	colls, err := db.ListCollectionSpecifications(ctx(t), bson.D{{Key: "name", Value: "fruit"}})
	if err != nil || len(colls) != 1 {
		t.Fatal(colls, err)
	}
	if loc := colls[0].Options.Lookup("collation", "locale"); loc.Type != bson.TypeString || loc.StringValue() != "en" {
		t.Errorf("options = %v", colls[0].Options)
	}
	// Other collections keep binary comparison.
	plain := db.Collection("plain")
	if _, err := plain.InsertMany(ctx(t), []any{bson.D{{Key: "name", Value: "apple"}}, bson.D{{Key: "name", Value: "Apple"}}}); err != nil {
		t.Fatal(err)
	}
	if n, err := plain.CountDocuments(ctx(t), apple); err != nil || n != 0 {
		t.Errorf("plain count = %d, %v", n, err)
	}
}

// TestViewDefaultCollation: a view's collation is its queries' default;
// another one is refused; a view on a view shares it.
func TestViewDefaultCollation(t *testing.T) {
	_, client := connect(t)
	db := client.Database("v8n")
	src := db.Collection("src")
	if _, err := src.InsertMany(ctx(t), []any{bson.D{{Key: "_id", Value: int32(1)}, {Key: "n", Value: "a"}}, bson.D{{Key: "_id", Value: int32(2)}, {Key: "n", Value: "A"}}}); err != nil {
		t.Fatal(err)
	}
	ci := &options.Collation{Locale: "en", Strength: 2}
	if err := db.CreateView(ctx(t), "ci", "src", mongo.Pipeline{}, options.CreateView().SetCollation(ci)); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateView(ctx(t), "plain", "src", mongo.Pipeline{}); err != nil {
		t.Fatal(err)
	}
	a := bson.D{{Key: "n", Value: "a"}}
	if n, err := db.Collection("ci").CountDocuments(ctx(t), a); err != nil || n != 2 {
		t.Errorf("count on the collated view = %d, %v", n, err)
	}
	if got := textFind(t, db.Collection("ci"), a, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})); !equalIDs(got, []int32{1, 2}) {
		t.Errorf("find on the collated view: %v", got)
	}
	if n, err := db.Collection("plain").CountDocuments(ctx(t), a); err != nil || n != 1 {
		t.Errorf("count on the plain view = %d, %v", n, err)
	}
	_, err := db.Collection("ci").Find(ctx(t), a, options.Find().SetCollation(&options.Collation{Locale: "fr"}))
	cmdErr(t, err, 167)
	cmdErr(t, db.CreateView(ctx(t), "onCi", "ci", mongo.Pipeline{}), 167)
	if err := db.CreateView(ctx(t), "onCi", "ci", mongo.Pipeline{}, options.CreateView().SetCollation(ci)); err != nil {
		t.Errorf("a view on a view with the same collation: %v", err)
	}
}
