package e2e

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// validateColl runs validate {full: true} and fails unless it is valid.
func validateColl(t *testing.T, db *mongo.Database, coll string) map[string]int64 {
	t.Helper()
	var res struct {
		Valid        bool
		KeysPerIndex map[string]int64 `bson:"keysPerIndex"`
		Errors       []string
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "validate", Value: coll}, {Key: "full", Value: true}}).Decode(&res); err != nil {
		t.Fatal(err)
	}
	if !res.Valid {
		t.Fatalf("validate %s: %v", coll, res.Errors)
	}
	return res.KeysPerIndex
}

// TestColumnStoreIndexLifecycle checks that a column store index is
// created (by the bulk build over existing documents), listed with its
// projection, kept in step with inserts, updates, replacements and deletes
// (validate compares every entry with the documents), hidden and unhidden
// with collMod, sized by collStats, refused by the planner for find, and
// dropped.
func TestColumnStoreIndexLifecycle(t *testing.T) {
	client, _ := startTxnServer(t) // a replica set member: transactions too
	db := client.Database("cs")
	coll := db.Collection("c")
	var docs []any
	for i := range 500 {
		docs = append(docs, colDoc(i, "a"))
	}
	if _, err := coll.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	name, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "$**", Value: "columnstore"}},
		Options: options.Index().SetName("cs")})
	if err != nil || name != "cs" {
		t.Fatalf("createIndex = %q, %v", name, err)
	}
	_, err = coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "$**", Value: "columnstore"}},
		Options: options.Index().SetName("proj").SetPartialFilterExpression(bson.D{{Key: "g", Value: 1}})})
	cmdErr(t, err, 67)
	if err := db.RunCommand(ctx(t), bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{
		bson.D{{Key: "key", Value: bson.D{{Key: "$**", Value: "columnstore"}}}, {Key: "name", Value: "proj"},
			{Key: "columnstoreProjection", Value: bson.D{{Key: "g", Value: 1}, {Key: "v", Value: 1}}}}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	var specs []bson.M
	cur, err := coll.Indexes().List(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := cur.All(ctx(t), &specs); err != nil {
		t.Fatal(err)
	}
	if len(specs) != 3 || specs[2]["name"] != "proj" || specs[2]["columnstoreProjection"] == nil {
		t.Fatalf("listIndexes = %v", specs)
	}
	// 500 documents: the row-id column, _id, pad and s in each; g in 5 of
	// 6, e in 3 of 4, v in 2 of 3 plus every 9th.
	keys := validateColl(t, db, "c")
	g, e, v := 0, 0, 0
	for i := range 500 {
		if i%6 != 5 {
			g++
		}
		if i%4 != 0 {
			e++
		}
		if i%3 != 0 || i%9 == 0 {
			v++
		}
	}
	if keys["cs"] != int64(4*500+g+e+v) || keys["proj"] != int64(2*500+g+v) {
		t.Fatalf("keysPerIndex %v, want cs %d and proj %d", keys, 4*500+g+e+v, 2*500+g+v)
	}
	// Writes of every kind keep it in step.
	if _, err := coll.InsertMany(ctx(t), colDocs(500, 600, "b")); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateMany(ctx(t), bson.D{{Key: "v", Value: 3}}, bson.D{{Key: "$set", Value: bson.D{{Key: "g", Value: "changed"}}}, {Key: "$unset", Value: bson.D{{Key: "e", Value: ""}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.ReplaceOne(ctx(t), bson.D{{Key: "_id", Value: 7}}, bson.D{{Key: "only", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.DeleteMany(ctx(t), bson.D{{Key: "v", Value: 5}}); err != nil {
		t.Fatal(err)
	}
	validateColl(t, db, "c")
	// A multi-document transaction's writes too.
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx(t))
	if _, err := sess.WithTransaction(ctx(t), func(sc context.Context) (any, error) {
		if _, err := coll.UpdateOne(sc, bson.D{{Key: "_id", Value: 10}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "v", Value: 100}}}}); err != nil {
			return nil, err
		}
		return coll.InsertOne(sc, bson.D{{Key: "_id", Value: "txn"}, {Key: "g", Value: 1}})
	}); err != nil {
		t.Fatal(err)
	}
	validateColl(t, db, "c")

	// Hidden and unhidden like any index.
	for _, hidden := range []bool{true, false} {
		if err := db.RunCommand(ctx(t), bson.D{{Key: "collMod", Value: "c"}, {Key: "index", Value: bson.D{{Key: "name", Value: "cs"}, {Key: "hidden", Value: hidden}}}}).Err(); err != nil {
			t.Fatalf("collMod hidden %v: %v", hidden, err)
		}
	}
	var stats struct {
		IndexSizes map[string]int64 `bson:"indexSizes"`
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "collStats", Value: "c"}}).Decode(&stats); err != nil {
		t.Fatal(err)
	}
	if stats.IndexSizes["cs"] <= 0 || stats.IndexSizes["proj"] <= 0 {
		t.Fatalf("collStats indexSizes = %v", stats.IndexSizes)
	}
	// find never plans with it: a filter on g is a collection scan.
	var plan struct {
		QueryPlanner struct {
			WinningPlan bson.M `bson:"winningPlan"`
		} `bson:"queryPlanner"`
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "g", Value: 1}}}}}}).Decode(&plan); err != nil {
		t.Fatal(err)
	}
	if w := plan.QueryPlanner.WinningPlan; w["stage"] != "COLLSCAN" {
		t.Fatalf("find's winning plan %v, want COLLSCAN", w)
	}
	if err := coll.Indexes().DropOne(ctx(t), "cs"); err != nil {
		t.Fatal(err)
	}
	validateColl(t, db, "c")
}
