package e2e

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestProfiler: profile levels 1 and 2 write the database's operations to
// system.profile, which stays within 1 MiB.
func TestProfiler(t *testing.T) {
	_, client := connect(t)
	db := client.Database("prof")
	coll := db.Collection("c")
	profileDocs := func() []bson.M {
		t.Helper()
		cur, err := db.Collection("system.profile").Find(ctx(t), bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
		return aggAll(t, cur, err)
	}
	var st struct{ Was, Slowms int32 }
	if err := db.RunCommand(ctx(t), bson.D{{Key: "profile", Value: 2}}).Decode(&st); err != nil || st.Was != 0 {
		t.Fatalf("profile 2: %+v, %v", st, err)
	}
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := coll.FindOne(ctx(t), bson.D{{Key: "a", Value: 1}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "b", Value: 2}}}}); err != nil {
		t.Fatal(err)
	}
	docs := profileDocs()
	byOp := map[string]bson.M{}
	for _, d := range docs {
		byOp[d["op"].(string)] = d
	}
	if q := byOp["query"]; q == nil || q["ns"] != "prof.c" || q["nreturned"] != int32(1) || q["docsExamined"] != int32(1) || q["planSummary"] != "COLLSCAN" {
		t.Errorf("query profile = %v", q)
	}
	if q := byOp["query"]; q != nil {
		raw, _ := bson.Marshal(q)
		if find := bson.Raw(raw).Lookup("command", "find"); find.Type != bson.TypeString || find.StringValue() != "c" {
			t.Errorf("query command = %v", q["command"])
		}
	}
	if ins := byOp["insert"]; ins == nil || ins["ninserted"] != int32(1) {
		t.Errorf("insert profile = %v", ins)
	}
	// An update's statements are profiled, each with its own figures.
	if up := byOp["update"]; up == nil || up["nMatched"] != int32(1) || up["nModified"] != int32(1) || up["ns"] != "prof.c" {
		t.Errorf("update profile = %v", up)
	} else if raw, _ := bson.Marshal(up); bson.Raw(raw).Lookup("command", "u", "$set").Type != bson.TypeEmbeddedDocument {
		t.Errorf("update statement = %v", up["command"])
	}
	for _, d := range docs {
		if _, ok := d["millis"].(int32); !ok || d["ts"] == nil || (d["op"] != "update" && d["responseLength"] == nil) {
			t.Errorf("profile doc lacks millis/ts/responseLength: %v", d)
		}
	}
	// Another database is not profiled.
	if _, err := client.Database("other").Collection("c").InsertOne(ctx(t), bson.D{}); err != nil {
		t.Fatal(err)
	}
	if n, err := client.Database("other").Collection("system.profile").CountDocuments(ctx(t), bson.D{}); err != nil || n != 0 {
		t.Errorf("other database profiled: %d, %v", n, err)
	}
	// Level 1: only operations at least slowms.
	if err := db.RunCommand(ctx(t), bson.D{{Key: "profile", Value: 1}, {Key: "slowms", Value: 100000}}).Decode(&st); err != nil || st.Was != 2 {
		t.Fatalf("profile 1: %+v, %v", st, err)
	}
	before := len(profileDocs())
	if err := coll.FindOne(ctx(t), bson.D{}).Err(); err != nil {
		t.Fatal(err)
	}
	if after := len(profileDocs()); after != before {
		t.Errorf("a fast find was profiled at level 1: %d -> %d", before, after)
	}
	// system.profile keeps at most 1 MiB: the oldest documents go.
	if err := db.RunCommand(ctx(t), bson.D{{Key: "profile", Value: 2}, {Key: "slowms", Value: 100}}).Err(); err != nil {
		t.Fatal(err)
	}
	first := profileDocs()[0]["_id"]
	pad := strings.Repeat("x", 800)
	for i := 0; i < 1500; i++ {
		if err := coll.FindOne(ctx(t), bson.D{{Key: "pad", Value: pad}}).Err(); err == nil {
			t.Fatal("found a padded document")
		}
	}
	docs = profileDocs()
	total := 0
	for _, d := range docs {
		raw, _ := bson.Marshal(d)
		total += len(raw)
	}
	if total > 1<<20 || total < 1<<19 || docs[0]["_id"] == first {
		t.Errorf("system.profile: %d documents, %d bytes, first %v (was %v)", len(docs), total, docs[0]["_id"], first)
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "profile", Value: 0}}).Err(); err != nil {
		t.Fatal(err)
	}
}
