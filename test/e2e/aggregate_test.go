package e2e

import (
	"fmt"
	"reflect"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func aggAll(t *testing.T, cur *mongo.Cursor, err error) []bson.M {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var out []bson.M
	if err := cur.All(ctx(t), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAggregatePipelines(t *testing.T) {
	_, client := connect(t)
	db := client.Database("e2eagg")
	coll := db.Collection("items")
	var docs []any
	for i := 0; i < 1000; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "g", Value: i % 4}, {Key: "name", Value: []string{"Ann", "ann", "Bob", "cid"}[i%4]}, {Key: "tags", Value: bson.A{i % 2, "t"}}})
	}
	if _, err := coll.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}

	t.Run("streaming across batches", func(t *testing.T) {
		cur, err := coll.Aggregate(ctx(t), bson.A{
			bson.D{{Key: "$match", Value: bson.D{{Key: "g", Value: bson.D{{Key: "$lt", Value: 2}}}}}},
			bson.D{{Key: "$project", Value: bson.D{{Key: "g", Value: 1}}}},
		}, options.Aggregate().SetBatchSize(37))
		got := aggAll(t, cur, err)
		if len(got) != 500 || got[0]["_id"] != int32(0) || got[499]["_id"] != int32(997) {
			t.Fatalf("got %d docs: first %v last %v", len(got), got[0], got[len(got)-1])
		}
	})

	t.Run("group sort", func(t *testing.T) {
		cur, err := coll.Aggregate(ctx(t), bson.A{
			bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$g"}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}, {Key: "max", Value: bson.D{{Key: "$max", Value: "$_id"}}}}}},
			bson.D{{Key: "$sort", Value: bson.D{{Key: "_id", Value: -1}}}},
			bson.D{{Key: "$limit", Value: 2}},
		})
		got := aggAll(t, cur, err)
		want := []bson.M{{"_id": int32(3), "n": int32(250), "max": int32(999)}, {"_id": int32(2), "n": int32(250), "max": int32(998)}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v", got)
		}
	})

	t.Run("unwind count with batch size zero", func(t *testing.T) {
		// An empty first batch; the pipeline runs on getMore.
		var res struct {
			Cursor struct {
				FirstBatch []bson.M `bson:"firstBatch"`
				NextBatch  []bson.M `bson:"nextBatch"`
				ID         int64    `bson:"id"`
			} `bson:"cursor"`
		}
		err := db.RunCommand(ctx(t), bson.D{{Key: "aggregate", Value: "items"}, {Key: "pipeline", Value: bson.A{
			bson.D{{Key: "$unwind", Value: "$tags"}},
			bson.D{{Key: "$count", Value: "n"}},
		}}, {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: 0}}}}).Decode(&res)
		if err != nil || len(res.Cursor.FirstBatch) != 0 || res.Cursor.ID == 0 {
			t.Fatalf("aggregate: %+v %v", res, err)
		}
		err = db.RunCommand(ctx(t), bson.D{{Key: "getMore", Value: res.Cursor.ID}, {Key: "collection", Value: "items"}}).Decode(&res)
		if err != nil || len(res.Cursor.NextBatch) != 1 || res.Cursor.NextBatch[0]["n"] != int32(2000) || res.Cursor.ID != 0 {
			t.Fatalf("getMore: %+v %v", res, err)
		}
	})

	t.Run("collation", func(t *testing.T) {
		cur, err := coll.Aggregate(ctx(t), bson.A{
			bson.D{{Key: "$match", Value: bson.D{{Key: "name", Value: "ANN"}}}},
			bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
		}, options.Aggregate().SetCollation(&options.Collation{Locale: "en", Strength: 2}))
		got := aggAll(t, cur, err)
		if len(got) != 1 || got[0]["n"] != int32(500) {
			t.Fatalf("got %v", got)
		}
	})

	t.Run("let", func(t *testing.T) {
		cur, err := coll.Aggregate(ctx(t), bson.A{
			bson.D{{Key: "$match", Value: bson.D{{Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{"$_id", "$$id"}}}}}}},
			bson.D{{Key: "$project", Value: bson.D{{Key: "_id", Value: 0}, {Key: "x", Value: "$$x"}}}},
		}, options.Aggregate().SetLet(bson.D{{Key: "id", Value: 7}, {Key: "x", Value: bson.D{{Key: "$concat", Value: bson.A{"a", "b"}}}}}))
		got := aggAll(t, cur, err)
		if !reflect.DeepEqual(got, []bson.M{{"x": "ab"}}) {
			t.Fatalf("got %v", got)
		}
	})

	t.Run("lookup", func(t *testing.T) {
		names := db.Collection("names")
		if _, err := names.InsertMany(ctx(t), []any{bson.D{{Key: "_id", Value: "Ann"}, {Key: "full", Value: "Ann A."}}, bson.D{{Key: "_id", Value: "Bob"}, {Key: "full", Value: "Bob B."}}}); err != nil {
			t.Fatal(err)
		}
		cur, err := coll.Aggregate(ctx(t), bson.A{
			bson.D{{Key: "$match", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: 4}}}}}},
			bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "names"}, {Key: "localField", Value: "name"}, {Key: "foreignField", Value: "_id"}, {Key: "as", Value: "n"}}}},
			bson.D{{Key: "$project", Value: bson.D{{Key: "full", Value: "$n.full"}}}},
		})
		got := aggAll(t, cur, err)
		want := []bson.M{{"_id": int32(0), "full": bson.A{"Ann A."}}, {"_id": int32(1), "full": bson.A{}}, {"_id": int32(2), "full": bson.A{"Bob B."}}, {"_id": int32(3), "full": bson.A{}}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v", got)
		}
	})

	t.Run("out and merge", func(t *testing.T) {
		cur, err := coll.Aggregate(ctx(t), bson.A{
			bson.D{{Key: "$match", Value: bson.D{{Key: "g", Value: 0}}}},
			bson.D{{Key: "$project", Value: bson.D{{Key: "g", Value: 1}}}},
			bson.D{{Key: "$out", Value: "outcoll"}},
		})
		if got := aggAll(t, cur, err); len(got) != 0 {
			t.Fatalf("$out returned %v", got)
		}
		n, err := db.Collection("outcoll").CountDocuments(ctx(t), bson.D{})
		if err != nil || n != 250 {
			t.Fatalf("outcoll has %d (%v)", n, err)
		}
		cur, err = coll.Aggregate(ctx(t), bson.A{
			bson.D{{Key: "$match", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: 2}}}}}},
			bson.D{{Key: "$project", Value: bson.D{{Key: "merged", Value: bson.D{{Key: "$literal", Value: true}}}}}},
			bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: "outcoll"}}}},
		})
		aggAll(t, cur, err)
		var d bson.M
		if err := db.Collection("outcoll").FindOne(ctx(t), bson.D{{Key: "_id", Value: 0}}).Decode(&d); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(d, bson.M{"_id": int32(0), "g": int32(0), "merged": true}) {
			t.Fatalf("merged doc %v", d)
		}
		_, err = coll.Aggregate(ctx(t), bson.A{
			bson.D{{Key: "$match", Value: bson.D{{Key: "_id", Value: 0}}}},
			bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: "outcoll"}, {Key: "whenMatched", Value: "fail"}}}},
		})
		cmdErr(t, err, 11000)
	})

	t.Run("collectionless", func(t *testing.T) {
		cur, err := db.Aggregate(ctx(t), bson.A{
			bson.D{{Key: "$documents", Value: bson.A{bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "a", Value: 2}}}}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "b", Value: bson.D{{Key: "$multiply", Value: bson.A{"$a", 10}}}}}}},
		})
		got := aggAll(t, cur, err)
		if !reflect.DeepEqual(got, []bson.M{{"a": int32(1), "b": int32(10)}, {"a": int32(2), "b": int32(20)}}) {
			t.Fatalf("got %v", got)
		}
		_, err = db.Aggregate(ctx(t), bson.A{bson.D{{Key: "$match", Value: bson.D{}}}})
		cmdErr(t, err, 73)
	})

	t.Run("facet and bucket", func(t *testing.T) {
		cur, err := coll.Aggregate(ctx(t), bson.A{
			bson.D{{Key: "$facet", Value: bson.D{
				{Key: "buckets", Value: bson.A{bson.D{{Key: "$bucket", Value: bson.D{{Key: "groupBy", Value: "$_id"}, {Key: "boundaries", Value: bson.A{0, 500, 1000}}}}}}},
				{Key: "top", Value: bson.A{bson.D{{Key: "$sortByCount", Value: "$name"}}, bson.D{{Key: "$limit", Value: 1}}, bson.D{{Key: "$project", Value: bson.D{{Key: "count", Value: 1}}}}}},
			}}},
		}, options.Aggregate().SetAllowDiskUse(true))
		got := aggAll(t, cur, err)
		if len(got) != 1 {
			t.Fatalf("got %v", got)
		}
		want := bson.A{bson.D{{Key: "_id", Value: int32(0)}, {Key: "count", Value: int32(500)}}, bson.D{{Key: "_id", Value: int32(500)}, {Key: "count", Value: int32(500)}}}
		if !reflect.DeepEqual(got[0]["buckets"], want) {
			t.Fatalf("buckets %v", got[0]["buckets"])
		}
		top, _ := got[0]["top"].(bson.A)
		if len(top) != 1 || !reflect.DeepEqual(top[0].(bson.D)[1], bson.E{Key: "count", Value: int32(250)}) {
			t.Fatalf("top %v", top)
		}
	})

	t.Run("explain", func(t *testing.T) {
		var res bson.M
		err := db.RunCommand(ctx(t), bson.D{{Key: "aggregate", Value: "items"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "g", Value: 1}}}}, bson.D{{Key: "$limit", Value: 3}}}}, {Key: "explain", Value: true}}).Decode(&res)
		if err != nil {
			t.Fatal(err)
		}
		stages, ok := res["stages"].(bson.A)
		if !ok || len(stages) != 2 {
			t.Fatalf("explain %v", res)
		}
		cursor, _ := stages[0].(bson.D)
		if len(cursor) != 1 || cursor[0].Key != "$cursor" {
			t.Fatalf("explain first stage %v", stages[0])
		}
	})

	t.Run("errors", func(t *testing.T) {
		_, err := coll.Aggregate(ctx(t), bson.A{bson.D{{Key: "$nope", Value: 1}}})
		cmdErr(t, err, 40324)
		_, err = coll.Aggregate(ctx(t), bson.A{bson.D{{Key: "$group", Value: bson.D{{Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}}})
		cmdErr(t, err, 15955)
		err = db.RunCommand(ctx(t), bson.D{{Key: "aggregate", Value: "items"}, {Key: "pipeline", Value: bson.A{}}}).Err()
		cmdErr(t, err, 9)
		_, err = coll.Aggregate(ctx(t), bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "x", Value: bson.D{{Key: "$divide", Value: bson.A{1, 0}}}}}}}})
		cmdErr(t, err, 2)
	})

	t.Run("collStats", func(t *testing.T) {
		cur, err := coll.Aggregate(ctx(t), bson.A{bson.D{{Key: "$collStats", Value: bson.D{{Key: "count", Value: bson.D{}}}}}})
		got := aggAll(t, cur, err)
		if len(got) != 1 || got[0]["count"] != int64(1000) || got[0]["ns"] != "e2eagg.items" {
			t.Fatalf("got %v", got)
		}
	})

	t.Run("views", func(t *testing.T) {
		err := db.RunCommand(ctx(t), bson.D{{Key: "create", Value: "evens"}, {Key: "viewOn", Value: "items"}, {Key: "pipeline", Value: bson.A{
			bson.D{{Key: "$match", Value: bson.D{{Key: "g", Value: bson.D{{Key: "$in", Value: bson.A{0, 2}}}}}}},
			bson.D{{Key: "$project", Value: bson.D{{Key: "g", Value: 1}}}},
		}}}).Err()
		if err != nil {
			t.Fatal(err)
		}
		err = db.RunCommand(ctx(t), bson.D{{Key: "create", Value: "evensTop"}, {Key: "viewOn", Value: "evens"}, {Key: "pipeline", Value: bson.A{
			bson.D{{Key: "$sort", Value: bson.D{{Key: "_id", Value: -1}}}}, bson.D{{Key: "$limit", Value: 3}},
		}}}).Err()
		if err != nil {
			t.Fatal(err)
		}
		cur, err := db.Collection("evensTop").Aggregate(ctx(t), bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "g", Value: 2}}}}})
		got := aggAll(t, cur, err)
		if !reflect.DeepEqual(got, []bson.M{{"_id": int32(998), "g": int32(2)}, {"_id": int32(994), "g": int32(2)}}) {
			t.Fatalf("view of view: %v", got)
		}
		cur, err = db.Aggregate(ctx(t), bson.A{
			bson.D{{Key: "$documents", Value: bson.A{bson.D{{Key: "k", Value: 996}}}}},
			bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "evensTop"}, {Key: "localField", Value: "k"}, {Key: "foreignField", Value: "_id"}, {Key: "as", Value: "m"}}}},
		})
		got = aggAll(t, cur, err)
		if len(got) != 1 || len(got[0]["m"].(bson.A)) != 1 {
			t.Fatalf("lookup from view: %v", got)
		}
		_, err = coll.Aggregate(ctx(t), bson.A{bson.D{{Key: "$out", Value: "evens"}}})
		cmdErr(t, err, 166)
	})

	t.Run("merge on unique index", func(t *testing.T) {
		target := db.Collection("bykey")
		if _, err := target.InsertOne(ctx(t), bson.D{{Key: "_id", Value: "x"}, {Key: "k", Value: 1}, {Key: "old", Value: true}}); err != nil {
			t.Fatal(err)
		}
		merge := bson.A{
			bson.D{{Key: "$match", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: 3}}}}}},
			bson.D{{Key: "$project", Value: bson.D{{Key: "_id", Value: 0}, {Key: "k", Value: "$_id"}, {Key: "g", Value: 1}}}},
			bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: "bykey"}, {Key: "on", Value: "k"}}}},
		}
		_, err := coll.Aggregate(ctx(t), merge)
		cmdErr(t, err, 51183)
		if _, err := target.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "k", Value: 1}}, Options: options.Index().SetUnique(true)}); err != nil {
			t.Fatal(err)
		}
		cur, err := coll.Aggregate(ctx(t), merge)
		aggAll(t, cur, err)
		cur, err = target.Find(ctx(t), bson.D{}, options.Find().SetSort(bson.D{{Key: "k", Value: 1}}).SetProjection(bson.D{{Key: "_id", Value: 0}}))
		got := aggAll(t, cur, err)
		want := []bson.M{{"k": int32(0), "g": int32(0)}, {"k": int32(1), "g": int32(1), "old": true}, {"k": int32(2), "g": int32(2)}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v", got)
		}
	})

	t.Run("leading match uses an index", func(t *testing.T) {
		ix := db.Collection("indexed")
		var docs []any
		for i := 0; i < 600; i++ {
			docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "g", Value: i % 3}, {Key: "x", Value: i}})
		}
		if _, err := ix.InsertMany(ctx(t), docs); err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "g", Value: 1}}}); err != nil {
			t.Fatal(err)
		}
		pipeline := bson.A{
			bson.D{{Key: "$match", Value: bson.D{{Key: "g", Value: 2}, {Key: "x", Value: bson.D{{Key: "$gte", Value: 30}}}}}},
			bson.D{{Key: "$project", Value: bson.D{{Key: "x", Value: 1}}}},
		}
		cur, err := ix.Aggregate(ctx(t), pipeline, options.Aggregate().SetBatchSize(7))
		got := aggAll(t, cur, err)
		if len(got) != 190 {
			t.Fatalf("got %d docs", len(got))
		}
		for i, d := range got {
			if d["x"] != int32(32+3*i) {
				t.Fatalf("doc %d: %v", i, d)
			}
		}
		var res bson.Raw
		err = db.RunCommand(ctx(t), bson.D{{Key: "aggregate", Value: "indexed"}, {Key: "pipeline", Value: pipeline}, {Key: "explain", Value: true}}).Decode(&res)
		if err != nil {
			t.Fatal(err)
		}
		if name, err := res.LookupErr("stages", "0", "$cursor", "queryPlanner", "winningPlan", "inputStage", "indexName"); err != nil || name.StringValue() != "g_1" {
			t.Fatalf("explain: %v", res)
		}
	})

	t.Run("out honours validation and bypassDocumentValidation", func(t *testing.T) {
		err := db.RunCommand(ctx(t), bson.D{{Key: "create", Value: "validated"}, {Key: "validator", Value: bson.D{{Key: "x", Value: bson.D{{Key: "$exists", Value: true}}}}}}).Err()
		if err != nil {
			t.Fatal(err)
		}
		pipeline := bson.A{bson.D{{Key: "$limit", Value: 2}}, bson.D{{Key: "$merge", Value: "validated"}}}
		_, err = coll.Aggregate(ctx(t), pipeline)
		cmdErr(t, err, 121)
		cur, err := coll.Aggregate(ctx(t), pipeline, options.Aggregate().SetBypassDocumentValidation(true))
		aggAll(t, cur, err)
		if n, err := db.Collection("validated").CountDocuments(ctx(t), bson.D{}); err != nil || n != 2 {
			t.Fatalf("validated has %d (%v)", n, err)
		}
	})
}

// TestAggregateSortedByIndex: a leading $sort (after an optional $match)
// that an index provides is answered by walking the index in order, in
// the pipeline and in $unionWith's and $lookup's sub-pipelines, with the
// answers of an unindexed copy of the collection; a $ne filter bounds the
// walk around the excluded value.
func TestAggregateSortedByIndex(t *testing.T) {
	_, client := connect(t)
	db := client.Database("e2esorted")
	ixd, plain := db.Collection("ixd"), db.Collection("plain")
	var docs []any
	for i := 0; i < 3000; i++ {
		var k any
		switch i % 5 {
		case 0, 1:
			k = int32(i)
		case 2:
			k = float64(i) + 0.5
		case 3:
			k = fmt.Sprintf("s%05d", i)
		case 4:
			k = int64(-i)
		}
		switch i {
		case 7:
			k = nil
		case 8:
			k = ""
		}
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "k", Value: k}, {Key: "v", Value: i % 7}})
	}
	for _, c := range []*mongo.Collection{ixd, plain} {
		if _, err := c.InsertMany(ctx(t), docs); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ixd.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "k", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	pipelines := func(coll string) []bson.A {
		return []bson.A{
			{bson.M{"$sort": bson.M{"k": 1}}, bson.M{"$limit": 7}},
			{bson.M{"$sort": bson.M{"k": -1}}, bson.M{"$skip": 3}, bson.M{"$limit": 4}},
			{bson.M{"$match": bson.M{"k": bson.M{"$ne": ""}}}, bson.M{"$sort": bson.M{"k": 1}}, bson.M{"$project": bson.M{"k": 1}}, bson.M{"$limit": 6}},
			{bson.M{"$match": bson.M{"k": bson.M{"$ne": "s00013"}, "v": bson.M{"$lt": 3}}}, bson.M{"$sort": bson.M{"k": -1}}, bson.M{"$limit": 5}},
			{bson.M{"$match": bson.M{"k": bson.M{"$gt": 100}}}, bson.M{"$sort": bson.M{"k": -1}}, bson.M{"$limit": 3}},
			{bson.M{"$sort": bson.M{"k": 1}}, bson.M{"$limit": 1},
				bson.M{"$unionWith": bson.M{"coll": coll, "pipeline": bson.A{bson.M{"$sort": bson.M{"k": -1}}, bson.M{"$limit": 2}}}}},
			{bson.M{"$match": bson.M{"_id": bson.M{"$lt": 3}}}, bson.M{"$lookup": bson.M{"from": coll, "let": bson.M{"x": "$v"}, "as": "top", "pipeline": bson.A{
				bson.M{"$match": bson.M{"$expr": bson.M{"$eq": bson.A{"$v", "$$x"}}}}, bson.M{"$sort": bson.M{"k": -1}}, bson.M{"$limit": 2}, bson.M{"$project": bson.M{"k": 1}}}}}},
		}
	}
	want, got := pipelines("plain"), pipelines("ixd")
	for i := range want {
		wc, err := plain.Aggregate(ctx(t), want[i])
		w := aggAll(t, wc, err)
		gc, err := ixd.Aggregate(ctx(t), got[i])
		g := aggAll(t, gc, err)
		if len(w) == 0 || !reflect.DeepEqual(g, w) {
			t.Errorf("pipeline %d:\nindexed   %v\nunindexed %v", i, g, w)
		}
	}
}
