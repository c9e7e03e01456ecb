package e2e

import (
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// newLSID returns a fresh {id: UUID}.
func newLSID(t *testing.T) bson.D {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		t.Fatal(err)
	}
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: id[:]}}}
}

// retryable runs cmd with lsid and txnNumber and returns the reply.
func retryable(t *testing.T, db *mongo.Database, cmd bson.D, lsid bson.D, txn int64) (bson.M, error) {
	t.Helper()
	full := append(append(bson.D{}, cmd...), bson.E{Key: "lsid", Value: lsid}, bson.E{Key: "txnNumber", Value: txn})
	var out bson.M
	err := db.RunCommand(ctx(t), full).Decode(&out)
	return out, err
}

func mustRetryable(t *testing.T, db *mongo.Database, cmd bson.D, lsid bson.D, txn int64) bson.M {
	t.Helper()
	out, err := retryable(t, db, cmd, lsid, txn)
	if err != nil {
		t.Fatalf("%v: %v", cmd[0].Key, err)
	}
	return out
}

func intOf(v any) int64 {
	switch n := v.(type) {
	case int32:
		return int64(n)
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return -1
}

// field returns d's key (d a bson.D).
func field(d any, key string) any {
	dd, _ := d.(bson.D)
	for _, e := range dd {
		if e.Key == key {
			return e.Value
		}
	}
	return nil
}

func retriedIDs(m bson.M) []int64 {
	a, _ := m["retriedStmtIds"].(bson.A)
	var out []int64
	for _, v := range a {
		out = append(out, intOf(v))
	}
	return out
}

func count(t *testing.T, coll *mongo.Collection, filter bson.D) int64 {
	t.Helper()
	n, err := coll.CountDocuments(ctx(t), filter)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRetryableWrites: a retried statement (same lsid and txnNumber)
// applies once and answers its original result, for insert, update,
// delete and findAndModify, with a batch whose first half was executed.
func TestRetryableWrites(t *testing.T) {
	srv := cairndtest.Start(t, cairndtest.DefaultMode)
	client := dial(t, srv.URI)
	db := client.Database("rw")
	coll := db.Collection("c")
	lsid := newLSID(t)

	ins := bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}}}}
	r := mustRetryable(t, db, ins, lsid, 1)
	if intOf(r["n"]) != 2 || r["retriedStmtIds"] != nil {
		t.Fatalf("first insert: %v", r)
	}
	r = mustRetryable(t, db, ins, lsid, 1)
	if intOf(r["n"]) != 2 || r["writeErrors"] != nil || len(retriedIDs(r)) != 2 {
		t.Fatalf("retried insert: %v", r)
	}
	// The same txnNumber with one more document: the first two are
	// retries, the third runs.
	ins3 := bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "_id", Value: 3}}}}}
	r = mustRetryable(t, db, ins3, lsid, 1)
	if intOf(r["n"]) != 3 || r["writeErrors"] != nil || len(retriedIDs(r)) != 2 {
		t.Fatalf("half-retried insert: %v", r)
	}
	if n := count(t, coll, bson.D{}); n != 3 {
		t.Fatalf("documents: %d", n)
	}

	upd := bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{
		bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "x", Value: 1}}}}}},
		bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 9}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "upsert", Value: true}},
	}}}
	first := mustRetryable(t, db, upd, lsid, 2)
	again := mustRetryable(t, db, upd, lsid, 2)
	if intOf(first["n"]) != 2 || intOf(first["nModified"]) != 1 || intOf(again["n"]) != 2 || intOf(again["nModified"]) != 1 || len(retriedIDs(again)) != 2 {
		t.Fatalf("update: first %v, retried %v", first, again)
	}
	ups, _ := again["upserted"].(bson.A)
	if len(ups) != 1 || intOf(field(ups[0], "index")) != 1 || intOf(field(ups[0], "_id")) != 9 {
		t.Fatalf("retried upserted: %v", again["upserted"])
	}
	var doc bson.M
	if err := coll.FindOne(ctx(t), bson.D{{Key: "_id", Value: 1}}).Decode(&doc); err != nil || intOf(doc["x"]) != 1 {
		t.Fatalf("after retried $inc: %v %v", doc, err)
	}

	del := bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 3}}}, {Key: "limit", Value: 1}}}}}
	mustRetryable(t, db, del, lsid, 3)
	if err := coll.FindOneAndUpdate(ctx(t), bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "$set", Value: bson.D{{Key: "_id", Value: 2}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 3}}); err != nil { // re-created by someone else
		t.Fatal(err)
	}
	r = mustRetryable(t, db, del, lsid, 3)
	if intOf(r["n"]) != 1 || len(retriedIDs(r)) != 1 || count(t, coll, bson.D{{Key: "_id", Value: 3}}) != 1 {
		t.Fatalf("retried delete ran again: %v", r)
	}

	fam := bson.D{{Key: "findAndModify", Value: "c"}, {Key: "query", Value: bson.D{{Key: "_id", Value: 1}}},
		{Key: "update", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "new", Value: true}}
	first = mustRetryable(t, db, fam, lsid, 4)
	again = mustRetryable(t, db, fam, lsid, 4)
	fv, _ := first["value"].(bson.D)
	av, _ := again["value"].(bson.D)
	if intOf(field(fv, "x")) != 2 || intOf(field(av, "x")) != 2 || intOf(again["retriedStmtId"]) != 0 {
		t.Fatalf("findAndModify: first %v, retried %v", first, again)
	}
	if err := coll.FindOne(ctx(t), bson.D{{Key: "_id", Value: 1}}).Decode(&doc); err != nil || intOf(doc["x"]) != 2 {
		t.Fatalf("after retried findAndModify: %v %v", doc, err)
	}
	// Its image is in config.image_collection, its record in
	// config.transactions.
	var rec bson.M
	if err := client.Database("config").Collection("transactions").FindOne(ctx(t), bson.D{{Key: "_id.id", Value: lsid[0].Value}}).Decode(&rec); err != nil || intOf(rec["txnNum"]) != 4 {
		t.Fatalf("config.transactions: %v %v", rec, err)
	}
	if err := client.Database("config").Collection("image_collection").FindOne(ctx(t), bson.D{{Key: "_id.id", Value: lsid[0].Value}}).Decode(&rec); err != nil || rec["imageKind"] != "postImage" {
		t.Fatalf("config.image_collection: %v %v", rec, err)
	}

	// An older txnNumber is too old.
	_, err := retryable(t, db, ins, lsid, 3)
	cmdErr(t, err, 225)
	if !strings.Contains(err.Error(), "Cannot start transaction 3 on session ") || !strings.Contains(err.Error(), "because a newer transaction with txnNumber 4 has already started on this session.") {
		t.Errorf("TransactionTooOld message: %v", err)
	}

	// multi: true is not retryable.
	_, err = retryable(t, db, bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "y", Value: 1}}}}}, {Key: "multi", Value: true}}}}}, lsid, 5)
	cmdErr(t, err, 72)
}

// TestRetryableWriteErrors: the transaction fields refused as mongod
// refuses them.
func TestRetryableWriteErrors(t *testing.T) {
	srv := cairndtest.Start(t, cairndtest.DefaultMode)
	client := dial(t, srv.URI)
	db := client.Database("rw")
	lsid := newLSID(t)
	_, err := retryable(t, db, bson.D{{Key: "find", Value: "c"}}, lsid, 1)
	cmdErr(t, err, 50768)
	err = db.RunCommand(ctx(t), bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{}}},
		{Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(1)}, {Key: "autocommit", Value: false}, {Key: "startTransaction", Value: true}}).Err()
	if err != nil { // a transaction (issue 22), no longer refused
		t.Fatalf("transaction statement: %v", err)
	}
	err = client.Database("admin").RunCommand(ctx(t), bson.D{{Key: "abortTransaction", Value: 1},
		{Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(1)}, {Key: "autocommit", Value: false}}).Err()
	if err != nil {
		t.Fatalf("abortTransaction: %v", err)
	}
	_, err = retryable(t, db, bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{}}}}, lsid, -1)
	cmdErr(t, err, 72)

	// A config.transactions record with no statement history (restored
	// by hand): the history is incomplete.
	uid := sha256.Sum256(nil)
	lsid2 := newLSID(t)
	full := bson.D{{Key: "id", Value: lsid2[0].Value}, {Key: "uid", Value: bson.Binary{Subtype: 0, Data: uid[:]}}}
	if _, err := client.Database("config").Collection("transactions").InsertOne(ctx(t), bson.D{{Key: "_id", Value: full}, {Key: "txnNum", Value: int64(7)},
		{Key: "lastWriteOpTime", Value: bson.D{{Key: "ts", Value: bson.Timestamp{T: 1, I: 1}}, {Key: "t", Value: int64(1)}}}, {Key: "lastWriteDate", Value: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	_, err = retryable(t, db, bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{}}}}, lsid2, 7)
	cmdErr(t, err, 217)
	if n := count(t, db.Collection("c"), bson.D{}); n != 0 {
		t.Errorf("documents after IncompleteTransactionHistory: %d", n)
	}

	// The driver's own retryable writes (retryWrites=true) work.
	if _, err := db.Collection("d").InsertMany(ctx(t), []any{bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "a", Value: 2}}}); err != nil {
		t.Fatal(err)
	}
}

// TestRetryableWritesStandalone: a standalone refuses transaction
// numbers, as mongod does.
func TestRetryableWritesStandalone(t *testing.T) {
	_, client := connect(t)
	db := client.Database("rw")
	_, err := retryable(t, db, bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{}}}}, newLSID(t), 1)
	var ce mongo.CommandError
	if !errors.As(err, &ce) || ce.Code != 20 || ce.Message != "Transaction numbers are only allowed on a replica set member or mongos" {
		t.Fatalf("standalone: %v", err)
	}
}

// TestRetryableWritesAfterCrash: a retry after kill -9 and a restart
// still applies once.
func TestRetryableWritesAfterCrash(t *testing.T) {
	dir := t.TempDir()
	srv, err := cairndtest.StartDir(dir, cairndtest.DefaultMode)
	if err != nil {
		t.Fatal(err)
	}
	client := dial(t, srv.URI)
	db := client.Database("rw")
	lsid := newLSID(t)
	ins := bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}}},
		{Key: "writeConcern", Value: bson.D{{Key: "j", Value: true}}}}
	mustRetryable(t, db, ins, lsid, 1)
	upd := bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "x", Value: 1}}}}}}}},
		{Key: "writeConcern", Value: bson.D{{Key: "j", Value: true}}}}
	mustRetryable(t, db, upd, lsid, 2)
	srv.Kill()
	client.Disconnect(ctx(t))

	srv, err = cairndtest.StartDir(dir, cairndtest.DefaultMode)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	client = dial(t, srv.URI)
	db = client.Database("rw")
	r := mustRetryable(t, db, upd, lsid, 2)
	if intOf(r["nModified"]) != 1 || len(retriedIDs(r)) != 1 {
		t.Fatalf("retried update after restart: %v", r)
	}
	var doc bson.M
	if err := db.Collection("c").FindOne(ctx(t), bson.D{{Key: "_id", Value: 1}}).Decode(&doc); err != nil || intOf(doc["x"]) != 1 {
		t.Fatalf("after the retry: %v %v", doc, err)
	}
	_, err = retryable(t, db, ins, lsid, 1)
	cmdErr(t, err, 225)
}
