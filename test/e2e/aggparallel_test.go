package e2e

import (
	"reflect"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestAggregateParallelGroup runs $group pipelines the server splits across
// cores (over a collection scan and over an index plan) and a $lookup whose
// correlated sub-pipeline is served by an index, and checks them against
// answers computed here.
func TestAggregateParallelGroup(t *testing.T) {
	_, client := connect(t)
	coll := client.Database("e2eaggpar").Collection("rows")
	const n = 6000
	var docs []any
	type agg struct {
		n, sum      int32
		first, last int32
	}
	want := map[int32]*agg{}
	for i := int32(0); i < n; i++ {
		g := (i * 7) % 11
		d := bson.D{{Key: "_id", Value: i}, {Key: "g", Value: g}}
		if i%5 != 0 {
			d = append(d, bson.E{Key: "v", Value: i % 13})
		}
		docs = append(docs, d)
		a := want[g]
		if a == nil {
			a = &agg{first: i}
			want[g] = a
		}
		a.n++
		if i%5 != 0 {
			a.sum += i % 13
		}
		a.last = i
	}
	if _, err := coll.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "g", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	group := bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$g"}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}},
		{Key: "sum", Value: bson.D{{Key: "$sum", Value: "$v"}}}, {Key: "first", Value: bson.D{{Key: "$first", Value: "$_id"}}},
		{Key: "last", Value: bson.D{{Key: "$last", Value: "$_id"}}}}}}
	sortID := bson.D{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}}
	expect := func(keep func(g int32) bool) []bson.M {
		var out []bson.M
		for g := int32(0); g < 11; g++ {
			if a := want[g]; a != nil && keep(g) {
				out = append(out, bson.M{"_id": g, "n": a.n, "sum": a.sum, "first": a.first, "last": a.last})
			}
		}
		return out
	}
	for name, tc := range map[string]struct {
		pipeline bson.A
		keep     func(int32) bool
	}{
		"collection scan": {bson.A{group, sortID}, func(int32) bool { return true }},
		"index plan": {bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "g", Value: bson.D{{Key: "$in", Value: bson.A{2, 5, 9}}}}}}}, group, sortID},
			func(g int32) bool { return g == 2 || g == 5 || g == 9 }},
		"filtered scan": {bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: 0}}}, {Key: "g", Value: bson.D{{Key: "$ne", Value: 3}}}}}}, group, sortID},
			func(g int32) bool { return g != 3 }},
	} {
		t.Run(name, func(t *testing.T) {
			cur, err := coll.Aggregate(ctx(t), tc.pipeline)
			if got := aggAll(t, cur, err); !reflect.DeepEqual(got, expect(tc.keep)) {
				t.Fatalf("got  %v\nwant %v", got, expect(tc.keep))
			}
		})
	}
	t.Run("lookup with an indexed correlated match", func(t *testing.T) {
		cur, err := coll.Aggregate(ctx(t), bson.A{
			bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$g"}}}},
			sortID,
			bson.D{{Key: "$limit", Value: 3}},
			bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "rows"}, {Key: "let", Value: bson.D{{Key: "gv", Value: "$_id"}}},
				{Key: "pipeline", Value: bson.A{
					bson.D{{Key: "$match", Value: bson.D{{Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{"$g", "$$gv"}}}}}}},
					bson.D{{Key: "$count", Value: "c"}},
				}}, {Key: "as", Value: "m"}}}},
		})
		got := aggAll(t, cur, err)
		if len(got) != 3 {
			t.Fatalf("got %v", got)
		}
		for g, d := range got {
			m, _ := d["m"].(bson.A)
			if d["_id"] != int32(g) || len(m) != 1 || m[0].(bson.D)[0].Value != want[int32(g)].n {
				t.Fatalf("group %d: got %v, want count %d", g, d, want[int32(g)].n)
			}
		}
	})
}
