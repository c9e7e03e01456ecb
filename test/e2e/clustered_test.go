package e2e

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// TestClusteredCollection: create with clusteredIndex is listed by
// listCollections and listIndexes as mongod lists it, keeps _id unique,
// serves _id ranges from its order (CLUSTERED_IXSCAN, no FETCH), cannot
// drop its clustered index, and refuses bad specifications with mongod's
// codes.
func TestClusteredCollection(t *testing.T) {
	_, client := connect(t)
	db := client.Database("clustered")
	spec := bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: true}, {Key: "name", Value: "by id"}}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "create", Value: "c"}, {Key: "clusteredIndex", Value: spec}}).Err(); err != nil {
		t.Fatal(err)
	}
	cur, err := db.ListCollections(ctx(t), bson.D{{Key: "name", Value: "c"}})
	if err != nil {
		t.Fatal(err)
	}
	var infos []bson.Raw
	if err := cur.All(ctx(t), &infos); err != nil || len(infos) != 1 {
		t.Fatalf("listCollections: %v %v", infos, err)
	}
	ci := infos[0].Lookup("options", "clusteredIndex")
	if ci.Document().Lookup("name").StringValue() != "by id" || !ci.Document().Lookup("unique").Boolean() || ci.Document().Lookup("v").Int32() != 2 {
		t.Fatalf("listCollections %v", infos[0])
	}
	if _, err := infos[0].LookupErr("idIndex"); err == nil {
		t.Fatalf("a clustered collection lists an idIndex: %v", infos[0])
	}
	coll := db.Collection("c")
	icur, err := coll.Indexes().List(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var ixs []bson.M
	if err := icur.All(ctx(t), &ixs); err != nil {
		t.Fatal(err)
	}
	if len(ixs) != 1 || ixs[0]["name"] != "by id" || ixs[0]["clustered"] != true || ixs[0]["unique"] != true {
		t.Fatalf("listIndexes: %v", ixs)
	}
	for i := 0; i < 50; i++ {
		if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: i}, {Key: "x", Value: i % 5}}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 7}})
	cmdErr(t, err, 11000)
	// A secondary index works beside the clustered one.
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "x", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	// {_id: 1} is the clustered index: nothing to build.
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "_id", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if n, err := coll.CountDocuments(ctx(t), bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: 10}, {Key: "$lt", Value: 20}}}}); err != nil || n != 10 {
		t.Fatalf("range count %d %v", n, err)
	}
	var ex bson.M
	filter := bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: 10}, {Key: "$lt", Value: 20}}}}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: filter}}}, {Key: "verbosity", Value: "executionStats"}}).Decode(&ex); err != nil {
		t.Fatal(err)
	}
	wp := ex["queryPlanner"].(bson.D)
	plan := bson.Raw(mustMarshal(t, wp)).Lookup("winningPlan").Document()
	if plan.Lookup("stage").StringValue() != "CLUSTERED_IXSCAN" || plan.Lookup("minRecord").Int32() != 10 || plan.Lookup("maxRecord").Int32() != 20 {
		t.Fatalf("winning plan %v", plan)
	}
	st := bson.Raw(mustMarshal(t, ex["executionStats"].(bson.D)))
	if n, _ := st.Lookup("nReturned").AsInt64OK(); n != 10 {
		t.Fatalf("executionStats %v", st)
	}
	if d, _ := st.Lookup("totalDocsExamined").AsInt64OK(); d > 11 {
		t.Fatalf("the range scan examined %d documents", d)
	}
	err = coll.Indexes().DropOne(ctx(t), "by id")
	cmdErr(t, err, 5979800)
	if err := coll.Indexes().DropAll(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if n, err := coll.CountDocuments(ctx(t), bson.D{}); err != nil || n != 50 {
		t.Fatalf("count after dropping the secondary indexes %d %v", n, err)
	}
	var v struct{ Valid bool }
	if err := db.RunCommand(ctx(t), bson.D{{Key: "validate", Value: "c"}}).Decode(&v); err != nil || !v.Valid {
		t.Fatalf("validate %v %v", v, err)
	}

	bad := []struct {
		name string
		cmd  bson.D
		code int32
	}{
		{"not unique", bson.D{{Key: "clusteredIndex", Value: bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: false}}}}, 5979700},
		{"other key", bson.D{{Key: "clusteredIndex", Value: bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "unique", Value: true}}}}, 197},
		{"not a document", bson.D{{Key: "clusteredIndex", Value: 1}}, 5979702},
		{"legacy format", bson.D{{Key: "clusteredIndex", Value: true}}, 5979703},
		{"unknown field", bson.D{{Key: "clusteredIndex", Value: bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: true}, {Key: "x", Value: 1}}}}, 40415},
		{"missing unique", bson.D{{Key: "clusteredIndex", Value: bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}}}}, 40414},
		{"v1", bson.D{{Key: "clusteredIndex", Value: bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: true}, {Key: "v", Value: 1}}}}, 5979704},
		{"ttl without clustering", bson.D{{Key: "expireAfterSeconds", Value: 10}}, 72},
		{"negative ttl", bson.D{{Key: "clusteredIndex", Value: bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: true}}}, {Key: "expireAfterSeconds", Value: -1}}, 72},
	}
	for _, b := range bad {
		cmd := append(bson.D{{Key: "create", Value: "bad"}}, b.cmd...)
		err := db.RunCommand(ctx(t), cmd).Err()
		if err == nil {
			t.Fatalf("%s: created", b.name)
		}
		cmdErr(t, err, b.code)
	}
	// clusteredIndex: false is an ordinary collection.
	if err := db.RunCommand(ctx(t), bson.D{{Key: "create", Value: "plain"}, {Key: "clusteredIndex", Value: false}}).Err(); err != nil {
		t.Fatal(err)
	}
	// The clustered index option is only the clustered index itself.
	err = db.RunCommand(ctx(t), bson.D{{Key: "createIndexes", Value: "plain"}, {Key: "indexes", Value: bson.A{
		bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "name", Value: "cl"}, {Key: "unique", Value: true}, {Key: "clustered", Value: true}}}}}).Err()
	cmdErr(t, err, 67)
	err = db.RunCommand(ctx(t), bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{
		bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "name", Value: "by id"}, {Key: "unique", Value: true}, {Key: "clustered", Value: true}}}}}).Err()
	if err != nil {
		t.Fatalf("createIndexes of the clustered index itself: %v", err)
	}
}

// TestClusteredTTL: expireAfterSeconds on a clustered collection removes
// the documents whose _id is a date older than that, and only those.
func TestClusteredTTL(t *testing.T) {
	srv := cairndtest.Start(t, "--setParameter", "ttlMonitorSleepSecs=1")
	client := dial(t, srv.URI)
	db := client.Database("clusteredttl")
	co := options.CreateCollection().SetClusteredIndex(bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: true}}).SetExpireAfterSeconds(5)
	if err := db.CreateCollection(ctx(t), "events", co); err != nil {
		t.Fatal(err)
	}
	cur, err := db.ListCollections(ctx(t), bson.D{{Key: "name", Value: "events"}})
	if err != nil {
		t.Fatal(err)
	}
	var infos []bson.Raw
	if err := cur.All(ctx(t), &infos); err != nil || len(infos) != 1 {
		t.Fatalf("listCollections %v %v", infos, err)
	}
	if e := infos[0].Lookup("options", "expireAfterSeconds"); e.Type != bson.TypeInt64 || e.Int64() != 5 {
		t.Fatalf("expireAfterSeconds listed as %v", e)
	}
	coll := db.Collection("events")
	old := time.Now().Add(-time.Hour)
	docs := []any{
		bson.D{{Key: "_id", Value: bson.NewDateTimeFromTime(old)}, {Key: "k", Value: "old"}},
		bson.D{{Key: "_id", Value: bson.NewDateTimeFromTime(old.Add(time.Second))}, {Key: "k", Value: "old"}},
		bson.D{{Key: "_id", Value: bson.NewDateTimeFromTime(time.Now().Add(time.Hour))}, {Key: "k", Value: "future"}},
		bson.D{{Key: "_id", Value: "not a date"}, {Key: "k", Value: "string"}},
		bson.D{{Key: "_id", Value: 1}, {Key: "k", Value: "number"}},
	}
	if _, err := coll.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	waitExpired(t, coll, bson.D{{Key: "k", Value: "old"}}, 20*time.Second, "documents")
	if n, err := coll.CountDocuments(ctx(t), bson.D{}); err != nil || n != 3 {
		t.Fatalf("%d documents remain (%v), want the future date, the string and the number", n, err)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := bson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// waitExpired waits, up to within, until no document of coll matches
// filter (the TTL monitor removed them), failing with the count of what
// is left (what names it) otherwise.
func waitExpired(t *testing.T, coll *mongo.Collection, filter bson.D, within time.Duration, what string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		n, err := coll.CountDocuments(ctx(t), filter)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d expired %s remain after %v", n, what, within)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
