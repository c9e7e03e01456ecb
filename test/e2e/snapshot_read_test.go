package e2e

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

func snapshotRC(at *bson.Timestamp) bson.D {
	rc := bson.D{{Key: "level", Value: "snapshot"}}
	if at != nil {
		rc = append(rc, bson.E{Key: "atClusterTime", Value: *at})
	}
	return rc
}

// runRaw runs cmd on db and returns its reply (the error too).
func runRaw(t *testing.T, db *mongo.Database, cmd bson.D) (bson.Raw, error) {
	t.Helper()
	return db.RunCommand(ctx(t), cmd).Raw()
}

func xOf(t *testing.T, reply bson.Raw, batch string) []int32 {
	t.Helper()
	arr, ok := reply.Lookup("cursor", batch).ArrayOK()
	if !ok {
		t.Fatalf("no cursor.%s in %v", batch, reply)
	}
	vals, _ := arr.Values()
	var xs []int32
	for _, v := range vals {
		xs = append(xs, v.Document().Lookup("x").Int32())
	}
	return xs
}

// TestSnapshotReads: readConcern snapshot outside a transaction (mongod
// 5.0+): find, aggregate and distinct read one snapshot, report it as
// atClusterTime (and in getMore), and read the data as of an earlier
// atClusterTime; a time later than the cluster time is InvalidOptions, a
// time no retained snapshot covers SnapshotTooOld, other commands refuse
// the level with InvalidOptions.
func TestSnapshotReads(t *testing.T) {
	srv := cairndtest.Start(t, cairndtest.DefaultMode)
	c := dial(t, srv.URI)
	db := c.Database("snap")
	coll := db.Collection("c")
	for i := range 3 {
		if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: i}, {Key: "x", Value: int32(10 + i)}}); err != nil {
			t.Fatal(err)
		}
	}
	// The first read: atClusterTime in the cursor, a getMore reports it
	// and reads the same snapshot although a write came between.
	r, err := runRaw(t, db, bson.D{{Key: "find", Value: "c"}, {Key: "sort", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "batchSize", Value: 1}, {Key: "readConcern", Value: snapshotRC(nil)}})
	if err != nil {
		t.Fatal(err)
	}
	tsT, tsI, ok := r.Lookup("cursor", "atClusterTime").TimestampOK()
	if !ok {
		t.Fatalf("find reply without cursor.atClusterTime: %v", r)
	}
	at := bson.Timestamp{T: tsT, I: tsI}
	if ot, oi := r.Lookup("operationTime").Timestamp(); ot != tsT || oi != tsI {
		t.Errorf("operationTime %v, want atClusterTime %v", r.Lookup("operationTime"), at)
	}
	if _, err := coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "x", Value: 100}}}}); err != nil {
		t.Fatal(err)
	}
	id := r.Lookup("cursor", "id").Int64()
	r, err = runRaw(t, db, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "c"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := xOf(t, r, "nextBatch"); len(got) != 2 || got[0] != 11 {
		t.Errorf("getMore read %v, want the snapshot's [11 12]", got)
	}
	if gt, gi, ok := r.Lookup("cursor", "atClusterTime").TimestampOK(); !ok || gt != tsT || gi != tsI {
		t.Errorf("getMore atClusterTime %v, want %v", r.Lookup("cursor", "atClusterTime"), at)
	}
	// At the earlier time: find, aggregate and distinct read the data as
	// it was; the plain read sees the update.
	r, err = runRaw(t, db, bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "readConcern", Value: snapshotRC(&at)}})
	if err != nil {
		t.Fatal(err)
	}
	if got := xOf(t, r, "firstBatch"); len(got) != 1 || got[0] != 11 {
		t.Errorf("find at %v: %v, want [11]", at, got)
	}
	r, err = runRaw(t, db, bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "_id", Value: 1}}}}}}, {Key: "cursor", Value: bson.D{}}, {Key: "readConcern", Value: snapshotRC(&at)}})
	if err != nil {
		t.Fatal(err)
	}
	if got := xOf(t, r, "firstBatch"); len(got) != 1 || got[0] != 11 {
		t.Errorf("aggregate at %v: %v, want [11]", at, got)
	}
	r, err = runRaw(t, db, bson.D{{Key: "distinct", Value: "c"}, {Key: "key", Value: "x"}, {Key: "readConcern", Value: snapshotRC(&at)}})
	if err != nil {
		t.Fatal(err)
	}
	if vals, _ := r.Lookup("values").Array().Values(); len(vals) != 3 || vals[1].Int32() != 11 {
		t.Errorf("distinct at %v: %v", at, r.Lookup("values"))
	}
	if dt, di, ok := r.Lookup("atClusterTime").TimestampOK(); !ok || dt != tsT || di != tsI {
		t.Errorf("distinct atClusterTime %v, want %v", r.Lookup("atClusterTime"), at)
	}
	var now bson.M
	if err := coll.FindOne(ctx(t), bson.D{{Key: "_id", Value: 1}}).Decode(&now); err != nil || now["x"] != int32(111) {
		t.Errorf("plain read: %v, %v", now, err)
	}

	// A time later than the member's cluster time.
	future := bson.Timestamp{T: uint32(time.Now().Unix()) + 3600, I: 1}
	_, err = runRaw(t, db, bson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: snapshotRC(&future)}})
	cmdErr(t, err, 72)
	// Commands other than find, aggregate and distinct.
	for _, cmd := range []bson.D{
		{{Key: "count", Value: "c"}},
		{{Key: "findAndModify", Value: "c"}, {Key: "query", Value: bson.D{}}, {Key: "update", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}}},
		{{Key: "listCollections", Value: 1}},
	} {
		_, err := runRaw(t, db, append(cmd, bson.E{Key: "readConcern", Value: snapshotRC(nil)}))
		cmdErr(t, err, 72)
	}
	// atClusterTime needs level snapshot.
	_, err = runRaw(t, db, bson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: bson.D{{Key: "level", Value: "local"}, {Key: "atClusterTime", Value: at}}}})
	cmdErr(t, err, 72)

	// Without history (minSnapshotHistoryWindowInSeconds 0, which drops
	// the retained snapshots) a time before the last change is too old.
	if err := c.Database("admin").RunCommand(ctx(t), bson.D{{Key: "setParameter", Value: 1}, {Key: "minSnapshotHistoryWindowInSeconds", Value: 0}}).Err(); err != nil {
		t.Fatal(err)
	}
	r, err = runRaw(t, db, bson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: snapshotRC(&at)}})
	cmdErr(t, err, 239)
	if msg := r.Lookup("errmsg").StringValue(); msg == "" {
		t.Errorf("SnapshotTooOld without a message: %v", r)
	}
	if err := c.Database("admin").RunCommand(ctx(t), bson.D{{Key: "setParameter", Value: 1}, {Key: "minSnapshotHistoryWindowInSeconds", Value: 300}}).Err(); err != nil {
		t.Fatal(err)
	}
	var p bson.M
	if err := c.Database("admin").RunCommand(ctx(t), bson.D{{Key: "getParameter", Value: 1}, {Key: "minSnapshotHistoryWindowInSeconds", Value: 1}}).Decode(&p); err != nil || p["minSnapshotHistoryWindowInSeconds"] != int32(300) {
		t.Errorf("getParameter: %v, %v", p, err)
	}
}
