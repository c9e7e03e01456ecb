package e2e

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func TestInsertFindCursor(t *testing.T) {
	_, client := connect(t)
	coll := client.Database("e2e").Collection("items")
	var docs []any
	for i := 0; i < 250; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "n", Value: i % 10}, {Key: "s", Value: fmt.Sprintf("item-%03d", i)}})
	}
	res, err := coll.InsertMany(ctx(t), docs)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.InsertedIDs) != 250 {
		t.Fatalf("inserted %d", len(res.InsertedIDs))
	}
	// A cursor over more than one batch: firstBatch of 101, then getMores.
	cur, err := coll.Find(ctx(t), bson.D{}, options.Find().SetBatchSize(50))
	if err != nil {
		t.Fatal(err)
	}
	var all []bson.M
	if err := cur.All(ctx(t), &all); err != nil {
		t.Fatal(err)
	}
	if len(all) != 250 || all[0]["_id"] != int32(0) || all[249]["_id"] != int32(249) {
		t.Fatalf("got %d docs, first %v last %v", len(all), all[0], all[len(all)-1])
	}
	// Filter, projection, sort, skip, limit.
	cur, err = coll.Find(ctx(t), bson.D{{Key: "n", Value: 3}},
		options.Find().SetSort(bson.D{{Key: "_id", Value: -1}}).SetSkip(2).SetLimit(5).SetProjection(bson.D{{Key: "s", Value: 1}, {Key: "_id", Value: 0}}))
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.D
	if err := cur.All(ctx(t), &got); err != nil {
		t.Fatal(err)
	}
	want := []bson.D{{{Key: "s", Value: "item-223"}}, {{Key: "s", Value: "item-213"}}, {{Key: "s", Value: "item-203"}}, {{Key: "s", Value: "item-193"}}, {{Key: "s", Value: "item-183"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("find = %v, want %v", got, want)
	}
	// Point lookup by _id.
	var one bson.M
	if err := coll.FindOne(ctx(t), bson.D{{Key: "_id", Value: 42}}).Decode(&one); err != nil || one["s"] != "item-042" {
		t.Fatalf("findOne = %v, %v", one, err)
	}
	if err := coll.FindOne(ctx(t), bson.D{{Key: "_id", Value: 1000}}).Err(); !errors.Is(err, mongo.ErrNoDocuments) {
		t.Fatalf("findOne missing = %v", err)
	}
	// Counting.
	if n, err := coll.CountDocuments(ctx(t), bson.D{{Key: "n", Value: bson.D{{Key: "$gte", Value: 5}}}}); err != nil || n != 125 {
		t.Fatalf("countDocuments = %d, %v", n, err)
	}
	if n, err := coll.EstimatedDocumentCount(ctx(t)); err != nil || n != 250 {
		t.Fatalf("estimatedDocumentCount = %d, %v", n, err)
	}
	// Distinct.
	vals := coll.Distinct(ctx(t), "n", bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: 20}}}})
	var ns []int32
	if err := vals.Decode(&ns); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ns, []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Fatalf("distinct = %v", ns)
	}
	// killCursors on an open cursor.
	cur, err = coll.Find(ctx(t), bson.D{}, options.Find().SetBatchSize(10))
	if err != nil {
		t.Fatal(err)
	}
	if cur.ID() == 0 {
		t.Fatal("expected an open cursor")
	}
	if err := cur.Close(ctx(t)); err != nil {
		t.Fatal(err)
	}
	err = client.Database("e2e").RunCommand(ctx(t), bson.D{{Key: "getMore", Value: cur.ID()}, {Key: "collection", Value: "items"}}).Err()
	cmdErr(t, err, 43)
}

func TestInsertErrors(t *testing.T) {
	_, client := connect(t)
	coll := client.Database("e2e").Collection("dups")
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	_, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1}})
	var we mongo.WriteException
	if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 11000 {
		t.Fatalf("duplicate insert: %v", err)
	}
	raw := we.WriteErrors[0].Raw
	if kp, err := raw.LookupErr("keyPattern"); err != nil || kp.Document().Lookup("_id").AsInt64() != 1 {
		t.Errorf("keyPattern missing in %v", raw)
	}
	if kv, err := raw.LookupErr("keyValue"); err != nil || kv.Document().Lookup("_id").AsInt64() != 1 {
		t.Errorf("keyValue missing in %v", raw)
	}
	// Ordered stops at the first error; unordered carries on.
	_, err = coll.InsertMany(ctx(t), []any{bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 3}}})
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) || len(bwe.WriteErrors) != 1 || bwe.WriteErrors[0].Index != 1 {
		t.Fatalf("ordered insertMany: %v", err)
	}
	if n, _ := coll.CountDocuments(ctx(t), bson.D{}); n != 2 {
		t.Fatalf("after ordered failure: %d docs, want 2", n)
	}
	_, err = coll.InsertMany(ctx(t), []any{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 4}}, bson.D{{Key: "_id", Value: 2}}}, options.InsertMany().SetOrdered(false))
	if !errors.As(err, &bwe) || len(bwe.WriteErrors) != 2 || bwe.WriteErrors[1].Index != 2 {
		t.Fatalf("unordered insertMany: %v", err)
	}
	if n, _ := coll.CountDocuments(ctx(t), bson.D{}); n != 3 {
		t.Fatalf("after unordered: %d docs, want 3", n)
	}
	// _id may not be an array.
	_, err = coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: bson.A{1}}})
	if !errors.As(err, &we) || we.WriteErrors[0].Code != 53 {
		t.Fatalf("array _id: %v", err)
	}
	// Missing _id gets an ObjectId, stored first.
	res, err := coll.InsertOne(ctx(t), bson.D{{Key: "x", Value: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.InsertedID.(bson.ObjectID); !ok {
		t.Fatalf("generated _id = %T", res.InsertedID)
	}
	var d bson.D
	if err := coll.FindOne(ctx(t), bson.D{{Key: "x", Value: 1}}).Decode(&d); err != nil || d[0].Key != "_id" {
		t.Fatalf("stored %v, %v", d, err)
	}
	// _id given after other fields is moved first.
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "y", Value: 1}, {Key: "_id", Value: "late"}}); err != nil {
		t.Fatal(err)
	}
	if err := coll.FindOne(ctx(t), bson.D{{Key: "_id", Value: "late"}}).Decode(&d); err != nil || d[0].Key != "_id" {
		t.Fatalf("stored %v, %v", d, err)
	}
}

func TestUpdateDeleteFindAndModify(t *testing.T) {
	_, client := connect(t)
	coll := client.Database("e2e").Collection("upd")
	if _, err := coll.InsertMany(ctx(t), []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}},
		bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: 2}},
		bson.D{{Key: "_id", Value: 3}, {Key: "a", Value: 2}},
	}); err != nil {
		t.Fatal(err)
	}
	r, err := coll.UpdateMany(ctx(t), bson.D{{Key: "a", Value: 2}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "a", Value: 10}}}})
	if err != nil || r.MatchedCount != 2 || r.ModifiedCount != 2 {
		t.Fatalf("updateMany = %+v, %v", r, err)
	}
	r, err = coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}})
	if err != nil || r.MatchedCount != 1 || r.ModifiedCount != 0 {
		t.Fatalf("no-op updateOne = %+v, %v", r, err)
	}
	r, err = coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 9}}, bson.D{{Key: "$set", Value: bson.D{{Key: "b", Value: 1}}}}, options.UpdateOne().SetUpsert(true))
	if err != nil || r.UpsertedID != int32(9) || r.UpsertedCount != 1 {
		t.Fatalf("upsert = %+v, %v", r, err)
	}
	var d bson.D
	if err := coll.FindOne(ctx(t), bson.D{{Key: "_id", Value: 9}}).Decode(&d); err != nil || !reflect.DeepEqual(d, bson.D{{Key: "_id", Value: int32(9)}, {Key: "b", Value: int32(1)}}) {
		t.Fatalf("upserted doc = %v, %v", d, err)
	}
	r, err = coll.ReplaceOne(ctx(t), bson.D{{Key: "_id", Value: 9}}, bson.D{{Key: "c", Value: "x"}})
	if err != nil || r.ModifiedCount != 1 {
		t.Fatalf("replaceOne = %+v, %v", r, err)
	}
	// Changing _id is refused.
	_, err = coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 9}}, bson.D{{Key: "$set", Value: bson.D{{Key: "_id", Value: 10}}}})
	var we mongo.WriteException
	if !errors.As(err, &we) || we.WriteErrors[0].Code != 66 {
		t.Fatalf("$set _id: %v", err)
	}
	// findAndModify: return the new document.
	var after bson.M
	err = coll.FindOneAndUpdate(ctx(t), bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "$set", Value: bson.D{{Key: "z", Value: true}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&after)
	if err != nil || after["z"] != true {
		t.Fatalf("findOneAndUpdate = %v, %v", after, err)
	}
	var removed bson.M
	if err := coll.FindOneAndDelete(ctx(t), bson.D{{Key: "_id", Value: 3}}).Decode(&removed); err != nil || removed["a"] != int32(12) {
		t.Fatalf("findOneAndDelete = %v, %v", removed, err)
	}
	dr, err := coll.DeleteMany(ctx(t), bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: 2}}}})
	if err != nil || dr.DeletedCount != 2 {
		t.Fatalf("deleteMany = %+v, %v", dr, err)
	}
	dr, err = coll.DeleteOne(ctx(t), bson.D{})
	if err != nil || dr.DeletedCount != 1 {
		t.Fatalf("deleteOne = %+v, %v", dr, err)
	}
	if n, _ := coll.CountDocuments(ctx(t), bson.D{}); n != 0 {
		t.Fatalf("left %d docs", n)
	}
}

func TestAggregateHelpers(t *testing.T) {
	_, client := connect(t)
	coll := client.Database("e2e").Collection("agg")
	for i := 0; i < 30; i++ {
		if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: i}, {Key: "g", Value: i % 3}, {Key: "v", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	cur, err := coll.Aggregate(ctx(t), mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "v", Value: bson.D{{Key: "$gte", Value: 3}}}}}},
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$g"}, {Key: "total", Value: bson.D{{Key: "$sum", Value: "$v"}}}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
		{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.M
	if err := cur.All(ctx(t), &got); err != nil {
		t.Fatal(err)
	}
	// g=0: 3,6,...,27 = 135 (9 docs); g=1: 4..28 = 144 (9); g=2: 5..29 = 153 (9)
	want := []bson.M{{"_id": int32(0), "total": int32(135), "n": int32(9)}, {"_id": int32(1), "total": int32(144), "n": int32(9)}, {"_id": int32(2), "total": int32(153), "n": int32(9)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("aggregate = %v, want %v", got, want)
	}
	cur, err = coll.Aggregate(ctx(t), mongo.Pipeline{{{Key: "$skip", Value: 25}}, {{Key: "$count", Value: "c"}}})
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	if err := cur.All(ctx(t), &got); err != nil || len(got) != 1 || got[0]["c"] != int32(5) {
		t.Fatalf("$count = %v, %v", got, err)
	}
	_, err = coll.Aggregate(ctx(t), mongo.Pipeline{{{Key: "$noSuchStage", Value: 1}}})
	cmdErr(t, err, 40324)
}

func TestCatalogCommands(t *testing.T) {
	_, client := connect(t)
	db := client.Database("cat")
	if err := db.CreateCollection(ctx(t), "a"); err != nil {
		t.Fatal(err)
	}
	cmdErr(t, db.CreateCollection(ctx(t), "a"), 48)
	cmdErr(t, db.RunCommand(ctx(t), bson.D{{Key: "create", Value: "capped"}, {Key: "capped", Value: true}}).Err(), 72)
	cmdErr(t, db.RunCommand(ctx(t), bson.D{{Key: "create", Value: "bad$name"}}).Err(), 73)
	cmdErr(t, db.RunCommand(ctx(t), bson.D{{Key: "create", Value: "x"}, {Key: "bogus", Value: 1}}).Err(), 40415)
	// Wrong types in command fields answer TypeMismatch (14).
	cmdErr(t, db.RunCommand(ctx(t), bson.D{{Key: "find", Value: "a"}, {Key: "filter", Value: 5}}).Err(), 14)
	cmdErr(t, db.RunCommand(ctx(t), bson.D{{Key: "insert", Value: "a"}, {Key: "documents", Value: "x"}}).Err(), 14)
	cmdErr(t, db.RunCommand(ctx(t), bson.D{{Key: "find", Value: "a"}, {Key: "limit", Value: "ten"}}).Err(), 14)
	cmdErr(t, db.RunCommand(ctx(t), bson.D{{Key: "delete", Value: "a"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}}}}}).Err(), 40414)
	if _, err := db.Collection("b").InsertOne(ctx(t), bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	names, err := db.ListCollectionNames(ctx(t), bson.D{})
	if err != nil || !reflect.DeepEqual(names, []string{"a", "b"}) {
		t.Fatalf("listCollections = %v, %v", names, err)
	}
	names, err = db.ListCollectionNames(ctx(t), bson.D{{Key: "name", Value: "b"}})
	if err != nil || !reflect.DeepEqual(names, []string{"b"}) {
		t.Fatalf("listCollections filter = %v, %v", names, err)
	}
	dbs, err := client.ListDatabaseNames(ctx(t), bson.D{{Key: "name", Value: "cat"}})
	if err != nil || !reflect.DeepEqual(dbs, []string{"cat"}) {
		t.Fatalf("listDatabases = %v, %v", dbs, err)
	}
	var stats bson.M
	if err := db.RunCommand(ctx(t), bson.D{{Key: "collStats", Value: "b"}}).Decode(&stats); err != nil || stats["count"] != int64(1) || stats["nindexes"] != int32(1) {
		t.Fatalf("collStats = %v, %v", stats, err)
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "dbStats", Value: 1}}).Decode(&stats); err != nil || stats["collections"] != int64(2) {
		t.Fatalf("dbStats = %v, %v", stats, err)
	}
	idx, err := db.Collection("b").Indexes().ListSpecifications(ctx(t))
	if err != nil || len(idx) != 1 || idx[0].Name != "_id_" {
		t.Fatalf("listIndexes = %v, %v", idx, err)
	}
	if err := client.Database("admin").RunCommand(ctx(t), bson.D{{Key: "renameCollection", Value: "cat.b"}, {Key: "to", Value: "cat.c"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := db.Collection("c").CountDocuments(ctx(t), bson.D{}); err != nil || n != 1 {
		t.Fatalf("renamed collection has %d docs, %v", n, err)
	}
	cmdErr(t, client.Database("admin").RunCommand(ctx(t), bson.D{{Key: "renameCollection", Value: "cat.nope"}, {Key: "to", Value: "cat.d"}}).Err(), 26)
	if err := db.Collection("c").Drop(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if err := db.Collection("never").Drop(ctx(t)); err != nil {
		t.Fatalf("dropping a missing collection: %v", err)
	}
	if err := db.Drop(ctx(t)); err != nil {
		t.Fatal(err)
	}
	dbs, _ = client.ListDatabaseNames(ctx(t), bson.D{{Key: "name", Value: "cat"}})
	if len(dbs) != 0 {
		t.Fatalf("database survived dropDatabase: %v", dbs)
	}
}
