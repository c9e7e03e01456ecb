package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// TestKill9KeepsAcknowledgedWrites kills cairnd with SIGKILL while
// concurrent j:true writers run, restarts it, and checks that every
// acknowledged insert is there and every index agrees with its collection.
func TestKill9KeepsAcknowledgedWrites(t *testing.T) {
	dir := t.TempDir()
	rng, _ := seededRand(t)
	acked := map[int64]bool{}
	var mu sync.Mutex
	next := int64(0)
	deadline := time.Now().Add(25 * time.Second)
	for cycle := 0; cycle < 4 && time.Now().Before(deadline); cycle++ {
		srv, err := cairndtest.StartDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		client, err := mongo.Connect(options.Client().ApplyURI(srv.URI).SetTimeout(5 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		coll := client.Database("crash").Collection("c", options.Collection().SetWriteConcern(writeconcern.Journaled()))
		if cycle == 0 {
			if _, err := coll.Indexes().CreateOne(context.Background(), mongo.IndexModel{Keys: bson.D{{Key: "k", Value: 1}}}); err != nil {
				t.Fatal(err)
			}
		}
		// Everything acknowledged before must be there.
		mu.Lock()
		want := len(acked)
		mu.Unlock()
		n, err := coll.CountDocuments(context.Background(), bson.D{})
		if err != nil {
			t.Fatalf("cycle %d: count: %v", cycle, err)
		}
		if n < int64(want) {
			t.Fatalf("cycle %d: %d documents after restart, %d were acknowledged", cycle, n, want)
		}
		mu.Lock()
		for id := range acked {
			var d bson.M
			if err := coll.FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
				mu.Unlock()
				t.Fatalf("cycle %d: acknowledged _id %d lost: %v", cycle, id, err)
			}
		}
		mu.Unlock()
		var v struct{ Valid bool }
		if err := client.Database("crash").RunCommand(context.Background(), bson.D{{Key: "validate", Value: "c"}}).Decode(&v); err != nil || !v.Valid {
			t.Fatalf("cycle %d: validate after restart: %+v, %v", cycle, v, err)
		}
		// Concurrent journaled writers until the kill.
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					mu.Lock()
					id := next
					next++
					mu.Unlock()
					_, err := coll.InsertOne(context.Background(), bson.D{{Key: "_id", Value: id}, {Key: "k", Value: bson.A{id % 7, id % 11}}, {Key: "pad", Value: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}})
					if err != nil {
						return // the server is gone
					}
					mu.Lock()
					acked[id] = true
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Duration(200+rng.IntN(800)) * time.Millisecond)
		srv.Kill()
		close(stop)
		wg.Wait()
		client.Disconnect(context.Background())
	}
	srv, err := cairndtest.StartDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() }) // after the client's disconnect (cleanups run last-in first-out)
	client := dial(t, srv.URI)
	coll := client.Database("crash").Collection("c")
	for id := range acked {
		if err := coll.FindOne(ctx(t), bson.D{{Key: "_id", Value: id}}).Err(); err != nil {
			t.Fatalf("final: acknowledged _id %d lost: %v", id, err)
		}
	}
	t.Logf("%d acknowledged journaled inserts survived the kills", len(acked))
	if len(acked) == 0 {
		t.Fatal("no write was acknowledged: the test proved nothing")
	}
}
