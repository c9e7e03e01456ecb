package e2e

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestDollarAndDottedFieldNames: field names that start with '$' or
// contain '.' are stored as MongoDB 5.0+ stores them (inserts anywhere,
// replacements and update operators below the top level, upserts that
// insert), and refused where mongod refuses them (a replacement's or an
// update operator's top-level $-prefixed field, $-prefixed fields inside
// _id), with DollarPrefixedFieldName (52).
func TestDollarAndDottedFieldNames(t *testing.T) {
	_, client := connect(t)
	db := client.Database("e2edollar")
	coll := db.Collection("c")
	run := func(cmd bson.D) (bson.M, error) {
		var out bson.M
		err := db.RunCommand(ctx(t), cmd).Decode(&out)
		return out, err
	}
	get := func(id any) bson.M {
		t.Helper()
		var d bson.M
		if err := coll.FindOne(ctx(t), bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
			t.Fatalf("find %v: %v", id, err)
		}
		return d
	}
	// Inserts: $-prefixed and dotted names at every level, reserved words too.
	if _, err := coll.InsertMany(ctx(t), []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "$price", Value: 50}, {Key: "quantity", Value: 30}},
		bson.D{{Key: "_id", Value: 2}, {Key: "$id", Value: "h1961-01"}, {Key: "location", Value: bson.D{
			{Key: "$db", Value: "novels"}, {Key: "$ref", Value: "2007042768"}, {Key: "$inc", Value: true}}}},
		bson.D{{Key: "_id", Value: 3}, {Key: "a.b", Value: 1}, {Key: "c", Value: bson.D{{Key: "d.e", Value: 2}}}},
		bson.D{{Key: "_id", Value: 4}, {Key: "address", Value: bson.D{{Key: "$number", Value: 123}, {Key: "$street", Value: "Elm Road"}}},
			{Key: "$rooms", Value: bson.D{{Key: "br", Value: 2}}}},
	}); err != nil {
		t.Fatalf("insert: %v", err)
	}
	if d := get(1); d["$price"] != int32(50) {
		t.Errorf("doc 1 = %v", d)
	}
	if d := get(3); d["a.b"] != int32(1) || field(d["c"], "d.e") != int32(2) {
		t.Errorf("doc 3 = %v", d)
	}
	// Nested $-prefixed fields are queried directly; top-level ones by $getField.
	if n, err := coll.CountDocuments(ctx(t), bson.D{{Key: "address.$street", Value: "Elm Road"}}); err != nil || n != 1 {
		t.Errorf("count address.$street = %d, %v", n, err)
	}
	if n, err := coll.CountDocuments(ctx(t), bson.D{{Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{
		bson.D{{Key: "$getField", Value: bson.D{{Key: "$literal", Value: "$price"}}}}, 50}}}}}); err != nil || n != 1 {
		t.Errorf("count $getField $price = %d, %v", n, err)
	}
	// _id may not hold $-prefixed fields.
	_, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: bson.D{{Key: "$a", Value: 1}}}})
	wantWriteErr(t, err, 52)

	// Modifier updates: nested $-prefixed paths are updatable, top-level ones are not.
	if _, err := coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 4}}, bson.D{{Key: "$set", Value: bson.D{{Key: "address.$street", Value: "Elm Ave"}}}}); err != nil {
		t.Errorf("$set address.$street: %v", err)
	} else if d := get(4); field(d["address"], "$street") != "Elm Ave" {
		t.Errorf("doc 4 = %v", d)
	}
	if _, err := coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 4}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: bson.D{{Key: "$y", Value: 1}}}}}}); err != nil {
		t.Errorf("$set x: {$y}: %v", err)
	}
	_, err = coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 4}}, bson.D{{Key: "$set", Value: bson.D{{Key: "$rooms", Value: 3}}}})
	wantWriteErr(t, err, 52)
	// An upsert that inserts is validated as an insert; on a match, writing
	// the top-level $hotel is refused (rewriting its same value is a no-op).
	if out, err := run(bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{
		{Key: "q", Value: bson.D{{Key: "date", Value: "2021-07-07"}}},
		{Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "phone", Value: 25.17}, {Key: "$hotel", Value: 320.10}}}}},
		{Key: "upsert", Value: true}}}}}); err != nil || out["writeErrors"] != nil {
		t.Errorf("upsert inserting $hotel: %v %v", out, err)
	}
	out, err := run(bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{
		{Key: "q", Value: bson.D{{Key: "date", Value: "2021-07-07"}}},
		{Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "phone", Value: 25.17}, {Key: "$hotel", Value: 400.5}}}}},
		{Key: "upsert", Value: true}}}}})
	if firstWriteErrorCode(out, err) != 52 {
		t.Errorf("upsert matching with $hotel: %v %v, want write error 52", out, err)
	}

	// Replacements: top-level $-prefixed fields refused, nested ones kept.
	out, err = run(bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{
		{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}},
		{Key: "u", Value: bson.D{{Key: "quantity", Value: 1}, {Key: "$price", Value: 2}}}}}}})
	if firstWriteErrorCode(out, err) != 52 {
		t.Errorf("replacement with $price: %v %v, want write error 52", out, err)
	}
	if _, err := coll.ReplaceOne(ctx(t), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "q", Value: bson.D{{Key: "$p", Value: 1}, {Key: "x.y", Value: 2}}}}); err != nil {
		t.Errorf("replacement with nested $p: %v", err)
	} else if d := get(1); field(d["q"], "$p") != int32(1) || field(d["q"], "x.y") != int32(2) {
		t.Errorf("doc 1 = %v", d)
	}
	// Pipeline updates may set top-level $-prefixed fields with $setField.
	if _, err := coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 4}}, mongo.Pipeline{{{Key: "$replaceWith", Value: bson.D{{Key: "$setField", Value: bson.D{
		{Key: "field", Value: bson.D{{Key: "$literal", Value: "$rooms"}}}, {Key: "input", Value: "$$ROOT"}, {Key: "value", Value: 5}}}}}}}); err != nil {
		t.Errorf("pipeline $setField $rooms: %v", err)
	} else if d := get(4); d["$rooms"] != int32(5) {
		t.Errorf("doc 4 = %v", d)
	}
}

func wantWriteErr(t *testing.T, err error, code int32) {
	t.Helper()
	var we mongo.WriteException
	if !errors.As(err, &we) || len(we.WriteErrors) == 0 || we.WriteErrors[0].Code != int(code) {
		t.Errorf("err = %v, want write error %d", err, code)
	}
}

func firstWriteErrorCode(out bson.M, err error) int32 {
	var we mongo.WriteException
	if errors.As(err, &we) && len(we.WriteErrors) > 0 {
		return int32(we.WriteErrors[0].Code)
	}
	wes, _ := out["writeErrors"].(bson.A)
	if err != nil || len(wes) == 0 {
		return 0
	}
	c, _ := field(wes[0], "code").(int32)
	return c
}
