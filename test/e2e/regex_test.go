package e2e

import (
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestRegexOneTranslator: find's $regex, aggregate's $regexMatch and
// listCollections' filter translate patterns alike ("$" before a final
// newline, \Q..\E, inline flags) and refuse the same constructs, with
// each operator's code.
func TestRegexOneTranslator(t *testing.T) {
	_, client := connect(t)
	db := client.Database("e2eregex")
	coll := db.Collection("s")
	if _, err := coll.InsertMany(ctx(t), []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "s", Value: "ab\n"}},
		bson.D{{Key: "_id", Value: 2}, {Key: "s", Value: "x.$y"}},
		bson.D{{Key: "_id", Value: 3}, {Key: "s", Value: "b\nc"}},
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pattern string
		want    []int32
	}{
		{`^ab$`, []int32{1}},
		{`\Q.$\E`, []int32{2}},
		{`(?m)b$`, []int32{1, 3}},
		{`b$`, []int32{1}},
		{`(?x) a b`, []int32{1}},
	} {
		var find, agg []int32
		cur, err := coll.Find(ctx(t), bson.D{{Key: "s", Value: bson.D{{Key: "$regex", Value: c.pattern}}}})
		for _, d := range aggAll(t, cur, err) {
			find = append(find, d["_id"].(int32))
		}
		cur, err = coll.Aggregate(ctx(t), bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "$expr", Value: bson.D{{Key: "$regexMatch",
			Value: bson.D{{Key: "input", Value: "$s"}, {Key: "regex", Value: c.pattern}}}}}}}}})
		for _, d := range aggAll(t, cur, err) {
			agg = append(agg, d["_id"].(int32))
		}
		if !slices.Equal(find, c.want) || !slices.Equal(agg, c.want) {
			t.Errorf("%q: find %v, $regexMatch %v, want %v", c.pattern, find, agg, c.want)
		}
	}
	for _, p := range []string{"a(?=b)", `(a)\1`, "a++", "(?>a)"} {
		_, err := coll.Find(ctx(t), bson.D{{Key: "s", Value: bson.D{{Key: "$regex", Value: p}}}})
		cmdErr(t, err, 238)
		_, err = coll.Aggregate(ctx(t), bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "m", Value: bson.D{{Key: "$regexFind",
			Value: bson.D{{Key: "input", Value: "$s"}, {Key: "regex", Value: p}}}}}}}}})
		cmdErr(t, err, 238)
	}
	_, err := coll.Find(ctx(t), bson.D{{Key: "s", Value: bson.D{{Key: "$regex", Value: "[)"}}}})
	cmdErr(t, err, 51091)
	_, err = coll.Find(ctx(t), bson.D{{Key: "s", Value: bson.D{{Key: "$regex", Value: "ab\x00c"}}}})
	cmdErr(t, err, 2)
	_, err = coll.Aggregate(ctx(t), bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "m", Value: bson.D{{Key: "$regexMatch",
		Value: bson.D{{Key: "input", Value: "$s"}, {Key: "regex", Value: "[)"}}}}}}}}})
	cmdErr(t, err, 51111)

	if err := db.CreateCollection(ctx(t), "a.b"); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateCollection(ctx(t), "axb"); err != nil {
		t.Fatal(err)
	}
	names, err := db.ListCollectionNames(ctx(t), bson.D{{Key: "name", Value: bson.D{{Key: "$regex", Value: `^\Qa.b\E$`}}}})
	if err != nil || len(names) != 1 || names[0] != "a.b" {
		t.Fatalf("listCollections with \\Q..\\E: %v %v", names, err)
	}
	_, err = db.ListCollectionNames(ctx(t), bson.D{{Key: "name", Value: bson.D{{Key: "$regex", Value: `(?<=a)b`}}}})
	cmdErr(t, err, 238)
}
