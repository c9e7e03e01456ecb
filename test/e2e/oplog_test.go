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

	cbson "github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/internal/testutil/cairndtest"
	"github.com/cairndb/cairn/kv"
)

// TestOplogKill9MatchesData kills a cairnd --replSet with SIGKILL while
// concurrent j:true writers insert and update, three times, then opens
// its data directory with the engine and checks that replaying the
// oplog gives exactly the collection's documents and that every
// acknowledged write has exactly its entry.
func TestOplogKill9MatchesData(t *testing.T) {
	dir := t.TempDir()
	rng, seed := seededRand(t)
	type ack struct{ id, n int64 } // n 0: the insert
	var acked []ack
	var mu sync.Mutex
	next := int64(1)
	for cycle := 0; cycle < 3; cycle++ {
		srv, err := cairndtest.StartDir(dir, cairndtest.DefaultMode, "--oplogSize", "64")
		if err != nil {
			t.Fatal(err)
		}
		client, err := mongo.Connect(options.Client().ApplyURI(srv.URI).SetTimeout(5 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		coll := client.Database("crash").Collection("c", options.Collection().SetWriteConcern(writeconcern.Journaled()))
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
					n := next
					next++
					var target int64
					if len(acked) > 0 && n%3 == 0 {
						target = acked[int(n)%len(acked)].id
					}
					mu.Unlock()
					var err error
					a := ack{n, 0}
					if target != 0 {
						a = ack{target, n}
						_, err = coll.UpdateOne(context.Background(), bson.D{{Key: "_id", Value: target}}, bson.D{{Key: "$set", Value: bson.D{{Key: "n", Value: n}}}})
					} else {
						_, err = coll.InsertOne(context.Background(), bson.D{{Key: "_id", Value: n}, {Key: "n", Value: int64(0)}, {Key: "pad", Value: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}})
					}
					if err != nil {
						return // the server is gone
					}
					mu.Lock()
					acked = append(acked, a)
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Duration(300+rng.IntN(700)) * time.Millisecond)
		srv.Kill()
		close(stop)
		wg.Wait()
		client.Disconnect(context.Background())
	}
	if len(acked) == 0 {
		t.Fatal("no write was acknowledged: the test proved nothing")
	}
	db, err := kv.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	replayed := map[int64]cbson.Doc{}
	seen := map[ack]int{}
	err = db.View(func(tx *kv.Tx) error {
		r, err := oplog.Entries(tx, 0)
		if err != nil {
			return err
		}
		for r.Next() {
			e := r.Entry()
			if ns, _ := e.Lookup("ns"); ns.StringValue() != "crash.c" {
				continue
			}
			op, _ := e.Lookup("op")
			id, _ := e.LookupPath("o2", "_id")
			o, _ := e.Lookup("o")
			doc := cbson.Doc(append([]byte(nil), o.Data...))
			switch op.StringValue() {
			case "i":
				replayed[id.Int64()] = doc
				seen[ack{id.Int64(), 0}]++
			case "u":
				if d, ok := doc.Lookup("diff"); ok {
					if doc, err = oplog.ApplyDiff(replayed[id.Int64()], d.Document()); err != nil {
						t.Fatalf("seed %d: %s: %v", seed, e.String(), err)
					}
				}
				replayed[id.Int64()] = doc
				n, _ := doc.Lookup("n")
				seen[ack{id.Int64(), n.Int64()}]++
			default:
				t.Fatalf("seed %d: unexpected entry %s", seed, e.String())
			}
		}
		if err := r.Err(); err != nil {
			return err
		}
		coll, err := catalog.Get(tx, "crash", "c")
		if err != nil {
			return err
		}
		data, err := exec.DataTree(tx, coll)
		if err != nil {
			return err
		}
		count := 0
		cur := data.Cursor()
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			count++
			id, _ := cbson.Doc(v).Lookup("_id")
			if string(replayed[id.Int64()]) != string(v) {
				t.Fatalf("seed %d: document %s, the oplog gives %s", seed, cbson.Doc(v).String(), replayed[id.Int64()].String())
			}
		}
		if count != len(replayed) {
			t.Fatalf("seed %d: %d documents, %d from the oplog", seed, count, len(replayed))
		}
		return cur.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range acked {
		if seen[a] != 1 {
			t.Fatalf("seed %d: acknowledged write %+v has %d entries", seed, a, seen[a])
		}
	}
	t.Logf("%d acknowledged journaled writes, each with its entry, across 3 kills", len(acked))
}
