package e2e

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
	"github.com/cairndb/cairn/kv"
)

// TestLargeIndexKeys stores _ids and index keys far past 64 KiB (they
// failed with InternalError, "kv: key too large"): a 100 KiB string _id,
// a 15 MiB one, a 1 MiB indexed string, a compound index of two 40 KiB
// strings sharing their first field, an index built over existing large
// values; finds them by those keys, updates and deletes them, validates,
// checks the files offline and finds them again after a restart.
func TestLargeIndexKeys(t *testing.T) {
	dir := t.TempDir()
	srv, err := cairndtest.StartDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Stop() }()
	client := dial(t, srv.URI)
	db := client.Database("bigkeys")
	coll := db.Collection("c")
	if _, err := coll.Indexes().CreateMany(ctx(t), []mongo.IndexModel{
		{Keys: bson.D{{Key: "s", Value: 1}}},
		{Keys: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: -1}}},
	}); err != nil {
		t.Fatal(err)
	}
	big := func(c byte, n int, tail string) string { return strings.Repeat(string(c), n) + tail }
	id1, id2 := big('I', 100<<10, "1"), big('I', 100<<10, "2")
	huge := big('H', 15<<20, "")
	s1, s2 := big('s', 1<<20, "1"), big('s', 1<<20, "2")
	a := big('a', 40<<10, "")
	b1, b2 := big('b', 40<<10, "1"), big('b', 40<<10, "2")
	docs := []any{
		bson.D{{Key: "_id", Value: id1}, {Key: "s", Value: s1}, {Key: "a", Value: a}, {Key: "b", Value: b1}, {Key: "t", Value: big('t', 200<<10, "1")}},
		bson.D{{Key: "_id", Value: id2}, {Key: "s", Value: s2}, {Key: "a", Value: a}, {Key: "b", Value: b2}, {Key: "t", Value: big('t', 200<<10, "2")}},
		bson.D{{Key: "_id", Value: "small"}, {Key: "s", Value: "x"}, {Key: "a", Value: "y"}, {Key: "b", Value: "z"}, {Key: "t", Value: "w"}},
	}
	if _, err := coll.InsertMany(ctx(t), docs); err != nil {
		t.Fatalf("insert: %v", err)
	}
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: huge}}); err != nil {
		t.Fatalf("insert of a 15 MiB _id: %v", err)
	}
	// The same large _id again is a duplicate key, as for any _id.
	_, err = coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: id1}})
	cmdErr(t, err, 11000)

	// find returns the _ids of the documents matching filter through
	// the index hint names ("" for none).
	find := func(filter bson.D, hint any) []string {
		t.Helper()
		o := options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}).SetSort(bson.D{{Key: "_id", Value: 1}})
		if hint != nil {
			o.SetHint(hint)
		}
		cur, err := coll.Find(ctx(t), filter, o)
		if err != nil {
			t.Fatal(err)
		}
		var got []struct {
			ID string `bson:"_id"`
		}
		if err := cur.All(ctx(t), &got); err != nil {
			t.Fatal(err)
		}
		ids := []string{}
		for _, g := range got {
			ids = append(ids, g.ID[max(0, len(g.ID)-1):]) // the distinct tails
		}
		return ids
	}
	want := func(what string, got []string, want ...string) {
		t.Helper()
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: found %q, want %q", what, got, want)
		}
	}
	verify := func(phase string) {
		t.Helper()
		want(phase+": _id", find(bson.D{{Key: "_id", Value: id1}}, nil), "1")
		want(phase+": 15 MiB _id", find(bson.D{{Key: "_id", Value: huge}}, nil), "H")
		want(phase+": _id range", find(bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: "H"}, {Key: "$lt", Value: "J"}}}}, nil), "H", "1", "2")
		want(phase+": s", find(bson.D{{Key: "s", Value: s2}}, "s_1"), "2")
		want(phase+": s range", find(bson.D{{Key: "s", Value: bson.D{{Key: "$gte", Value: s1}, {Key: "$lt", Value: "t"}}}}, "s_1"), "1", "2")
		want(phase+": a, b", find(bson.D{{Key: "a", Value: a}, {Key: "b", Value: b1}}, "a_1_b_-1"), "1")
		want(phase+": a", find(bson.D{{Key: "a", Value: a}}, "a_1_b_-1"), "1", "2")
	}
	verify("inserted")

	// createIndexes over the existing large values, unique included.
	if _, err := coll.Indexes().CreateMany(ctx(t), []mongo.IndexModel{
		{Keys: bson.D{{Key: "t", Value: 1}}, Options: options.Index().SetUnique(true)},
		{Keys: bson.D{{Key: "s", Value: -1}, {Key: "t", Value: 1}}},
	}); err != nil {
		t.Fatalf("createIndexes over large values: %v", err)
	}
	want("t", find(bson.D{{Key: "t", Value: big('t', 200<<10, "2")}}, "t_1"), "2")
	want("s, t", find(bson.D{{Key: "s", Value: s1}}, "s_-1_t_1"), "1")
	_, err = coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: "dup"}, {Key: "t", Value: big('t', 200<<10, "1")}})
	cmdErr(t, err, 11000)

	// Updates move the large index entries.
	s3 := big('s', 1<<20, "3")
	if r, err := coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: id2}}, bson.D{{Key: "$set", Value: bson.D{{Key: "s", Value: s3}, {Key: "b", Value: b1}}}}); err != nil || r.ModifiedCount != 1 {
		t.Fatalf("update: %+v %v", r, err)
	}
	want("old s", find(bson.D{{Key: "s", Value: s2}}, "s_1"))
	want("new s", find(bson.D{{Key: "s", Value: s3}}, "s_1"), "2")
	want("new a, b", find(bson.D{{Key: "a", Value: a}, {Key: "b", Value: b1}}, "a_1_b_-1"), "1", "2")
	if r, err := coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: id2}}, bson.D{{Key: "$set", Value: bson.D{{Key: "s", Value: s2}, {Key: "b", Value: b2}}}}); err != nil || r.ModifiedCount != 1 {
		t.Fatalf("update back: %+v %v", r, err)
	}
	verify("updated")

	validate := func(phase string, records int64) {
		t.Helper()
		var res struct {
			Valid        bool
			NRecords     int64            `bson:"nrecords"`
			KeysPerIndex map[string]int64 `bson:"keysPerIndex"`
			Errors       []string
		}
		if err := db.RunCommand(ctx(t), bson.D{{Key: "validate", Value: "c"}, {Key: "full", Value: true}}).Decode(&res); err != nil {
			t.Fatal(err)
		}
		if !res.Valid || res.NRecords != records || res.KeysPerIndex["_id_"] != records || res.KeysPerIndex["s_1"] != records || res.KeysPerIndex["a_1_b_-1"] != records {
			t.Errorf("%s: validate = %+v", phase, res)
		}
	}
	validate("updated", 4)

	// Deletes, then the files are checked offline and read again.
	if r, err := coll.DeleteOne(ctx(t), bson.D{{Key: "_id", Value: huge}}); err != nil || r.DeletedCount != 1 {
		t.Fatalf("delete: %+v %v", r, err)
	}
	if r, err := coll.DeleteOne(ctx(t), bson.D{{Key: "s", Value: s1}}); err != nil || r.DeletedCount != 1 {
		t.Fatalf("delete by s: %+v %v", r, err)
	}
	want("deleted", find(bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: "H"}, {Key: "$lt", Value: "J"}}}}, nil), "2")
	want("deleted s", find(bson.D{{Key: "s", Value: s1}}, "s_1"))
	validate("deleted", 2)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := kv.Check(dir, nil); err != nil {
		t.Fatalf("offline check: %v", err)
	}
	srv, err = cairndtest.StartDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	client = dial(t, srv.URI)
	db = client.Database("bigkeys")
	coll = db.Collection("c")
	want("restarted", find(bson.D{{Key: "_id", Value: id2}}, nil), "2")
	want("restarted a, b", find(bson.D{{Key: "a", Value: a}, {Key: "b", Value: b2}}, "a_1_b_-1"), "2")
	validate("restarted", 2)
}
