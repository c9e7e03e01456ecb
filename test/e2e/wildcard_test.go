package e2e

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestWildcardIndexes checks that wildcard indexes answer equality and
// range queries on any field (explain shows the index) with the documents
// a collection scan finds, and stay in step with writes.
func TestWildcardIndexes(t *testing.T) {
	_, client := connect(t)
	db := client.Database("idx")
	coll := db.Collection("wild")
	var docs []any
	for i := 0; i < 240; i++ {
		d := bson.D{{Key: "_id", Value: i}}
		switch i % 6 {
		case 0:
			d = append(d, bson.E{Key: "a", Value: i % 13}, bson.E{Key: "sub", Value: bson.D{{Key: "x", Value: i % 5}, {Key: "y", Value: "s" + string(rune('a'+i%4))}}})
		case 1:
			d = append(d, bson.E{Key: "a", Value: bson.A{i % 7, 50 + i%3}}, bson.E{Key: "sub", Value: bson.A{bson.D{{Key: "x", Value: i % 4}}, bson.D{{Key: "x", Value: 9}}}})
		case 2:
			d = append(d, bson.E{Key: "a", Value: "t" + string(rune('a'+i%5))}, bson.E{Key: "secret", Value: i % 3})
		case 3:
			d = append(d, bson.E{Key: "b", Value: bson.D{{Key: "c", Value: bson.D{{Key: "d", Value: i % 8}}}}}, bson.E{Key: "sub", Value: bson.D{}})
		case 4:
			d = append(d, bson.E{Key: "a", Value: bson.A{}}, bson.E{Key: "sub", Value: bson.D{{Key: "x", Value: bson.A{bson.A{1, 2}, 3}}}})
		}
		docs = append(docs, d)
	}
	if _, err := coll.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	// All fields but "secret"; and a second collection's path.$** index.
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "$**", Value: 1}},
		Options: options.Index().SetWildcardProjection(bson.D{{Key: "secret", Value: 0}})}); err != nil {
		t.Fatal(err)
	}
	_, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "a.$**", Value: 1}}, Options: options.Index().SetWildcardProjection(bson.D{{Key: "x", Value: 1}})})
	cmdErr(t, err, 67)
	_, err = coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "$**", Value: 1}}, Options: options.Index().SetUnique(true).SetName("u")})
	cmdErr(t, err, 67)
	// Writes after the build are indexed too.
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1000}, {Key: "a", Value: 3}, {Key: "b", Value: bson.D{{Key: "c", Value: bson.D{{Key: "d", Value: 5}}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 0}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 777}}}}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		filter bson.D
		index  bool
	}{
		{bson.D{{Key: "a", Value: 3}}, true},
		{bson.D{{Key: "a", Value: 777}}, true},
		{bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 50}}}}, true},
		{bson.D{{Key: "a", Value: bson.D{{Key: "$in", Value: bson.A{"tc", 4}}}}}, true},
		{bson.D{{Key: "sub.x", Value: 9}}, true},
		{bson.D{{Key: "sub.x", Value: bson.D{{Key: "$lt", Value: 3}}}}, true},
		{bson.D{{Key: "sub.x", Value: 3}}, true},
		{bson.D{{Key: "b.c.d", Value: bson.D{{Key: "$gt", Value: 4}, {Key: "$lte", Value: 6}}}}, true},
		{bson.D{{Key: "sub.y", Value: "sc"}, {Key: "a", Value: bson.D{{Key: "$exists", Value: true}}}}, true},
		// Excluded by the projection, positional, a document value, null:
		// collection scans.
		{bson.D{{Key: "secret", Value: 1}}, false},
		{bson.D{{Key: "a.0", Value: 3}}, false},
		{bson.D{{Key: "sub", Value: bson.D{}}}, false},
		{bson.D{{Key: "a", Value: nil}}, false},
	}
	ids := func(o *options.FindOptionsBuilder, f bson.D) []int32 {
		cur, err := coll.Find(ctx(t), f, o.SetSort(bson.D{{Key: "_id", Value: 1}}))
		if err != nil {
			t.Fatalf("find %v: %v", f, err)
		}
		var out []int32
		for cur.Next(ctx(t)) {
			out = append(out, cur.Current.Lookup("_id").Int32())
		}
		return out
	}
	for _, tc := range cases {
		ex, err := db.RunCommand(ctx(t), bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "wild"}, {Key: "filter", Value: tc.filter}}}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		plan := ex.Lookup("queryPlanner", "winningPlan").String()
		if used := strings.Contains(plan, `"$**_1"`); used != tc.index {
			t.Errorf("filter %v: plan %s, want the wildcard index: %v", tc.filter, plan, tc.index)
		}
		viaIndex := ids(options.Find(), tc.filter)
		scan := ids(options.Find().SetHint(bson.D{{Key: "$natural", Value: 1}}), tc.filter)
		if len(viaIndex) != len(scan) || (tc.index && len(scan) == 0) {
			t.Errorf("filter %v: %d documents through the planner, %d by scan", tc.filter, len(viaIndex), len(scan))
			continue
		}
		for i := range scan {
			if scan[i] != viaIndex[i] {
				t.Errorf("filter %v: results differ at %d", tc.filter, i)
				break
			}
		}
	}
	// validate checks the wildcard entries against the documents.
	var v bson.M
	if err := db.RunCommand(ctx(t), bson.D{{Key: "validate", Value: "wild"}}).Decode(&v); err != nil || v["valid"] != true {
		t.Errorf("validate = %v, %v", v, err)
	}
}
