package e2e

import (
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestTextScoreAggregate: {$meta: "textScore"} in a pipeline over a
// leading $text $match, in expressions and in $sort, through the stages
// that hand each document's score on; 40218 where there is no score.
func TestTextScoreAggregate(t *testing.T) {
	_, client := connect(t)
	coll := client.Database("texta").Collection("articles")
	if _, err := coll.InsertMany(ctx(t), []any{
		bson.D{{Key: "_id", Value: int32(1)}, {Key: "subject", Value: "coffee"}, {Key: "tags", Value: bson.A{"a", "b"}}},
		bson.D{{Key: "_id", Value: int32(2)}, {Key: "subject", Value: "Coffee Shopping"}, {Key: "tags", Value: bson.A{"c"}}},
		bson.D{{Key: "_id", Value: int32(3)}, {Key: "subject", Value: "Baking a cake"}},
		bson.D{{Key: "_id", Value: int32(7)}, {Key: "subject", Value: "coffee and cream"}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "subject", Value: "text"}}}); err != nil {
		t.Fatal(err)
	}
	text := bson.D{{Key: "$match", Value: search("coffee")}}
	meta := bson.D{{Key: "$meta", Value: "textScore"}}
	type scored struct {
		ID int32   `bson:"_id"`
		S  float64 `bson:"s"`
	}
	run := func(pipeline ...bson.D) ([]scored, error) {
		cur, err := coll.Aggregate(ctx(t), pipeline)
		if err != nil {
			return nil, err
		}
		var out []scored
		err = cur.All(ctx(t), &out)
		return out, err
	}
	// "coffee" as the whole subject scores 1; in the other two 0.75.
	cases := []struct {
		name     string
		pipeline []bson.D
		want     []scored
	}{
		{"$project then sort by the field", []bson.D{text,
			{{Key: "$project", Value: bson.D{{Key: "s", Value: meta}}}},
			{{Key: "$sort", Value: bson.D{{Key: "s", Value: -1}, {Key: "_id", Value: 1}}}}},
			[]scored{{1, 1}, {2, 0.75}, {7, 0.75}}},
		{"$sort by score, then $addFields", []bson.D{text,
			{{Key: "$sort", Value: bson.D{{Key: "score", Value: meta}, {Key: "_id", Value: 1}}}},
			{{Key: "$addFields", Value: bson.D{{Key: "s", Value: meta}}}},
			{{Key: "$project", Value: bson.D{{Key: "s", Value: 1}}}}},
			[]scored{{1, 1}, {2, 0.75}, {7, 0.75}}},
		{"top-k $sort by score, $limit, $set", []bson.D{text,
			{{Key: "$sort", Value: bson.D{{Key: "score", Value: meta}, {Key: "_id", Value: -1}}}},
			{{Key: "$limit", Value: 2}},
			{{Key: "$set", Value: bson.D{{Key: "s", Value: bson.D{{Key: "$multiply", Value: bson.A{meta, 4}}}}}}},
			{{Key: "$project", Value: bson.D{{Key: "s", Value: 1}}}}},
			[]scored{{1, 4}, {7, 3}}},
		{"$match on the score, $skip", []bson.D{text,
			{{Key: "$match", Value: bson.D{{Key: "$expr", Value: bson.D{{Key: "$lt", Value: bson.A{meta, 0.9}}}}}}},
			{{Key: "$skip", Value: 0}},
			{{Key: "$project", Value: bson.D{{Key: "s", Value: meta}}}}},
			[]scored{{2, 0.75}, {7, 0.75}}},
		{"$unwind hands the score to every copy", []bson.D{text,
			{{Key: "$unwind", Value: "$tags"}},
			{{Key: "$project", Value: bson.D{{Key: "s", Value: meta}}}}},
			[]scored{{1, 1}, {1, 1}, {2, 0.75}}},
		{"$group sums the scores", []bson.D{text,
			{{Key: "$group", Value: bson.D{{Key: "_id", Value: int32(0)}, {Key: "s", Value: bson.D{{Key: "$sum", Value: meta}}}}}}},
			[]scored{{0, 2.5}}},
	}
	for _, tc := range cases {
		got, err := run(tc.pipeline...)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		ok := len(got) == len(tc.want)
		for i := 0; ok && i < len(got); i++ {
			ok = got[i].ID == tc.want[i].ID && math.Abs(got[i].S-tc.want[i].S) < 1e-9
		}
		if !ok {
			t.Errorf("%s = %+v, want %+v", tc.name, got, tc.want)
		}
	}
	// No score: without $text, after a $group, in a $lookup sub-pipeline.
	for name, pipeline := range map[string][]bson.D{
		"$project without $text": {{{Key: "$project", Value: bson.D{{Key: "s", Value: meta}}}}},
		"$sort without $text":    {{{Key: "$sort", Value: bson.D{{Key: "s", Value: meta}}}}},
		"after $group": {text, {{Key: "$group", Value: bson.D{{Key: "_id", Value: "$subject"}}}},
			{{Key: "$project", Value: bson.D{{Key: "s", Value: meta}}}}},
		"$sort after $group": {text, {{Key: "$group", Value: bson.D{{Key: "_id", Value: "$subject"}}}},
			{{Key: "$sort", Value: bson.D{{Key: "s", Value: meta}}}}},
		"in a $lookup pipeline": {text, {{Key: "$lookup", Value: bson.D{{Key: "from", Value: "articles"}, {Key: "as", Value: "x"},
			{Key: "pipeline", Value: bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "s", Value: meta}}}}}}}}}},
	} {
		_, err := run(pipeline...)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		cmdErr(t, err, 40218)
	}
}
