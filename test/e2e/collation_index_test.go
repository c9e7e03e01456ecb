package e2e

import (
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestIndexCollation: an index with a collation stores collation keys; a
// query with the same collation uses it (bounds and sort), one with
// another collation does not, and a unique index enforces uniqueness
// under its collation.
func TestIndexCollation(t *testing.T) {
	_, client := connect(t)
	db := client.Database("idx")
	coll := db.Collection("coll")
	names := []string{"apple", "Apple", "APPLE", "banana", "Banana", "cherry", "äpfel", "Zebra", "zebra"}
	var docs []any
	for i, n := range names {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "name", Value: n}, {Key: "u", Value: n}})
	}
	if _, err := coll.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	ci := &options.Collation{Locale: "en", Strength: 2}
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "name", Value: 1}}, Options: options.Index().SetCollation(ci)}); err != nil {
		t.Fatal(err)
	}
	specs, err := coll.Indexes().ListSpecifications(ctx(t))
	if err != nil || len(specs) != 2 {
		t.Fatal(specs, err)
	}
	raw, _ := coll.Indexes().List(ctx(t))
	var all []bson.Raw
	if err := raw.All(ctx(t), &all); err != nil {
		t.Fatal(err)
	}
	if loc, ok := all[1].Lookup("collation", "locale").StringValueOK(); !ok || loc != "en" || all[1].Lookup("collation", "strength").Int32() != 2 {
		t.Errorf("listIndexes collation = %v", all[1].Lookup("collation"))
	}
	plan := func(filter, sort bson.D, c *options.Collation) string {
		cmd := bson.D{{Key: "find", Value: "coll"}, {Key: "filter", Value: filter}}
		if sort != nil {
			cmd = append(cmd, bson.E{Key: "sort", Value: sort})
		}
		if c != nil {
			cmd = append(cmd, bson.E{Key: "collation", Value: bson.D{{Key: "locale", Value: c.Locale}, {Key: "strength", Value: c.Strength}}})
		}
		ex, err := db.RunCommand(ctx(t), bson.D{{Key: "explain", Value: cmd}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		return ex.Lookup("queryPlanner", "winningPlan").String()
	}
	find := func(filter, sort bson.D, c *options.Collation) []string {
		o := options.Find().SetSort(sort)
		if c != nil {
			o.SetCollation(c)
		}
		cur, err := coll.Find(ctx(t), filter, o)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for cur.Next(ctx(t)) {
			out = append(out, cur.Current.Lookup("name").StringValue())
		}
		return out
	}
	filter := bson.D{{Key: "name", Value: "apple"}}
	if p := plan(filter, nil, ci); !strings.Contains(p, "name_1") {
		t.Errorf("same collation: plan %s, want name_1", p)
	}
	if p := plan(filter, nil, nil); strings.Contains(p, "name_1") {
		t.Errorf("binary query: plan %s uses the collated index", p)
	}
	if got := find(filter, bson.D{{Key: "_id", Value: 1}}, ci); strings.Join(got, ",") != "apple,Apple,APPLE" {
		t.Errorf("collated equality = %v", got)
	}
	if got := find(filter, bson.D{{Key: "_id", Value: 1}}, nil); strings.Join(got, ",") != "apple" {
		t.Errorf("binary equality = %v", got)
	}
	// Range and sort through the index, in collation order.
	rng := bson.D{{Key: "name", Value: bson.D{{Key: "$gte", Value: "B"}, {Key: "$lt", Value: "z"}}}}
	if p := plan(rng, bson.D{{Key: "name", Value: -1}}, ci); !strings.Contains(p, "name_1") || strings.Contains(p, `"SORT"`) {
		t.Errorf("collated range sort: plan %s", p)
	}
	got := find(rng, bson.D{{Key: "name", Value: -1}}, ci)
	scan := find(rng, bson.D{{Key: "name", Value: -1}}, ci)
	if len(got) != 3 || got[len(got)-1] != scan[len(scan)-1] || strings.ToLower(got[0]) != "cherry" {
		t.Errorf("collated range sorted = %v", got)
	}
	// A unique index under a case-insensitive collation refuses "APPLE"
	// beside "apple".
	_, err = coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "u", Value: 1}}, Options: options.Index().SetUnique(true).SetCollation(ci)})
	cmdErr(t, err, 11000)
	if _, err := coll.DeleteMany(ctx(t), bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{1, 2, 4, 8}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "u", Value: 1}}, Options: options.Index().SetUnique(true).SetCollation(ci)}); err != nil {
		t.Fatal(err)
	}
	_, err = coll.InsertOne(ctx(t), bson.D{{Key: "u", Value: "BANANA"}})
	var we mongo.WriteException
	if !errors.As(err, &we) || we.WriteErrors[0].Code != 11000 {
		t.Errorf("collated duplicate insert: %v", err)
	}
	// Text indexes take no collation.
	_, err = coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "name", Value: "text"}}, Options: options.Index().SetCollation(ci)})
	cmdErr(t, err, 67)
}
