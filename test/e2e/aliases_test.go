package e2e

import (
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestCommandAliasesAndDataSize: the lower-case names mongod registers
// beside its commands (datasize, dbstats, collstats, buildinfo, ismaster,
// findandmodify, mapreduce, dbhash) run the commands, and dataSize counts
// documents and bytes as mongod's jstests/datasize.js expects.
func TestCommandAliasesAndDataSize(t *testing.T) {
	_, client := connect(t)
	db := client.Database("test")
	coll := db.Collection("jstests_datasize")
	run := func(cmd bson.D) (bson.Raw, error) {
		return db.RunCommand(ctx(t), cmd).Raw()
	}
	ns := "test.jstests_datasize"
	for _, name := range []string{"dataSize", "datasize"} {
		out, err := run(bson.D{{Key: name, Value: ns}})
		if err != nil || out.Lookup("size").Int64() != 0 || out.Lookup("numObjects").Int64() != 0 {
			t.Fatalf("%s of a missing collection = %v, %v", name, out, err)
		}
	}
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "qq", Value: "c"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "qq", Value: "fg"}}); err != nil {
		t.Fatal(err)
	}
	// {_id: ObjectId, qq: "c"} is 32 bytes, {_id, qq: "fg"} 33.
	for _, tc := range []struct {
		cmd  bson.D
		size int64
		n    int64
		code int32
	}{
		{cmd: bson.D{{Key: "datasize", Value: ns}}, size: 65, n: 2},
		{cmd: bson.D{{Key: "datasize", Value: ns}, {Key: "min", Value: bson.D{{Key: "qq", Value: "a"}}}}, code: 2},
		{cmd: bson.D{{Key: "datasize", Value: ns}, {Key: "min", Value: bson.D{{Key: "qq", Value: "a"}}}, {Key: "max", Value: bson.D{{Key: "qq", Value: "z"}}}}, code: 96},
	} {
		out, err := run(tc.cmd)
		if tc.code != 0 {
			cmdErr(t, err, tc.code)
			continue
		}
		if err != nil || out.Lookup("size").Int64() != tc.size || out.Lookup("numObjects").Int64() != tc.n {
			t.Errorf("%v = %v, %v; want size %d, numObjects %d", tc.cmd, out, err, tc.size, tc.n)
		}
	}
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "qq", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		min, max, kp bson.D
		size         int64
		code         int32
	}{
		{min: bson.D{{Key: "qq", Value: "a"}}, max: bson.D{{Key: "qq", Value: "z"}}, size: 65},
		{min: bson.D{{Key: "qq", Value: "a"}}, max: bson.D{{Key: "qq", Value: "d"}}, size: 32},
		{min: bson.D{{Key: "qq", Value: "a"}}, max: bson.D{{Key: "qq", Value: "d"}}, kp: bson.D{{Key: "qq", Value: 1}}, size: 32},
		{min: bson.D{{Key: "qq", Value: "d"}}, max: bson.D{{Key: "qq", Value: "z"}}, kp: bson.D{{Key: "qq", Value: 1}}, size: 33},
		{min: bson.D{{Key: "qq", Value: "c"}}, max: bson.D{{Key: "qq", Value: "c"}}, size: 0},
		{min: bson.D{{Key: "qq", Value: "c"}}, max: bson.D{{Key: "qq", Value: "d"}}, size: 32},
		{min: bson.D{{Key: "qq", Value: "a"}}, max: bson.D{{Key: "qq", Value: "d"}}, kp: bson.D{{Key: "a", Value: 1}}, code: 96},
	} {
		cmd := bson.D{{Key: "dataSize", Value: ns}, {Key: "min", Value: tc.min}, {Key: "max", Value: tc.max}}
		if tc.kp != nil {
			cmd = append(cmd, bson.E{Key: "keyPattern", Value: tc.kp})
		}
		out, err := run(cmd)
		if tc.code != 0 {
			cmdErr(t, err, tc.code)
			continue
		}
		if err != nil || out.Lookup("size").Int64() != tc.size {
			t.Errorf("%v = %v, %v; want size %d", cmd, out, err, tc.size)
		}
	}
	// Run against another database, dataSize reads the namespace named.
	if out, err := client.Database("admin").RunCommand(ctx(t), bson.D{{Key: "dataSize", Value: ns}}).Raw(); err != nil || out.Lookup("numObjects").Int64() != 2 {
		t.Errorf("dataSize from admin = %v, %v", out, err)
	}
	for _, tc := range []struct {
		db    string
		cmd   bson.D
		field string
	}{
		{"test", bson.D{{Key: "dbstats", Value: 1}}, "collections"},
		{"test", bson.D{{Key: "collstats", Value: "jstests_datasize"}}, "count"},
		{"admin", bson.D{{Key: "buildinfo", Value: 1}}, "version"},
		{"admin", bson.D{{Key: "ismaster", Value: 1}}, "ismaster"},
		{"test", bson.D{{Key: "dbhash", Value: 1}}, "md5"},
		{"test", bson.D{{Key: "findandmodify", Value: "jstests_datasize"}, {Key: "query", Value: bson.D{{Key: "qq", Value: "c"}}},
			{Key: "update", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}}, "value"},
	} {
		out, err := client.Database(tc.db).RunCommand(ctx(t), tc.cmd).Raw()
		if err != nil {
			t.Errorf("%s: %v", tc.cmd[0].Key, err)
		} else if _, err := out.LookupErr(tc.field); err != nil {
			t.Errorf("%s: no %s in %v", tc.cmd[0].Key, tc.field, out)
		}
	}
}

// TestListDatabasesSystemDatabases: listDatabases lists admin, config and
// local as mongod does, also with nameOnly and a filter.
func TestListDatabasesSystemDatabases(t *testing.T) {
	_, client := connect(t)
	if _, err := client.Database("app").Collection("c").InsertOne(ctx(t), bson.D{}); err != nil {
		t.Fatal(err)
	}
	names, err := client.ListDatabaseNames(ctx(t), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"admin", "app", "config", "local"} {
		if !slices.Contains(names, want) {
			t.Errorf("listDatabases = %v, lacks %s", names, want)
		}
	}
	res, err := client.ListDatabases(ctx(t), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Databases {
		if d.Empty {
			t.Errorf("%s listed empty: %+v", d.Name, d)
		}
	}
	names, err = client.ListDatabaseNames(ctx(t), bson.D{{Key: "name", Value: bson.D{{Key: "$in", Value: bson.A{"admin", "local"}}}}})
	if err != nil || !slices.Equal(names, []string{"admin", "local"}) {
		t.Errorf("listDatabases filter = %v, %v", names, err)
	}
}
