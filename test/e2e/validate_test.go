package e2e

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

func TestValidateAndFsync(t *testing.T) {
	_, client := connect(t)
	db := client.Database("val")
	coll := db.Collection("c")
	for i := 0; i < 50; i++ {
		if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: i}, {Key: "a", Value: bson.A{i, i + 1}}, {Key: "b", Value: i % 5}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := coll.Indexes().CreateMany(ctx(t), []mongo.IndexModel{{Keys: bson.D{{Key: "a", Value: 1}}}, {Keys: bson.D{{Key: "b", Value: -1}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateMany(ctx(t), bson.D{{Key: "b", Value: 2}}, bson.D{{Key: "$push", Value: bson.D{{Key: "a", Value: 99}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.DeleteMany(ctx(t), bson.D{{Key: "b", Value: 3}}); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Valid        bool
		NRecords     int64            `bson:"nrecords"`
		KeysPerIndex map[string]int64 `bson:"keysPerIndex"`
		Errors       []string
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "validate", Value: "c"}, {Key: "full", Value: true}}).Decode(&res); err != nil {
		t.Fatal(err)
	}
	// 40 documents left; a has 2 values each, plus 99 in the 10 with b=2.
	if !res.Valid || res.NRecords != 40 || res.KeysPerIndex["a_1"] != 90 || res.KeysPerIndex["b_-1"] != 40 {
		t.Fatalf("validate = %+v", res)
	}
	cmdErr(t, db.RunCommand(ctx(t), bson.D{{Key: "validate", Value: "missing"}}).Err(), 26)
	var stats struct {
		TotalIndexSize int64            `bson:"totalIndexSize"`
		IndexSizes     map[string]int64 `bson:"indexSizes"`
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "collStats", Value: "c"}}).Decode(&stats); err != nil {
		t.Fatal(err)
	}
	if stats.IndexSizes["a_1"] <= 0 || stats.IndexSizes["_id_"] <= 0 || stats.TotalIndexSize != stats.IndexSizes["a_1"]+stats.IndexSizes["b_-1"]+stats.IndexSizes["_id_"] {
		t.Fatalf("collStats index sizes = %+v", stats)
	}
	var h1, h2 struct{ Md5 string }
	if err := db.RunCommand(ctx(t), bson.D{{Key: "dbHash", Value: 1}}).Decode(&h1); err != nil || h1.Md5 == "" {
		t.Fatalf("dbHash = %+v, %v", h1, err)
	}
	// dryRun only estimates: the data file keeps its size.
	var dry bson.M
	if err := db.RunCommand(ctx(t), bson.D{{Key: "compact", Value: "c"}, {Key: "dryRun", Value: true}}).Decode(&dry); err != nil {
		t.Fatalf("compact dryRun: %v", err)
	}
	if _, ok := dry["estimatedBytesToFree"].(int64); !ok || dry["bytesFreed"] != nil {
		t.Errorf("compact dryRun = %v", dry)
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "compact", Value: "c"}}).Err(); err != nil {
		t.Fatalf("compact: %v", err)
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "dbHash", Value: 1}}).Decode(&h2); err != nil || h2.Md5 != h1.Md5 {
		t.Fatalf("dbHash changed across compact: %q vs %q, %v", h1.Md5, h2.Md5, err)
	}
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1000}}); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "dbHash", Value: 1}}).Decode(&h2); err != nil || h2.Md5 == h1.Md5 {
		t.Fatalf("dbHash did not change with the data: %v", err)
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "validate", Value: "c"}, {Key: "full", Value: true}}).Decode(&res); err != nil || !res.Valid {
		t.Fatalf("validate after compact = %+v, %v", res, err)
	}
	if err := client.Database("admin").RunCommand(ctx(t), bson.D{{Key: "fsync", Value: 1}}).Err(); err != nil {
		t.Fatal(err)
	}
	cmdErr(t, client.Database("admin").RunCommand(ctx(t), bson.D{{Key: "fsync", Value: 1}, {Key: "lock", Value: true}}).Err(), 115)
}
