package e2e

import (
	"context"
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

func txnStatus(t *testing.T, c *mongo.Client) bson.M {
	t.Helper()
	var st struct{ Transactions bson.M }
	if err := c.Database("admin").RunCommand(ctx(t), bson.D{{Key: "serverStatus", Value: 1}}).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.Transactions == nil {
		t.Fatal("serverStatus without transactions")
	}
	return st.Transactions
}

// asM converts a nested document (decoded as bson.D) to a bson.M.
func asM(t *testing.T, v any) bson.M {
	t.Helper()
	b, err := bson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m bson.M
	if err := bson.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// idleTxns returns currentOp's idle-session documents.
func idleTxns(t *testing.T, c *mongo.Client, extra bson.D) []bson.M {
	t.Helper()
	var out struct{ Inprog []bson.M }
	cmd := append(bson.D{{Key: "currentOp", Value: 1}}, extra...)
	if err := c.Database("admin").RunCommand(ctx(t), cmd).Decode(&out); err != nil {
		t.Fatal(err)
	}
	var idle []bson.M
	for _, op := range out.Inprog {
		if op["type"] == "idleSession" {
			idle = append(idle, op)
		}
	}
	return idle
}

// TestTransactionStatus: serverStatus.transactions counts transactions as
// mongod 7.0's; currentOp lists an open transaction no command runs as
// an idle session (not with idleSessions: false); a transaction's cursor
// is killed when it commits (a getMore then answers CursorNotFound).
func TestTransactionStatus(t *testing.T) {
	c1, c2 := startTxnServer(t)
	bg := context.Background()
	coll := c1.Database("txs").Collection("c")
	for i := range 3 {
		if _, err := coll.InsertOne(bg, bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	before := txnStatus(t, c2)
	s, err := c1.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.EndSession(bg)
	if err := s.StartTransaction(); err != nil {
		t.Fatal(err)
	}
	sc := mongo.NewSessionContext(bg, s)
	if _, err := coll.InsertOne(sc, bson.D{{Key: "_id", Value: 10}}); err != nil {
		t.Fatal(err)
	}
	cur, err := coll.Find(sc, bson.D{}, options.Find().SetBatchSize(1))
	if err != nil {
		t.Fatal(err)
	}
	st := txnStatus(t, c2)
	for k, want := range map[string]int64{"currentOpen": 1, "currentInactive": 1, "currentActive": 0} {
		if st[k] != want {
			t.Errorf("open: %s = %v, want %d (%v)", k, st[k], want, st)
		}
	}
	if got := st["totalStarted"].(int64) - before["totalStarted"].(int64); got != 1 {
		t.Errorf("totalStarted grew by %d, want 1", got)
	}
	idle := idleTxns(t, c2, nil)
	if len(idle) != 1 || idle[0]["active"] != false {
		t.Fatalf("currentOp idle sessions: %v", idle)
	}
	if tr := asM(t, idle[0]["transaction"]); asM(t, tr["parameters"])["autocommit"] != false {
		t.Errorf("idle session's transaction: %v", idle[0])
	}
	if idle := idleTxns(t, c2, bson.D{{Key: "idleSessions", Value: false}}); len(idle) != 0 {
		t.Errorf("idleSessions: false lists %v", idle)
	}
	if err := s.CommitTransaction(bg); err != nil {
		t.Fatal(err)
	}
	st = txnStatus(t, c2)
	if st["currentOpen"] != int64(0) || st["totalCommitted"].(int64)-before["totalCommitted"].(int64) != 1 {
		t.Errorf("after commit: %v", st)
	}
	// The cursor opened in the transaction ended with it.
	for cur.Next(sc) {
	}
	var se mongo.ServerError
	if err := cur.Err(); !errors.As(err, &se) || !se.HasErrorCode(43) {
		t.Errorf("getMore of a committed transaction's cursor: %v, want CursorNotFound", err)
	}
	cur.Close(bg)
	if len(idleTxns(t, c2, nil)) != 0 {
		t.Error("a committed transaction still listed")
	}
}

// TestRetryableWriteInTransactionSession: a retryable write on a session
// with a transaction is checked against it, as mongod: the transaction's
// number is IncompleteTransactionHistory, a lower one TransactionTooOld,
// and a higher one aborts the open transaction.
func TestRetryableWriteInTransactionSession(t *testing.T) {
	c, _ := startTxnServer(t)
	db := c.Database("rtx")
	if err := db.CreateCollection(ctx(t), "c"); err != nil {
		t.Fatal(err)
	}
	lsid := newLSID(t)
	start := bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: "in-txn"}}}},
		{Key: "startTransaction", Value: true}, {Key: "autocommit", Value: false}}
	mustRetryable(t, db, start, lsid, 5)
	plain := func(id string) bson.D {
		return bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: id}}}}}
	}
	_, err := retryable(t, db, plain("same"), lsid, 5)
	cmdErr(t, err, 217)
	_, err = retryable(t, db, plain("lower"), lsid, 4)
	cmdErr(t, err, 225)
	before := txnStatus(t, c)["totalAborted"].(int64)
	mustRetryable(t, db, plain("higher"), lsid, 6)
	if got := txnStatus(t, c)["totalAborted"].(int64) - before; got != 1 {
		t.Errorf("the higher retryable write aborted %d transactions, want 1", got)
	}
	n, err := db.Collection("c").CountDocuments(ctx(t), bson.D{})
	if err != nil || n != 1 {
		t.Errorf("documents: %d, %v; want only the retryable write's", n, err)
	}
	_, err = retryable(t, c.Database("admin"), bson.D{{Key: "commitTransaction", Value: 1}, {Key: "autocommit", Value: false}}, lsid, 5)
	cmdErr(t, err, 225) // the session moved on to 6
}

// TestTransactionCreateIndexes: createIndexes in a transaction builds the
// index of a collection the transaction creates (its own documents
// included, visible at commit) and refuses an existing collection with
// OperationNotSupportedInTransaction, as mongod 4.4+.
func TestTransactionCreateIndexes(t *testing.T) {
	c, _ := startTxnServer(t)
	bg := context.Background()
	db := c.Database("tix")
	if err := db.CreateCollection(bg, "old"); err != nil {
		t.Fatal(err)
	}
	s, err := c.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.EndSession(bg)
	sc := mongo.NewSessionContext(bg, s)
	if err := s.StartTransaction(); err != nil {
		t.Fatal(err)
	}
	_, err = db.Collection("old").Indexes().CreateOne(sc, mongo.IndexModel{Keys: bson.D{{Key: "x", Value: 1}}})
	cmdErr(t, err, 263)
	s.AbortTransaction(bg)

	if err := s.StartTransaction(); err != nil {
		t.Fatal(err)
	}
	fresh := db.Collection("fresh")
	for i := range 5 {
		if _, err := fresh.InsertOne(sc, bson.D{{Key: "_id", Value: i}, {Key: "x", Value: i * 10}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fresh.Indexes().CreateOne(sc, mongo.IndexModel{Keys: bson.D{{Key: "x", Value: 1}}, Options: options.Index().SetUnique(true)}); err != nil {
		t.Fatalf("createIndexes on a collection new in the transaction: %v", err)
	}
	if err := s.CommitTransaction(bg); err != nil {
		t.Fatal(err)
	}
	n, err := fresh.CountDocuments(bg, bson.D{{Key: "x", Value: bson.D{{Key: "$gte", Value: 20}}}}, options.Count().SetHint("x_1"))
	if err != nil || n != 3 {
		t.Errorf("count through the index: %d, %v; want 3", n, err)
	}
	_, err = fresh.InsertOne(bg, bson.D{{Key: "_id", Value: 9}, {Key: "x", Value: 10}})
	cmdErr(t, err, 11000) // the unique index holds the transaction's documents
}

// TestTransactionCommitRetriedAfterRestart: a commitTransaction retried
// after the server was killed and restarted answers the committed outcome
// again (mongod restores it from config.transactions), and the
// transaction's number answers TransactionCommitted, so that a driver's
// retry does not run the transaction twice.
func TestTransactionCommitRetriedAfterRestart(t *testing.T) {
	dir := t.TempDir()
	srv, err := cairndtest.StartDir(dir, cairndtest.DefaultMode)
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv.URI)
	db := c.Database("rst")
	if err := db.CreateCollection(ctx(t), "c"); err != nil {
		t.Fatal(err)
	}
	lsid := newLSID(t)
	mustRetryable(t, db, bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}},
		{Key: "startTransaction", Value: true}, {Key: "autocommit", Value: false}}, lsid, 3)
	commit := bson.D{{Key: "commitTransaction", Value: 1}, {Key: "autocommit", Value: false}, {Key: "writeConcern", Value: bson.D{{Key: "w", Value: "majority"}}}}
	mustRetryable(t, c.Database("admin"), commit, lsid, 3)
	c.Disconnect(ctx(t)) // before the kill: its monitor would wait on a dead server
	srv.Kill()
	srv, err = cairndtest.StartDir(dir, cairndtest.DefaultMode)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	c = dial(t, srv.URI)
	if _, err := retryable(t, c.Database("admin"), commit, lsid, 3); err != nil {
		t.Fatalf("commit retried after a restart: %v", err)
	}
	_, err = retryable(t, c.Database("rst"), bson.D{{Key: "find", Value: "c"}, {Key: "autocommit", Value: false}}, lsid, 3)
	cmdErr(t, err, 256)
	n, err := c.Database("rst").Collection("c").CountDocuments(ctx(t), bson.D{})
	if err != nil || n != 1 {
		t.Errorf("documents: %d, %v", n, err)
	}
}
