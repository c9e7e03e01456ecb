package e2e

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestPlannerSortByIndex checks that a sort an index provides is answered
// by walking the index (forward or backward, no SORT stage, asserted
// through explain), with the same documents in the same order as a
// collection scan followed by a sort, across getMore batches.
func TestPlannerSortByIndex(t *testing.T) {
	_, client := connect(t)
	db := client.Database("idx")
	coll := db.Collection("sorted")
	var docs []any
	for i := 0; i < 300; i++ {
		d := bson.D{{Key: "_id", Value: i}, {Key: "a", Value: (i * 37) % 101}, {Key: "b", Value: i % 7}, {Key: "c", Value: (i * 13) % 50}, {Key: "x", Value: i % 3}}
		if i%10 == 0 {
			d = d[:1] // missing fields sort as null, first
		}
		docs = append(docs, d)
	}
	if _, err := coll.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	for _, m := range []mongo.IndexModel{
		{Keys: bson.D{{Key: "a", Value: 1}}},
		{Keys: bson.D{{Key: "b", Value: 1}, {Key: "c", Value: -1}}},
		{Keys: bson.D{{Key: "x", Value: 1}}},
	} {
		if _, err := coll.Indexes().CreateOne(ctx(t), m); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		filter, sort bson.D
		limit        int64
		index, dir   string // "" index: a SORT stage is expected
	}{
		{bson.D{}, bson.D{{Key: "a", Value: 1}}, 0, "a_1", "forward"},
		{bson.D{}, bson.D{{Key: "a", Value: -1}}, 0, "a_1", "backward"},
		{bson.D{{Key: "a", Value: bson.D{{Key: "$gt", Value: 20}, {Key: "$lte", Value: 80}}}}, bson.D{{Key: "a", Value: -1}}, 5, "a_1", "backward"},
		{bson.D{{Key: "a", Value: bson.D{{Key: "$in", Value: bson.A{3, 50, 7, 99}}}}}, bson.D{{Key: "a", Value: -1}}, 0, "a_1", "backward"},
		{bson.D{{Key: "b", Value: 3}}, bson.D{{Key: "c", Value: -1}}, 0, "b_1_c_-1", "forward"},
		{bson.D{{Key: "b", Value: 3}, {Key: "c", Value: bson.D{{Key: "$lt", Value: 30}}}}, bson.D{{Key: "c", Value: 1}}, 0, "b_1_c_-1", "backward"},
		{bson.D{}, bson.D{{Key: "b", Value: -1}, {Key: "c", Value: 1}}, 0, "b_1_c_-1", "backward"},
		// An equality plan on another index keeps its SORT.
		{bson.D{{Key: "x", Value: 1}}, bson.D{{Key: "a", Value: 1}}, 0, "", ""},
		// Mixed directions no index has: SORT.
		{bson.D{}, bson.D{{Key: "b", Value: 1}, {Key: "c", Value: 1}}, 0, "", ""},
	}
	for _, tc := range cases {
		var ex bson.Raw
		cmd := bson.D{{Key: "find", Value: "sorted"}, {Key: "filter", Value: tc.filter}, {Key: "sort", Value: tc.sort}}
		if tc.limit > 0 {
			cmd = append(cmd, bson.E{Key: "limit", Value: tc.limit})
		}
		ex, err := db.RunCommand(ctx(t), bson.D{{Key: "explain", Value: cmd}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		plan := ex.Lookup("queryPlanner", "winningPlan").String()
		hasSort := strings.Contains(plan, `"SORT"`)
		if tc.index != "" && (hasSort || !strings.Contains(plan, `"indexName": "`+tc.index+`"`) || !strings.Contains(plan, `"direction": "`+tc.dir+`"`)) {
			t.Errorf("filter %v sort %v: plan %s, want %s %s without SORT", tc.filter, tc.sort, plan, tc.index, tc.dir)
		}
		if tc.index == "" && !hasSort {
			t.Errorf("filter %v sort %v: plan %s, want a SORT", tc.filter, tc.sort, plan)
		}
		// Same documents, same order as a scan and a sort (keys tie: the
		// comparison is on the sort fields only).
		get := func(o *options.FindOptionsBuilder) []bson.Raw {
			o.SetSort(tc.sort).SetBatchSize(7)
			if tc.limit > 0 {
				o.SetLimit(tc.limit)
			}
			cur, err := coll.Find(ctx(t), tc.filter, o)
			if err != nil {
				t.Fatal(err)
			}
			var out []bson.Raw
			for cur.Next(ctx(t)) {
				out = append(out, append(bson.Raw(nil), cur.Current...))
			}
			if err := cur.Err(); err != nil {
				t.Fatal(err)
			}
			return out
		}
		viaIndex := get(options.Find())
		scan := get(options.Find().SetHint(bson.D{{Key: "$natural", Value: 1}}))
		if len(viaIndex) != len(scan) || len(scan) == 0 {
			t.Errorf("filter %v sort %v: %d documents through the index, %d by scan", tc.filter, tc.sort, len(viaIndex), len(scan))
			continue
		}
		for i := range scan {
			for _, k := range tc.sort {
				a, b := viaIndex[i].Lookup(k.Key), scan[i].Lookup(k.Key)
				if a.Type != b.Type || !a.Equal(b) {
					t.Errorf("filter %v sort %v: document %d has %s = %v, scan has %v", tc.filter, tc.sort, i, k.Key, a, b)
				}
			}
		}
	}
}
