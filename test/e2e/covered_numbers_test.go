package e2e

import (
	"fmt"
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestCoveredNumbers: an index whose key field has held numbers of one
// BSON type (int32, int64 or double) answers a projection of that field
// from its keys alone, with the numbers' stored type (explain:
// PROJECTION_COVERED, no document examined); once the field holds a
// second numeric type (an insert, an update, a -0.0), the plan fetches
// (FETCH) and returns the stored types. Indexes built over existing
// documents and indexes kept by later writes agree.
func TestCoveredNumbers(t *testing.T) {
	_, client := connect(t)
	db := client.Database("e2ecovnum")
	type stored struct {
		name string
		val  func(i int) any
	}
	kinds := []stored{
		{"int32", func(i int) any { return int32(i) }},
		{"int64", func(i int) any { return int64(i) << 33 }},
		{"double", func(i int) any { return float64(i) / 4 }},
		{"wholeDouble", func(i int) any { return float64(i) }},
	}
	for _, k := range kinds {
		for _, built := range []bool{true, false} {
			name := fmt.Sprintf("%s_built%v", k.name, built)
			coll := db.Collection(name)
			docs := make([]any, 200)
			for i := range docs {
				docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "a", Value: k.val(i)}, {Key: "pad", Value: "x"}}
			}
			if !built {
				// Index first: the writes keep the types.
				if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := coll.InsertMany(ctx(t), docs); err != nil {
				t.Fatal(err)
			}
			if built {
				if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
					t.Fatal(err)
				}
			}
			filter := bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 0}}}}
			proj := bson.D{{Key: "a", Value: 1}, {Key: "_id", Value: 0}}
			cmd := bson.D{{Key: "find", Value: name}, {Key: "filter", Value: filter}, {Key: "projection", Value: proj}}
			ex := explainFind(t, db, cmd)
			if ex.tree != "PROJECTION_COVERED>IXSCAN[a_1]" || ex.docsExamined != 0 || ex.nReturned != 200 {
				t.Errorf("%s: plan %s, %d examined, %d returned; want covered, 0, 200", name, ex.tree, ex.docsExamined, ex.nReturned)
			}
			checkTypes(t, coll, filter, proj, name)

			// A second numeric type: fetched from now on, types exact.
			if _, err := coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 7}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: bson.Decimal128{}}}}}); err != nil {
				t.Fatal(err)
			}
			other := any(int32(3))
			if k.name == "int32" {
				other = 3.0
			}
			if _, err := coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 3}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: other}}}}); err != nil {
				t.Fatal(err)
			}
			ex = explainFind(t, db, cmd)
			if ex.tree != "PROJECTION_DEFAULT>FETCH>IXSCAN[a_1]" || ex.docsExamined == 0 {
				t.Errorf("%s after a second type: plan %s, %d examined; want FETCH", name, ex.tree, ex.docsExamined)
			}
			checkTypes(t, coll, filter, proj, name+" mixed")
		}
	}
	// -0.0 keeps its sign: a field that held it is fetched.
	coll := db.Collection("negzero")
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertMany(ctx(t), []any{bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: math.Copysign(0, -1)}}, bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: 2.5}}}); err != nil {
		t.Fatal(err)
	}
	ex := explainFind(t, db, bson.D{{Key: "find", Value: "negzero"}, {Key: "filter", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$lte", Value: 0}}}}}, {Key: "projection", Value: bson.D{{Key: "a", Value: 1}, {Key: "_id", Value: 0}}}})
	if ex.tree != "PROJECTION_DEFAULT>FETCH>IXSCAN[a_1]" {
		t.Errorf("-0.0: plan %s, want FETCH", ex.tree)
	}
	var d bson.Raw
	if err := coll.FindOne(ctx(t), bson.D{{Key: "a", Value: 0}}, options.FindOne().SetProjection(bson.D{{Key: "a", Value: 1}, {Key: "_id", Value: 0}})).Decode(&d); err != nil {
		t.Fatal(err)
	}
	if f, ok := d.Lookup("a").DoubleOK(); !ok || !math.Signbit(f) {
		t.Errorf("-0.0 came back as %v", d)
	}
}

// checkTypes compares the covered answer with a collection scan's, types
// included (raw bytes).
func checkTypes(t *testing.T, coll *mongo.Collection, filter, proj bson.D, name string) {
	t.Helper()
	read := func(hint any) map[string]string {
		opts := options.Find().SetProjection(bson.D{{Key: "a", Value: 1}, {Key: "_id", Value: 1}})
		if hint != nil {
			opts.SetHint(hint)
		}
		cur, err := coll.Find(ctx(t), filter, opts)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for cur.Next(ctx(t)) {
			out[cur.Current.Lookup("_id").String()] = cur.Current.Lookup("a").Type.String() + ":" + cur.Current.Lookup("a").String()
		}
		return out
	}
	_ = proj
	// The covered shape itself: every value with its stored type.
	cur, err := coll.Find(ctx(t), filter, options.Find().SetProjection(proj))
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]int{}
	for cur.Next(ctx(t)) {
		a := cur.Current.Lookup("a")
		covered[a.Type.String()+":"+a.String()]++
	}
	scan := map[string]int{}
	for _, v := range read(bson.D{{Key: "$natural", Value: 1}}) {
		scan[v]++
	}
	if fmt.Sprint(covered) != fmt.Sprint(scan) {
		t.Errorf("%s: covered values %v, scan %v", name, covered, scan)
	}
}
