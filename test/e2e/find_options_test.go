package e2e

import (
	"errors"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestFindKeyOptions: find's min and max (with a hint, mongod's errors
// without one or with bounds that do not fit the index), returnKey (the
// index key of each result, empty documents for a collection scan) and
// showRecordId ($recordId added), also under a sort and in explain.
func TestFindKeyOptions(t *testing.T) {
	_, client := connect(t)
	db := client.Database("fopts")
	coll := db.Collection("c")
	for i := 0; i < 10; i++ {
		if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i * 10}, {Key: "b", Value: i % 3}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, keys := range []bson.D{{{Key: "a", Value: 1}}, {{Key: "b", Value: -1}, {Key: "a", Value: 1}}} {
		if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: keys}); err != nil {
			t.Fatal(err)
		}
	}
	find := func(extra ...bson.E) ([]bson.Raw, error) {
		cmd := append(bson.D{{Key: "find", Value: "c"}}, extra...)
		var reply struct {
			Cursor struct{ FirstBatch []bson.Raw }
		}
		err := db.RunCommand(ctx(t), cmd).Decode(&reply)
		return reply.Cursor.FirstBatch, err
	}
	ids := func(docs []bson.Raw) []int32 {
		var out []int32
		for _, d := range docs {
			out = append(out, d.Lookup("_id").Int32())
		}
		return out
	}
	hintA := bson.E{Key: "hint", Value: bson.D{{Key: "a", Value: 1}}}
	for _, tc := range []struct {
		name  string
		extra []bson.E
		want  []int32
	}{
		{"min and max", []bson.E{{Key: "min", Value: bson.D{{Key: "a", Value: 20}}}, {Key: "max", Value: bson.D{{Key: "a", Value: 50}}}, hintA}, []int32{2, 3, 4}},
		{"min only", []bson.E{{Key: "min", Value: bson.D{{Key: "a", Value: 75}}}, hintA}, []int32{8, 9}},
		{"max only, with a filter", []bson.E{{Key: "max", Value: bson.D{{Key: "a", Value: 40}}}, {Key: "filter", Value: bson.D{{Key: "b", Value: 0}}}, hintA}, []int32{0, 3}},
		{"max with a sort", []bson.E{{Key: "max", Value: bson.D{{Key: "a", Value: 30}}}, {Key: "sort", Value: bson.D{{Key: "_id", Value: -1}}}, hintA}, []int32{2, 1, 0}},
		{"compound with a descending field", []bson.E{{Key: "min", Value: bson.D{{Key: "b", Value: 2}, {Key: "a", Value: 50}}}, {Key: "max", Value: bson.D{{Key: "b", Value: 1}, {Key: "a", Value: 40}}},
			{Key: "hint", Value: "b_-1_a_1"}}, []int32{5, 8, 1}},
		{"on _id", []bson.E{{Key: "min", Value: bson.D{{Key: "_id", Value: 7}}}, {Key: "hint", Value: "_id_"}}, []int32{7, 8, 9}},
	} {
		docs, err := find(tc.extra...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := ids(docs); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Fatalf("%s: _ids %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name  string
		extra []bson.E
		code  int32
	}{
		{"no hint", []bson.E{{Key: "min", Value: bson.D{{Key: "a", Value: 0}}}}, 51173},
		{"other field", []bson.E{{Key: "min", Value: bson.D{{Key: "b", Value: 0}}}, hintA}, 51174},
		{"fields out of order", []bson.E{{Key: "min", Value: bson.D{{Key: "a", Value: 0}, {Key: "b", Value: 0}}}, {Key: "hint", Value: "b_-1_a_1"}}, 51174},
		{"natural hint", []bson.E{{Key: "min", Value: bson.D{{Key: "a", Value: 0}}}, {Key: "hint", Value: bson.D{{Key: "$natural", Value: 1}}}}, 51174},
		{"min after max", []bson.E{{Key: "min", Value: bson.D{{Key: "a", Value: 50}}}, {Key: "max", Value: bson.D{{Key: "a", Value: 50}}}, hintA}, 51175},
		{"min not a document", []bson.E{{Key: "min", Value: 1}, hintA}, 14},
	} {
		_, err := find(tc.extra...)
		if err == nil {
			t.Fatalf("%s: no error", tc.name)
		}
		cmdErr(t, err, tc.code)
	}

	// returnKey: the index's key, or {} from a collection scan.
	docs, err := find(bson.E{Key: "filter", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 70}}}}}, bson.E{Key: "returnKey", Value: true}, hintA)
	if err != nil || len(docs) != 3 {
		t.Fatalf("returnKey: %v %v", docs, err)
	}
	for i, d := range docs {
		if want := fmt.Sprintf(`{"a": {"$numberInt":"%d"}}`, 70+10*i); d.String() != want {
			t.Fatalf("returnKey result %s, want %s", d, want)
		}
	}
	docs, err = find(bson.E{Key: "filter", Value: bson.D{{Key: "b", Value: 1}}}, bson.E{Key: "returnKey", Value: true}, bson.E{Key: "hint", Value: bson.D{{Key: "$natural", Value: 1}}})
	if err != nil || len(docs) != 3 || len(docs[0]) != 5 {
		t.Fatalf("returnKey over a collection scan: %v %v", docs, err)
	}
	// Sorted on _id (the _id index), with showRecordId: the spec test's
	// shape, the key alone.
	docs, err = find(bson.E{Key: "sort", Value: bson.D{{Key: "_id", Value: 1}}}, bson.E{Key: "returnKey", Value: true}, bson.E{Key: "showRecordId", Value: true})
	if err != nil || len(docs) != 10 {
		t.Fatalf("returnKey+showRecordId: %v %v", docs, err)
	}
	for i, d := range docs {
		if want := fmt.Sprintf(`{"_id": {"$numberInt":"%d"}}`, i); d.String() != want {
			t.Fatalf("result %d: %s, want %s", i, d, want)
		}
	}
	// showRecordId keeps the projected document; a blocking sort keeps it too.
	docs, err = find(bson.E{Key: "projection", Value: bson.D{{Key: "a", Value: 1}}}, bson.E{Key: "sort", Value: bson.D{{Key: "b", Value: 1}, {Key: "a", Value: -1}}}, bson.E{Key: "showRecordId", Value: true}, bson.E{Key: "limit", Value: 2})
	if err != nil || len(docs) != 2 {
		t.Fatalf("showRecordId under a sort: %v %v", docs, err)
	}
	if docs[0].Lookup("a").Int32() != 90 || docs[1].Lookup("a").Int32() != 60 || docs[0].Lookup("$recordId").Type != bson.TypeBinary {
		t.Fatalf("showRecordId under a sort: %v", docs)
	}
	if _, err := docs[0].LookupErr("b"); err == nil {
		t.Fatalf("the projection was not applied: %s", docs[0])
	}
	// Capped collections show their record ids as NumberLong, in order.
	if err := db.RunCommand(ctx(t), bson.D{{Key: "create", Value: "capped"}, {Key: "capped", Value: true}, {Key: "size", Value: 4096}}).Err(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := db.Collection("capped").InsertOne(ctx(t), bson.D{{Key: "i", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	var reply struct {
		Cursor struct{ FirstBatch []bson.Raw }
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "find", Value: "capped"}, {Key: "showRecordId", Value: true}}).Decode(&reply); err != nil {
		t.Fatal(err)
	}
	last := int64(0)
	for _, d := range reply.Cursor.FirstBatch {
		rid := d.Lookup("$recordId")
		if rid.Type != bson.TypeInt64 || rid.Int64() <= last {
			t.Fatalf("capped record ids: %v", reply.Cursor.FirstBatch)
		}
		last = rid.Int64()
	}

	// Explain: the min/max plan is an IXSCAN of the hinted index, under
	// RETURN_KEY with returnKey, and its figures agree.
	var ex bson.Raw
	if err := db.RunCommand(ctx(t), bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "c"}, {Key: "min", Value: bson.D{{Key: "a", Value: 20}}},
		{Key: "max", Value: bson.D{{Key: "a", Value: 50}}}, hintA, {Key: "returnKey", Value: true}}}, {Key: "verbosity", Value: "executionStats"}}).Decode(&ex); err != nil {
		t.Fatal(err)
	}
	wp := ex.Lookup("queryPlanner", "winningPlan").Document()
	if wp.Lookup("stage").StringValue() != "RETURN_KEY" || wp.Lookup("inputStage", "inputStage", "stage").StringValue() != "IXSCAN" ||
		wp.Lookup("inputStage", "inputStage", "indexName").StringValue() != "a_1" {
		t.Fatalf("winning plan %s", wp)
	}
	if n, _ := ex.Lookup("executionStats", "nReturned").AsInt64OK(); n != 3 {
		t.Fatalf("executionStats %s", ex.Lookup("executionStats"))
	}
	if k, _ := ex.Lookup("executionStats", "totalKeysExamined").AsInt64OK(); k > 4 {
		t.Fatalf("the min/max scan examined %d keys", k)
	}
	if _, err := find(bson.E{Key: "returnKey", Value: false}, bson.E{Key: "showRecordId", Value: false}); err != nil {
		t.Error(err)
	}
}

// TestUpdateConstants: an update statement's c gives its pipeline
// variables, beside the command's let.
func TestUpdateConstants(t *testing.T) {
	_, client := connect(t)
	db := client.Database("uconst")
	coll := db.Collection("c")
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	stmt := bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}},
		{Key: "u", Value: bson.A{bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: "$$v"}, {Key: "y", Value: "$$w"}}}}}},
		{Key: "c", Value: bson.D{{Key: "v", Value: 5}}}}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{stmt}},
		{Key: "let", Value: bson.D{{Key: "w", Value: "let"}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	var got struct {
		X int32
		Y string
	}
	if err := coll.FindOne(ctx(t), bson.D{}).Decode(&got); err != nil || got.X != 5 || got.Y != "let" {
		t.Errorf("after the update: %+v, %v", got, err)
	}
	bad := bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "c", Value: bson.D{{Key: "v", Value: 5}}}}
	err := db.RunCommand(ctx(t), bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bad}}}).Err()
	var we mongo.WriteException
	if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 51198 {
		t.Errorf("c with a modifier update: %v", err)
	}
}

// TestIgnoreUnknownIndexOptions: createIndexes refuses an option it does
// not know (197) unless ignoreUnknownIndexOptions drops it.
func TestIgnoreUnknownIndexOptions(t *testing.T) {
	_, client := connect(t)
	db := client.Database("ixopts")
	spec := bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}, {Key: "bogus", Value: true}}
	cmdErr(t, db.RunCommand(ctx(t), bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{spec}}}).Err(), 197)
	if err := db.RunCommand(ctx(t), bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{spec}}, {Key: "ignoreUnknownIndexOptions", Value: true}}).Err(); err != nil {
		t.Fatal(err)
	}
	cur, err := db.Collection("c").Indexes().List(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var ixs []bson.Raw
	if err := cur.All(ctx(t), &ixs); err != nil || len(ixs) != 2 {
		t.Fatal(ixs, err)
	}
	if _, err := ixs[1].LookupErr("bogus"); err == nil {
		t.Errorf("the unknown option was kept: %v", ixs[1])
	}
}
