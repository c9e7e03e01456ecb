package e2e

import (
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func TestIndexes(t *testing.T) {
	_, client := connect(t)
	db := client.Database("idx")
	coll := db.Collection("people")
	for i := 0; i < 100; i++ {
		if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: i}, {Key: "email", Value: "u" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)}, {Key: "tags", Value: bson.A{"t", i % 3}}}); err != nil {
			t.Fatal(err)
		}
	}
	name, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "email", Value: 1}}, Options: options.Index().SetUnique(true)})
	if err != nil || name != "email_1" {
		t.Fatalf("createIndex = %q, %v", name, err)
	}
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "tags", Value: 1}, {Key: "_id", Value: -1}}}); err != nil {
		t.Fatal(err)
	}
	specs, err := coll.Indexes().ListSpecifications(ctx(t))
	if err != nil || len(specs) != 3 || specs[1].Name != "email_1" || specs[1].Unique == nil || !*specs[1].Unique {
		t.Fatalf("listIndexes = %+v, %v", specs, err)
	}
	// Unique violations: insert, update, and the error names the index.
	_, err = coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1000}, {Key: "email", Value: "ua"}})
	var we mongo.WriteException
	if !errors.As(err, &we) || we.WriteErrors[0].Code != 11000 || !strings.Contains(we.WriteErrors[0].Message, "index: email_1 dup key: { email: \"ua\" }") {
		t.Fatalf("duplicate email insert: %v", err)
	}
	_, err = coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "email", Value: "ua"}}}})
	if !errors.As(err, &we) || we.WriteErrors[0].Code != 11000 {
		t.Fatalf("duplicate email update: %v", err)
	}
	// Changing a value frees the old one.
	if _, err := coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 0}}, bson.D{{Key: "$set", Value: bson.D{{Key: "email", Value: "new"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1001}, {Key: "email", Value: "ua"}}); err != nil {
		t.Fatalf("re-using a freed value: %v", err)
	}
	// Deleting frees values too.
	if _, err := coll.DeleteOne(ctx(t), bson.D{{Key: "_id", Value: 1001}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1002}, {Key: "email", Value: "ua"}}); err != nil {
		t.Fatalf("re-using a deleted value: %v", err)
	}
	// Parallel arrays in a compound index are refused.
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	_, err = coll.InsertOne(ctx(t), bson.D{{Key: "a", Value: bson.A{1}}, {Key: "b", Value: bson.A{2}}})
	if !errors.As(err, &we) || we.WriteErrors[0].Code != 171 {
		t.Fatalf("parallel arrays: %v", err)
	}
	// Building a unique index over duplicates fails and leaves no index.
	_, err = coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "tags", Value: 1}}, Options: options.Index().SetUnique(true)})
	cmdErr(t, err, 11000)
	// Same key, other name: IndexOptionsConflict; same name, other key: IndexKeySpecsConflict.
	_, err = coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "email", Value: 1}}, Options: options.Index().SetUnique(true).SetName("other")})
	cmdErr(t, err, 85)
	_, err = coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "zzz", Value: 1}}, Options: options.Index().SetName("email_1")})
	cmdErr(t, err, 86)
	// Dropping: by name, by key, "*"; the _id index stays.
	if err := coll.Indexes().DropOne(ctx(t), "email_1"); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 2000}, {Key: "email", Value: "ua"}}); err != nil {
		t.Fatalf("after dropping the unique index: %v", err)
	}
	cmdErr(t, coll.Indexes().DropOne(ctx(t), "email_1"), 27)
	cmdErr(t, coll.Indexes().DropOne(ctx(t), "_id_"), 72)
	if err := db.RunCommand(ctx(t), bson.D{{Key: "dropIndexes", Value: "people"}, {Key: "index", Value: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := coll.Indexes().DropAll(ctx(t)); err != nil {
		t.Fatal(err)
	}
	specs, _ = coll.Indexes().ListSpecifications(ctx(t))
	if len(specs) != 1 || specs[0].Name != "_id_" {
		t.Fatalf("after dropping all: %+v", specs)
	}
}

// TestPlannerMatchesScan checks that queries answered through indexes
// return exactly what a collection scan returns, over documents with
// arrays, mixed types and missing fields.
func TestPlannerMatchesScan(t *testing.T) {
	_, client := connect(t)
	coll := client.Database("idx").Collection("plan")
	var docs []any
	for i := 0; i < 400; i++ {
		d := bson.D{{Key: "_id", Value: i}}
		switch i % 6 {
		case 0:
			d = append(d, bson.E{Key: "a", Value: i % 17})
		case 1:
			d = append(d, bson.E{Key: "a", Value: bson.A{i % 5, i % 13, 100 + i%3}})
		case 2:
			d = append(d, bson.E{Key: "a", Value: float64(i%11) + 0.5})
		case 3:
			d = append(d, bson.E{Key: "a", Value: "s" + string(rune('a'+i%7))})
		case 4:
			d = append(d, bson.E{Key: "a", Value: bson.A{bson.D{{Key: "b", Value: i % 4}}, bson.D{{Key: "b", Value: i % 9}}}})
		}
		d = append(d, bson.E{Key: "h", Value: i % 10})
		docs = append(docs, d)
	}
	if _, err := coll.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	for _, m := range []mongo.IndexModel{
		{Keys: bson.D{{Key: "a", Value: 1}}},
		{Keys: bson.D{{Key: "a.b", Value: -1}}},
		{Keys: bson.D{{Key: "h", Value: "hashed"}}},
		{Keys: bson.D{{Key: "h", Value: 1}, {Key: "a", Value: -1}}},
	} {
		if _, err := coll.Indexes().CreateOne(ctx(t), m); err != nil {
			t.Fatal(err)
		}
	}
	filters := []bson.D{
		{{Key: "a", Value: 3}},
		{{Key: "a", Value: bson.D{{Key: "$gt", Value: 4}, {Key: "$lt", Value: 9}}}},
		{{Key: "a", Value: bson.D{{Key: "$gte", Value: 100}}}},
		{{Key: "a", Value: bson.D{{Key: "$in", Value: bson.A{1, 2, "sc", 7.5}}}}},
		{{Key: "a", Value: bson.D{{Key: "$lte", Value: "sd"}}}},
		{{Key: "a", Value: nil}},
		{{Key: "a.b", Value: bson.D{{Key: "$gt", Value: 1}, {Key: "$lte", Value: 6}}}},
		{{Key: "a.b", Value: 3}},
		{{Key: "h", Value: 4}},
		{{Key: "h", Value: bson.D{{Key: "$in", Value: bson.A{1, 9}}}}, {Key: "a", Value: bson.D{{Key: "$exists", Value: true}}}},
		{{Key: "$and", Value: bson.A{bson.D{{Key: "a", Value: bson.D{{Key: "$gt", Value: 2}}}}, bson.D{{Key: "a", Value: bson.D{{Key: "$lt", Value: 6}}}}}}},
		// Compound {h: 1, a: -1}: points on h with bounds on a.
		{{Key: "h", Value: 3}, {Key: "a", Value: bson.D{{Key: "$gte", Value: 2}, {Key: "$lt", Value: 12}}}},
		{{Key: "h", Value: bson.D{{Key: "$in", Value: bson.A{1, 5, 7}}}}, {Key: "a", Value: bson.D{{Key: "$gt", Value: 100}}}},
		{{Key: "h", Value: 2}, {Key: "a", Value: bson.D{{Key: "$in", Value: bson.A{"sc", 8.5, 3}}}}},
		{{Key: "h", Value: 0}, {Key: "a", Value: bson.D{{Key: "$lte", Value: "sz"}}}},
	}
	ids := func(opts *options.FindOptionsBuilder, f bson.D) []int32 {
		cur, err := coll.Find(ctx(t), f, opts.SetSort(bson.D{{Key: "_id", Value: 1}}))
		if err != nil {
			t.Fatalf("find %v: %v", f, err)
		}
		var out []int32
		for cur.Next(ctx(t)) {
			out = append(out, cur.Current.Lookup("_id").Int32())
		}
		return out
	}
	for _, f := range filters {
		viaIndex := ids(options.Find(), f)
		scan := ids(options.Find().SetHint(bson.D{{Key: "$natural", Value: 1}}), f)
		if len(viaIndex) != len(scan) {
			t.Errorf("filter %v: %d documents through the planner, %d by scan", f, len(viaIndex), len(scan))
			continue
		}
		for i := range scan {
			if scan[i] != viaIndex[i] {
				t.Errorf("filter %v: results differ at %d", f, i)
				break
			}
		}
		// Counting and deleting follow the same plans.
		n, err := coll.CountDocuments(ctx(t), f)
		if err != nil || int(n) != len(scan) {
			t.Errorf("count %v = %d, %v; want %d", f, n, err, len(scan))
		}
	}
	// Multi-document updates through an index see each document once.
	r, err := coll.UpdateMany(ctx(t), bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 0}, {Key: "$lt", Value: 200}}}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := coll.CountDocuments(ctx(t), bson.D{{Key: "n", Value: 1}}); n != r.ModifiedCount || n == 0 {
		t.Fatalf("updateMany modified %d, %d documents have n=1", r.ModifiedCount, n)
	}
	if n, _ := coll.CountDocuments(ctx(t), bson.D{{Key: "n", Value: bson.D{{Key: "$gt", Value: 1}}}}); n != 0 {
		t.Fatalf("%d documents were updated twice", n)
	}
}
