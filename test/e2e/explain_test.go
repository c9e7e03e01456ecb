package e2e

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

func TestExplain(t *testing.T) {
	_, client := connect(t)
	db := client.Database("expl")
	coll := db.Collection("c")
	var docs []any
	for i := 0; i < 200; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 20}, {Key: "b", Value: i}})
	}
	if _, err := coll.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	type stage struct {
		Stage      string
		IndexName  string `bson:"indexName"`
		InputStage *stage `bson:"inputStage"`
	}
	var res struct {
		QueryPlanner struct {
			WinningPlan stage `bson:"winningPlan"`
		} `bson:"queryPlanner"`
		ExecutionStats struct {
			NReturned         int64 `bson:"nReturned"`
			TotalKeysExamined int64 `bson:"totalKeysExamined"`
			TotalDocsExamined int64 `bson:"totalDocsExamined"`
		} `bson:"executionStats"`
	}
	run := func(cmd bson.D) {
		t.Helper()
		res = struct {
			QueryPlanner struct {
				WinningPlan stage `bson:"winningPlan"`
			} `bson:"queryPlanner"`
			ExecutionStats struct {
				NReturned         int64 `bson:"nReturned"`
				TotalKeysExamined int64 `bson:"totalKeysExamined"`
				TotalDocsExamined int64 `bson:"totalDocsExamined"`
			} `bson:"executionStats"`
		}{}
		if err := db.RunCommand(ctx(t), bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: "executionStats"}}).Decode(&res); err != nil {
			t.Fatalf("explain %v: %v", cmd, err)
		}
	}
	// Equality on an indexed field: FETCH over IXSCAN, 10 keys, 10 documents.
	run(bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "a", Value: 7}}}})
	wp := res.QueryPlanner.WinningPlan
	if wp.Stage != "FETCH" || wp.InputStage == nil || wp.InputStage.Stage != "IXSCAN" || wp.InputStage.IndexName != "a_1" {
		t.Fatalf("indexed find plan = %+v", wp)
	}
	if s := res.ExecutionStats; s.NReturned != 10 || s.TotalKeysExamined != 10 || s.TotalDocsExamined != 10 {
		t.Fatalf("indexed find stats = %+v", s)
	}
	// Unindexed field: COLLSCAN over all 200.
	run(bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "b", Value: bson.D{{Key: "$lt", Value: 5}}}}}})
	if res.QueryPlanner.WinningPlan.Stage != "COLLSCAN" || res.ExecutionStats.TotalDocsExamined != 200 || res.ExecutionStats.NReturned != 5 {
		t.Fatalf("collection scan = %+v", res)
	}
	// _id equality: IDHACK.
	run(bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "_id", Value: 3}}}})
	if res.QueryPlanner.WinningPlan.Stage != "IDHACK" || res.ExecutionStats.NReturned != 1 {
		t.Fatalf("_id lookup = %+v", res)
	}
	// Sort above the scan; count; delete plans without running.
	run(bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$in", Value: bson.A{1, 2}}}}}}, {Key: "sort", Value: bson.D{{Key: "b", Value: -1}}}, {Key: "limit", Value: 3}})
	if wp := res.QueryPlanner.WinningPlan; wp.Stage != "SORT" || wp.InputStage.Stage != "FETCH" || res.ExecutionStats.NReturned != 3 {
		t.Fatalf("sorted plan = %+v", res)
	}
	run(bson.D{{Key: "count", Value: "c"}, {Key: "query", Value: bson.D{{Key: "a", Value: 3}}}})
	if res.ExecutionStats.NReturned != 10 {
		t.Fatalf("count explain = %+v", res)
	}
	run(bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "a", Value: 4}}}, {Key: "limit", Value: 0}}}}})
	if wp := res.QueryPlanner.WinningPlan; wp.Stage != "DELETE" || wp.InputStage.Stage != "FETCH" {
		t.Fatalf("delete plan = %+v", wp)
	}
	if n, _ := coll.CountDocuments(ctx(t), bson.D{{Key: "a", Value: 4}}); n != 10 {
		t.Fatalf("explain of a delete deleted documents: %d left", n)
	}
	// The driver's find().explain() path works too (aggregate is explained by its own code).
	if err := db.RunCommand(ctx(t), bson.D{{Key: "explain", Value: bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "a", Value: 1}}}}}}, {Key: "cursor", Value: bson.D{}}}}}).Err(); err != nil {
		t.Fatalf("explain aggregate: %v", err)
	}
	cmdErr(t, db.RunCommand(ctx(t), bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "c"}}}, {Key: "verbosity", Value: "loud"}}).Err(), 9)
	// A hint forces its index, even when the filter does not restrict it.
	run(bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "b", Value: 150}}}, {Key: "hint", Value: "a_1"}})
	if wp := res.QueryPlanner.WinningPlan; wp.Stage != "FETCH" || wp.InputStage.IndexName != "a_1" || res.ExecutionStats.TotalKeysExamined != 200 || res.ExecutionStats.NReturned != 1 {
		t.Fatalf("hinted plan = %+v", res)
	}
	run(bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "a", Value: 3}}}, {Key: "hint", Value: bson.D{{Key: "$natural", Value: 1}}}})
	if res.QueryPlanner.WinningPlan.Stage != "COLLSCAN" || res.ExecutionStats.NReturned != 10 {
		t.Fatalf("$natural hint = %+v", res)
	}
}
