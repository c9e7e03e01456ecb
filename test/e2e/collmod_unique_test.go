package e2e

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestCollModConvertToUnique: collMod prepareUnique makes writes refuse new
// duplicate keys while the existing ones stay; unique: true then lists the
// documents that share keys (CannotConvertIndexToUnique, violations) or,
// once they are resolved, makes the index unique: listed so, enforced,
// consistent for validate and usable by queries.
func TestCollModConvertToUnique(t *testing.T) {
	_, client := connect(t)
	db := client.Database("cmunique")
	coll := db.Collection("c")
	docs := []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: 1}},
		bson.D{{Key: "_id", Value: 2}, {Key: "x", Value: 1}},
		bson.D{{Key: "_id", Value: 3}, {Key: "x", Value: 2}},
		bson.D{{Key: "_id", Value: 4}, {Key: "x", Value: bson.A{5, 6}}},
	}
	if _, err := coll.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "x", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	collMod := func(index bson.D) error {
		return db.RunCommand(ctx(t), bson.D{{Key: "collMod", Value: "c"}, {Key: "index", Value: index}}).Err()
	}
	byKey := bson.E{Key: "keyPattern", Value: bson.D{{Key: "x", Value: 1}}}
	cmdErr(t, collMod(bson.D{byKey, {Key: "unique", Value: true}}), 72) // prepareUnique first
	cmdErr(t, collMod(bson.D{byKey, {Key: "unique", Value: false}}), 2)
	if err := collMod(bson.D{byKey, {Key: "prepareUnique", Value: true}}); err != nil {
		t.Fatal(err)
	}
	_, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 5}, {Key: "x", Value: 2}})
	cmdErr(t, err, 11000)
	_, err = coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 3}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 6}}}})
	cmdErr(t, err, 11000)
	// A document may keep or change its own key, and new keys are fine.
	if _, err := coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "$set", Value: bson.D{{Key: "y", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 6}, {Key: "x", Value: 7}}); err != nil {
		t.Fatal(err)
	}
	err = collMod(bson.D{byKey, {Key: "unique", Value: true}})
	cmdErr(t, err, 359)
	var ce mongo.CommandError
	if !asCommandError(err, &ce) {
		t.Fatalf("%T %v", err, err)
	}
	viol := ce.Raw.Lookup("violations")
	groups, _ := viol.Array().Values()
	if len(groups) != 1 {
		t.Fatalf("violations %v", viol)
	}
	ids, _ := groups[0].Document().Lookup("ids").Array().Values()
	if len(ids) != 2 || ids[0].Int32() != 1 || ids[1].Int32() != 2 {
		t.Fatalf("violations %v", viol)
	}
	if _, err := coll.DeleteOne(ctx(t), bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	if err := collMod(bson.D{byKey, {Key: "unique", Value: true}}); err != nil {
		t.Fatal(err)
	}
	cur, err := coll.Indexes().List(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var ixs []bson.Raw
	if err := cur.All(ctx(t), &ixs); err != nil {
		t.Fatal(err)
	}
	x := ixs[1]
	if x.Lookup("unique").Type != bson.TypeBoolean || !x.Lookup("unique").Boolean() {
		t.Fatalf("converted index %s", x)
	}
	if _, err := x.LookupErr("prepareUnique"); err == nil {
		t.Fatalf("converted index keeps prepareUnique: %s", x)
	}
	_, err = coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 7}, {Key: "x", Value: 5}})
	cmdErr(t, err, 11000)
	var v struct{ Valid bool }
	if err := db.RunCommand(ctx(t), bson.D{{Key: "validate", Value: "c"}}).Decode(&v); err != nil || !v.Valid {
		t.Fatalf("validate %v %v", v, err)
	}
	for _, q := range []bson.D{{{Key: "x", Value: 1}}, {{Key: "x", Value: 6}}} {
		if n, err := coll.CountDocuments(ctx(t), q); err != nil || n != 1 {
			t.Fatalf("count %v: %d %v", q, n, err)
		}
	}
	if n, _ := coll.CountDocuments(ctx(t), bson.D{{Key: "x", Value: bson.D{{Key: "$gte", Value: 2}}}}); n != 3 {
		t.Fatalf("x >= 2 counts %d, want 3 (ids 3, 4, 6)", n)
	}
}

// TestIndexSpecOptions: dropDups is accepted and ignored, background is
// kept in listIndexes, a text index may be unique (its terms then are),
// and the _id key pattern takes unique: true but not unique: false.
func TestIndexSpecOptions(t *testing.T) {
	_, client := connect(t)
	db := client.Database("ixopts")
	coll := db.Collection("c")
	create := func(spec bson.D) error {
		return db.RunCommand(ctx(t), bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{spec}}}).Err()
	}
	if err := create(bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}, {Key: "dropDups", Value: true}, {Key: "background", Value: true}}); err != nil {
		t.Fatal(err)
	}
	if err := create(bson.D{{Key: "key", Value: bson.D{{Key: "t", Value: "text"}}}, {Key: "name", Value: "t_text"}, {Key: "unique", Value: true}}); err != nil {
		t.Fatal(err)
	}
	cmdErr(t, create(bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "name", Value: "id2"}, {Key: "unique", Value: false}}), 67)
	cur, err := coll.Indexes().List(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var ixs []bson.Raw
	if err := cur.All(ctx(t), &ixs); err != nil {
		t.Fatal(err)
	}
	a := ixs[1]
	if a.Lookup("background").Type != bson.TypeBoolean || !a.Lookup("background").Boolean() {
		t.Fatalf("background not listed: %s", a)
	}
	if _, err := a.LookupErr("dropDups"); err == nil {
		t.Fatalf("dropDups kept: %s", a)
	}
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "t", Value: "hello world"}}); err != nil {
		t.Fatal(err)
	}
	_, err = coll.InsertOne(ctx(t), bson.D{{Key: "t", Value: "hello world"}})
	cmdErr(t, err, 11000)
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "t", Value: "another text"}}); err != nil {
		t.Fatal(err)
	}
	n, err := coll.CountDocuments(ctx(t), bson.D{{Key: "$text", Value: bson.D{{Key: "$search", Value: "hello"}}}})
	if err != nil || n != 1 {
		t.Fatalf("$text on a unique text index: %d %v", n, err)
	}
}

func asCommandError(err error, target *mongo.CommandError) bool {
	ce, ok := err.(mongo.CommandError)
	if ok {
		*target = ce
	}
	return ok
}
