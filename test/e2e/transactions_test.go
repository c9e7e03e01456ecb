package e2e

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

func startTxnServer(t *testing.T) (*mongo.Client, *mongo.Client) {
	t.Helper()
	srv := cairndtest.Start(t, cairndtest.DefaultMode)
	return dial(t, srv.URI), dial(t, srv.URI)
}

func txnCount(t *testing.T, coll *mongo.Collection) int64 {
	t.Helper()
	n, err := coll.CountDocuments(context.Background(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTransactionCommitAbort: a transaction's writes are invisible to
// another client until commitTransaction, then all visible; an aborted
// transaction's writes are discarded; the commit is ONE applyOps entry.
func TestTransactionCommitAbort(t *testing.T) {
	c1, c2 := startTxnServer(t)
	bg := context.Background()
	coll := c1.Database("txn").Collection("c")
	other := c2.Database("txn").Collection("c")
	if err := c1.Database("txn").CreateCollection(bg, "c"); err != nil {
		t.Fatal(err)
	}
	s, err := c1.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.EndSession(bg)
	if err := s.StartTransaction(); err != nil {
		t.Fatal(err)
	}
	sc := mongo.NewSessionContext(bg, s)
	for i := range 3 {
		if _, err := coll.InsertOne(sc, bson.D{{Key: "_id", Value: i}, {Key: "v", Value: i}}); err != nil {
			t.Fatalf("insert %d in the transaction: %v", i, err)
		}
	}
	if _, err := coll.UpdateOne(sc, bson.D{{Key: "_id", Value: 0}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: 10}}}}); err != nil {
		t.Fatal(err)
	}
	// The transaction reads its own writes; others see none.
	if n, err := coll.CountDocuments(sc, bson.D{}); err != nil || n != 3 {
		t.Fatalf("inside: %d documents (%v), want 3", n, err)
	}
	if n := txnCount(t, other); n != 0 {
		t.Fatalf("another client sees %d documents before the commit", n)
	}
	if err := s.CommitTransaction(bg); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if n := txnCount(t, other); n != 3 {
		t.Fatalf("another client sees %d documents after the commit, want 3", n)
	}
	var d bson.M
	if err := other.FindOne(bg, bson.D{{Key: "_id", Value: 0}}).Decode(&d); err != nil || intOf(d["v"]) != 10 {
		t.Fatalf("updated document: %v %v", d, err)
	}
	// One applyOps entry holding the four operations.
	oplog := c2.Database("local").Collection("oplog.rs")
	var e bson.M
	if err := oplog.FindOne(bg, bson.D{{Key: "o.applyOps", Value: bson.D{{Key: "$exists", Value: true}}}}).Decode(&e); err != nil {
		t.Fatalf("no applyOps entry: %v", err)
	}
	var ops bson.A
	if o, ok := e["o"].(bson.D); ok {
		for _, f := range o {
			if f.Key == "applyOps" {
				ops, _ = f.Value.(bson.A)
			}
		}
	}
	if e["op"] != "c" || e["ns"] != "admin.$cmd" || len(ops) != 4 || e["lsid"] == nil || e["txnNumber"] == nil || e["stmtId"] != nil {
		t.Fatalf("applyOps entry: %v", e)
	}
	if n, _ := oplog.CountDocuments(bg, bson.D{{Key: "ns", Value: "txn.c"}}); n != 0 {
		t.Fatalf("%d separate entries for the transaction's writes", n)
	}

	// Abort discards.
	if err := s.StartTransaction(); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(sc, bson.D{{Key: "_id", Value: 99}}); err != nil {
		t.Fatal(err)
	}
	if err := s.AbortTransaction(bg); err != nil {
		t.Fatal(err)
	}
	if n := txnCount(t, other); n != 3 {
		t.Fatalf("after abort: %d documents, want 3", n)
	}
	// The convenient API commits.
	if _, err := s.WithTransaction(bg, func(sc context.Context) (any, error) {
		_, err := coll.InsertOne(sc, bson.D{{Key: "_id", Value: 100}})
		return nil, err
	}); err != nil {
		t.Fatal(err)
	}
	if n := txnCount(t, other); n != 4 {
		t.Fatalf("after WithTransaction: %d documents, want 4", n)
	}
}

func hasLabel(err error, label string) bool {
	var le mongo.LabeledError
	return errors.As(err, &le) && le.HasErrorLabel(label)
}

// TestTransactionWriteConflict: the second of two transactions updating
// the same document gets WriteConflict with TransientTransactionError at
// the write; WithTransaction's retry then succeeds.
func TestTransactionWriteConflict(t *testing.T) {
	c1, c2 := startTxnServer(t)
	bg := context.Background()
	coll := c1.Database("txn").Collection("w")
	if _, err := coll.InsertOne(bg, bson.D{{Key: "_id", Value: 1}, {Key: "n", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	s1, _ := c1.StartSession()
	defer s1.EndSession(bg)
	s2, _ := c2.StartSession()
	defer s2.EndSession(bg)
	coll2 := c2.Database("txn").Collection("w")
	inc := bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}
	s1.StartTransaction()
	sc1 := mongo.NewSessionContext(bg, s1)
	if _, err := coll.UpdateOne(sc1, bson.D{{Key: "_id", Value: 1}}, inc); err != nil {
		t.Fatal(err)
	}
	s2.StartTransaction()
	sc2 := mongo.NewSessionContext(bg, s2)
	_, err := coll2.UpdateOne(sc2, bson.D{{Key: "_id", Value: 1}}, inc)
	var ce mongo.CommandError
	if !errors.As(err, &ce) || ce.Code != 112 || !hasLabel(err, "TransientTransactionError") {
		t.Fatalf("second writer: %v, want WriteConflict (112) with TransientTransactionError", err)
	}
	// The conflict aborted the second transaction.
	if err := s2.CommitTransaction(bg); err == nil {
		t.Fatal("commit of the aborted transaction succeeded")
	}
	// WithTransaction retries until the first commits.
	done := make(chan error, 1)
	go func() {
		_, err := s2.WithTransaction(bg, func(sc context.Context) (any, error) {
			_, err := coll2.UpdateOne(sc, bson.D{{Key: "_id", Value: 1}}, inc)
			return nil, err
		})
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := s1.CommitTransaction(bg); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("WithTransaction: %v", err)
	}
	var d bson.M
	if err := coll.FindOne(bg, bson.D{{Key: "_id", Value: 1}}).Decode(&d); err != nil || intOf(d["n"]) != 2 {
		t.Fatalf("document: %v %v, want n: 2", d, err)
	}
}

// TestTransactionBlocksPlainWrite: a non-transactional update of a
// document an open transaction holds waits until the transaction commits,
// then applies on top of it.
func TestTransactionBlocksPlainWrite(t *testing.T) {
	c1, c2 := startTxnServer(t)
	bg := context.Background()
	coll := c1.Database("txn").Collection("b")
	if _, err := coll.InsertOne(bg, bson.D{{Key: "_id", Value: 1}, {Key: "n", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	s, _ := c1.StartSession()
	defer s.EndSession(bg)
	s.StartTransaction()
	sc := mongo.NewSessionContext(bg, s)
	if _, err := coll.UpdateOne(sc, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "n", Value: 10}}}}); err != nil {
		t.Fatal(err)
	}
	var applied atomic.Bool
	done := make(chan error, 1)
	go func() {
		_, err := c2.Database("txn").Collection("b").UpdateOne(bg, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}})
		applied.Store(true)
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if applied.Load() {
		t.Fatal("the plain update did not wait for the transaction")
	}
	if err := s.CommitTransaction(bg); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var d bson.M
	if err := coll.FindOne(bg, bson.D{{Key: "_id", Value: 1}}).Decode(&d); err != nil || intOf(d["n"]) != 11 {
		t.Fatalf("document: %v %v, want n: 11 (the update on top of the commit)", d, err)
	}
}

// TestTransactionBankTransfers: 8 goroutines move money between accounts
// in transactions (WithTransaction retries conflicts) while readers check
// that every snapshot holds the same total.
func TestTransactionBankTransfers(t *testing.T) {
	c1, c2 := startTxnServer(t)
	bg := context.Background()
	const accounts, start = 10, 100
	coll := c1.Database("bank").Collection("acct")
	var docs []any
	for i := range accounts {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "bal", Value: start}})
	}
	if _, err := coll.InsertMany(bg, docs); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	var commits, badTotals atomic.Int64
	errs := make(chan error, 16)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := c1
			if g%2 == 1 {
				client = c2
			}
			acct := client.Database("bank").Collection("acct")
			s, err := client.StartSession()
			if err != nil {
				errs <- err
				return
			}
			defer s.EndSession(bg)
			for i := 0; time.Now().Before(deadline); i++ {
				from, to := (g+i)%accounts, (g*3+i*7+1)%accounts
				if from == to {
					continue
				}
				_, err := s.WithTransaction(bg, func(sc context.Context) (any, error) {
					if g%4 == 0 {
						// A reader: the total of its snapshot.
						cur, err := acct.Find(sc, bson.D{})
						if err != nil {
							return nil, err
						}
						var all []bson.M
						if err := cur.All(sc, &all); err != nil {
							return nil, err
						}
						total := int64(0)
						for _, d := range all {
							total += intOf(d["bal"])
						}
						if total != accounts*start {
							badTotals.Add(1)
						}
					}
					if _, err := acct.UpdateOne(sc, bson.D{{Key: "_id", Value: from}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "bal", Value: -1}}}}); err != nil {
						return nil, err
					}
					_, err := acct.UpdateOne(sc, bson.D{{Key: "_id", Value: to}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "bal", Value: 1}}}})
					return nil, err
				})
				if err != nil {
					errs <- fmt.Errorf("transfer: %w", err)
					return
				}
				commits.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	cur, err := coll.Aggregate(bg, mongo.Pipeline{{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "t", Value: bson.D{{Key: "$sum", Value: "$bal"}}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var res []bson.M
	if err := cur.All(bg, &res); err != nil || len(res) != 1 || intOf(res[0]["t"]) != accounts*start {
		t.Fatalf("total after the run: %v %v", res, err)
	}
	if badTotals.Load() != 0 {
		t.Fatalf("%d snapshots saw a wrong total", badTotals.Load())
	}
	if commits.Load() == 0 {
		t.Fatal("no transfer committed")
	}
	t.Logf("%d transfers committed", commits.Load())
	_ = options.Client
}
