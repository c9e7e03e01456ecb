package e2e

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// TestDefaultRWConcern sets the global default concerns: they are checked
// as MongoDB checks them, reported by getDefaultRWConcern, applied to
// writes that name no write concern (j: true makes every such insert wait
// for its own journal flush), and kept across a restart.
func TestDefaultRWConcern(t *testing.T) {
	dir := t.TempDir()
	srv, err := cairndtest.StartDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	client := dial(t, srv.URI)
	admin := client.Database("admin")
	get := func(db *mongo.Database) bson.M {
		t.Helper()
		var m bson.M
		if err := db.RunCommand(ctx(t), bson.D{{Key: "getDefaultRWConcern", Value: 1}}).Decode(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := get(admin); m["defaultWriteConcernSource"] != "implicit" || m["defaultReadConcernSource"] != "implicit" {
		t.Fatalf("fresh server: %v", m)
	}
	for _, bad := range []struct {
		cmd  bson.D
		code int32
	}{
		{bson.D{{Key: "setDefaultRWConcern", Value: 1}}, 2},
		{bson.D{{Key: "setDefaultRWConcern", Value: 1}, {Key: "defaultWriteConcern", Value: bson.D{{Key: "w", Value: 0}}}}, 2},
		{bson.D{{Key: "setDefaultRWConcern", Value: 1}, {Key: "defaultWriteConcern", Value: bson.D{{Key: "w", Value: 3}}}}, 2},
		{bson.D{{Key: "setDefaultRWConcern", Value: 1}, {Key: "defaultReadConcern", Value: bson.D{{Key: "level", Value: "snapshot"}}}}, 2},
		{bson.D{{Key: "setDefaultRWConcern", Value: 1}, {Key: "defaultReadConcern", Value: "local"}}, 14},
	} {
		cmdErr(t, admin.RunCommand(ctx(t), bad.cmd).Err(), bad.code)
	}
	cmdErr(t, client.Database("app").RunCommand(ctx(t), bson.D{{Key: "setDefaultRWConcern", Value: 1},
		{Key: "defaultWriteConcern", Value: bson.D{{Key: "w", Value: 1}}}}).Err(), 13)

	var set bson.M
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "setDefaultRWConcern", Value: 1},
		{Key: "defaultWriteConcern", Value: bson.D{{Key: "w", Value: 1}, {Key: "j", Value: true}}},
		{Key: "defaultReadConcern", Value: bson.D{{Key: "level", Value: "majority"}}}}).Decode(&set); err != nil {
		t.Fatal(err)
	}
	if set["defaultWriteConcernSource"] != "global" || set["updateWallClockTime"] == nil {
		t.Fatalf("setDefaultRWConcern replied %v", set)
	}

	fsyncs := func() int64 {
		t.Helper()
		var st struct {
			Cairn struct {
				Journal struct {
					Fsyncs int64 `bson:"fsyncs"`
				} `bson:"journal"`
			} `bson:"cairn"`
		}
		if err := admin.RunCommand(ctx(t), bson.D{{Key: "serverStatus", Value: 1}}).Decode(&st); err != nil {
			t.Fatal(err)
		}
		return st.Cairn.Journal.Fsyncs
	}
	coll := client.Database("app").Collection("c")
	before := fsyncs()
	for i := 0; i < 20; i++ {
		if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "i", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	if d := fsyncs() - before; d < 20 {
		t.Fatalf("20 inserts under a default {j: true} caused %d journal flushes, want one each", d)
	}

	client.Disconnect(context.Background())
	srv.Stop()
	srv, err = cairndtest.StartDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	admin = dial(t, srv.URI).Database("admin")
	m := get(admin)
	wc, _ := m["defaultWriteConcern"].(bson.D)
	if m["defaultWriteConcernSource"] != "global" || len(wc) != 2 {
		t.Fatalf("after a restart: %v", m)
	}
	rc, _ := m["defaultReadConcern"].(bson.D)
	if len(rc) != 1 || rc[0].Value != "majority" {
		t.Fatalf("read concern after a restart: %v", m)
	}
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "setDefaultRWConcern", Value: 1},
		{Key: "defaultWriteConcern", Value: bson.D{}}, {Key: "defaultReadConcern", Value: bson.D{}}}).Err(); err != nil {
		t.Fatal(err)
	}
	if m := get(admin); m["defaultWriteConcernSource"] != "implicit" || m["defaultReadConcernSource"] != "implicit" {
		t.Fatalf("after unsetting: %v", m)
	}
}
