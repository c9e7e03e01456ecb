package e2e

import (
	"errors"
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestTextWrites runs $text in the filters of update, delete,
// findAndModify and distinct, which read the text index as find does.
func TestTextWrites(t *testing.T) {
	_, client := connect(t)
	db := client.Database("textw")
	coll := db.Collection("articles")
	docs := []any{
		bson.D{{Key: "_id", Value: int32(1)}, {Key: "subject", Value: "coffee"}, {Key: "author", Value: "xyz"}},
		bson.D{{Key: "_id", Value: int32(2)}, {Key: "subject", Value: "Coffee Shopping"}, {Key: "author", Value: "efg"}},
		bson.D{{Key: "_id", Value: int32(3)}, {Key: "subject", Value: "Baking a cake"}, {Key: "author", Value: "abc"}},
		bson.D{{Key: "_id", Value: int32(4)}, {Key: "subject", Value: "baking"}, {Key: "author", Value: "xyz"}},
		bson.D{{Key: "_id", Value: int32(7)}, {Key: "subject", Value: "coffee and cream"}, {Key: "author", Value: "efg"}},
	}
	if _, err := coll.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	// Without a text index every write with $text fails with
	// IndexNotFound and changes nothing.
	_, err := coll.UpdateMany(ctx(t), search("coffee"), bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}})
	var we mongo.WriteException
	if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 27 {
		t.Fatalf("update without a text index: %v", err)
	}
	_, err = coll.DeleteMany(ctx(t), search("coffee"))
	if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 27 {
		t.Fatalf("delete without a text index: %v", err)
	}
	if n, err := coll.CountDocuments(ctx(t), bson.D{}); err != nil || n != 5 {
		t.Fatalf("count = %d, %v", n, err)
	}
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "subject", Value: "text"}}}); err != nil {
		t.Fatal(err)
	}

	// updateMany: the three coffee documents.
	res, err := coll.UpdateMany(ctx(t), search("coffee"), bson.D{{Key: "$set", Value: bson.D{{Key: "drink", Value: true}}}})
	if err != nil || res.MatchedCount != 3 || res.ModifiedCount != 3 {
		t.Fatalf("updateMany = %+v, %v", res, err)
	}
	if got := textFind(t, coll, bson.D{{Key: "drink", Value: true}}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})); !equalIDs(got, []int32{1, 2, 7}) {
		t.Errorf("drink = %v", got)
	}
	// The rest of the filter applies too, in a top-level $and as well.
	res, err = coll.UpdateMany(ctx(t), bson.D{{Key: "$and", Value: bson.A{search("coffee baking"), bson.D{{Key: "author", Value: "xyz"}}}}},
		bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}})
	if err != nil || res.MatchedCount != 2 {
		t.Fatalf("updateMany with $and = %+v, %v", res, err)
	}
	if got := textFind(t, coll, bson.D{{Key: "n", Value: 1}}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})); !equalIDs(got, []int32{1, 4}) {
		t.Errorf("n = %v", got)
	}
	// Upsert: nothing matches, the equality fields seed the new document.
	res, err = coll.UpdateOne(ctx(t), bson.D{{Key: "author", Value: "new"}, {Key: "$text", Value: bson.D{{Key: "$search", Value: "tea"}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "subject", Value: "tea"}}}}, options.UpdateOne().SetUpsert(true))
	if err != nil || res.MatchedCount != 0 || res.UpsertedID == nil {
		t.Fatalf("upsert = %+v, %v", res, err)
	}
	var up bson.M
	if err := coll.FindOne(ctx(t), bson.D{{Key: "_id", Value: res.UpsertedID}}).Decode(&up); err != nil || up["author"] != "new" || up["subject"] != "tea" || len(up) != 3 {
		t.Fatalf("upserted = %v, %v", up, err)
	}

	// findAndModify sorted by score, returning the score: "coffee" as the
	// whole subject scores 1, the others 0.75.
	type scored struct {
		ID    int32   `bson:"_id"`
		Score float64 `bson:"score"`
	}
	byScore := bson.D{{Key: "score", Value: bson.D{{Key: "$meta", Value: "textScore"}}}}
	var got scored
	err = coll.FindOneAndUpdate(ctx(t), search("coffee"), bson.D{{Key: "$set", Value: bson.D{{Key: "top", Value: true}}}},
		options.FindOneAndUpdate().SetSort(byScore).SetProjection(byScore).SetReturnDocument(options.After)).Decode(&got)
	if err != nil || got.ID != 1 || math.Abs(got.Score-1) > 1e-9 {
		t.Fatalf("findOneAndUpdate = %+v, %v", got, err)
	}
	err = coll.FindOneAndDelete(ctx(t), bson.D{{Key: "top", Value: bson.D{{Key: "$ne", Value: true}}}, {Key: "$text", Value: bson.D{{Key: "$search", Value: "coffee"}}}},
		options.FindOneAndDelete().SetSort(bson.D{{Key: "score", Value: bson.D{{Key: "$meta", Value: "textScore"}}}, {Key: "_id", Value: -1}}).SetProjection(byScore)).Decode(&got)
	if err != nil || got.ID != 7 || math.Abs(got.Score-0.75) > 1e-9 {
		t.Fatalf("findOneAndDelete = %+v, %v", got, err)
	}
	// A score sort or projection without $text: 40218.
	err = coll.FindOneAndUpdate(ctx(t), bson.D{}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}, options.FindOneAndUpdate().SetSort(byScore)).Err()
	cmdErr(t, err, 40218)
	err = coll.FindOneAndDelete(ctx(t), bson.D{}, options.FindOneAndDelete().SetProjection(byScore)).Err()
	cmdErr(t, err, 40218)

	// distinct over the matching documents.
	authors, err := coll.Distinct(ctx(t), "author", search("coffee cake")).Raw()
	if err != nil {
		t.Fatal(err)
	}
	vals, _ := authors.Values()
	if len(vals) != 3 || vals[0].StringValue() != "abc" || vals[1].StringValue() != "efg" || vals[2].StringValue() != "xyz" {
		t.Errorf("distinct = %v", vals)
	}

	// explain of a write shows the text plan under the write stage.
	var ex bson.Raw
	ex, err = db.RunCommand(ctx(t), bson.D{{Key: "explain", Value: bson.D{{Key: "delete", Value: "articles"},
		{Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: search("baking")}, {Key: "limit", Value: 0}}}}}}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	wp := ex.Lookup("queryPlanner", "winningPlan").Document()
	if s1, s2 := wp.Lookup("stage").StringValue(), wp.Lookup("inputStage", "stage").StringValue(); s1 != "DELETE" || s2 != "TEXT_MATCH" {
		t.Errorf("explain delete = %v", wp)
	}
	if _, ok := ex.Lookup("queryPlanner", "parsedQuery", "$text").DocumentOK(); !ok {
		t.Errorf("parsedQuery = %v", ex.Lookup("queryPlanner", "parsedQuery"))
	}

	// deleteMany: "baking" stems to "bake", as in documents 3 and 4.
	del, err := coll.DeleteMany(ctx(t), search("baking"))
	if err != nil || del.DeletedCount != 2 {
		t.Fatalf("deleteMany = %+v, %v", del, err)
	}
	if got := textFind(t, coll, bson.D{{Key: "_id", Value: bson.D{{Key: "$type", Value: "int"}}}}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetProjection(bson.D{{Key: "_id", Value: 1}})); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("left after deletes: %v", got)
	}
	// $text inside $or is still refused, and nothing is deleted.
	_, err = coll.DeleteMany(ctx(t), bson.D{{Key: "$or", Value: bson.A{search("coffee"), bson.D{{Key: "a", Value: 1}}}}})
	if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 27 {
		t.Fatalf("$text in $or: %v", err)
	}
}
