package e2e

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// TestChangeStreamResumeAcrossKill9: a watcher that records every event
// and resumes with its last token sees every acknowledged insert exactly
// once while the server is killed with SIGKILL and restarted under it.
func TestChangeStreamResumeAcrossKill9(t *testing.T) {
	dir := t.TempDir()
	rng, _ := seededRand(t)
	var (
		mu    sync.Mutex
		acked = map[int64]bool{}
		seen  = map[int64]int{}
		token bson.Raw
		next  int64
	)
	deadline := time.Now().Add(40 * time.Second)
	for cycle := 0; cycle < 3 && time.Now().Before(deadline); cycle++ {
		srv, err := cairndtest.StartDir(dir, cairndtest.DefaultMode)
		if err != nil {
			t.Fatal(err)
		}
		client, err := mongo.Connect(options.Client().ApplyURI(srv.URI).SetTimeout(10 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		coll := client.Database("cs").Collection("c", options.Collection().SetWriteConcern(writeconcern.Journaled()))
		if cycle == 0 {
			if err := client.Database("cs").CreateCollection(context.Background(), "c"); err != nil {
				t.Fatal(err)
			}
		}
		opts := options.ChangeStream().SetMaxAwaitTime(100 * time.Millisecond)
		if token != nil {
			opts.SetResumeAfter(token)
		}
		cs, err := coll.Watch(context.Background(), mongo.Pipeline{}, opts)
		if err != nil {
			t.Fatalf("cycle %d: watch: %v", cycle, err)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { // the writer, until the kill
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
				if _, err := coll.InsertOne(context.Background(), bson.D{{Key: "_id", Value: id}}); err != nil {
					return
				}
				mu.Lock()
				acked[id] = true
				mu.Unlock()
			}
		}()
		go func() { // the watcher, until the stream fails
			defer wg.Done()
			for cs.Next(context.Background()) {
				var ev struct {
					OperationType string `bson:"operationType"`
					DocumentKey   struct {
						ID int64 `bson:"_id"`
					} `bson:"documentKey"`
				}
				if err := bson.Unmarshal(cs.Current, &ev); err != nil || ev.OperationType != "insert" {
					t.Errorf("event %s: %v", cs.Current, err)
					return
				}
				mu.Lock()
				seen[ev.DocumentKey.ID]++
				token = append(bson.Raw(nil), cs.ResumeToken()...)
				mu.Unlock()
			}
		}()
		time.Sleep(time.Duration(300+rng.IntN(700)) * time.Millisecond)
		srv.Kill()
		close(stop)
		wg.Wait()
		_ = cs.Close(context.Background())
		client.Disconnect(context.Background())
	}
	// The last restart: resume and read until every acknowledged insert
	// has been seen.
	srv, err := cairndtest.StartDir(dir, cairndtest.DefaultMode)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	client := dial(t, srv.URI)
	cs, err := client.Database("cs").Collection("c").Watch(ctx(t), mongo.Pipeline{}, options.ChangeStream().SetResumeAfter(token).SetMaxAwaitTime(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(context.Background())
	missing := func() int {
		n := 0
		for id := range acked {
			if seen[id] == 0 {
				n++
			}
		}
		return n
	}
	for end := time.Now().Add(20 * time.Second); missing() > 0 && time.Now().Before(end); {
		if !cs.TryNext(ctx(t)) {
			if cs.Err() != nil {
				t.Fatal(cs.Err())
			}
			continue
		}
		var ev struct {
			DocumentKey struct {
				ID int64 `bson:"_id"`
			} `bson:"documentKey"`
		}
		if err := bson.Unmarshal(cs.Current, &ev); err != nil {
			t.Fatal(err)
		}
		seen[ev.DocumentKey.ID]++
	}
	if n := missing(); n > 0 {
		t.Fatalf("%d of %d acknowledged inserts never seen", n, len(acked))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("insert %d seen %d times", id, n)
		}
	}
	if len(acked) < 10 {
		t.Fatalf("only %d inserts were acknowledged", len(acked))
	}
	t.Logf("%d acknowledged inserts, %d events, each seen once across the kills", len(acked), len(seen))
}

// TestChangeStreamTransactionEvents: a transaction's statements appear
// only after its commit, one event each in statement order, with the
// session's lsid and txnNumber.
func TestChangeStreamTransactionEvents(t *testing.T) {
	srv := cairndtest.Start(t, cairndtest.DefaultMode)
	c := dial(t, srv.URI)
	coll := c.Database("cstxn").Collection("c")
	if err := c.Database("cstxn").CreateCollection(ctx(t), "c"); err != nil {
		t.Fatal(err)
	}
	cs, err := coll.Watch(ctx(t), mongo.Pipeline{}, options.ChangeStream().SetMaxAwaitTime(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(context.Background())
	s, err := c.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.EndSession(context.Background())
	if err := s.StartTransaction(); err != nil {
		t.Fatal(err)
	}
	sc := mongo.NewSessionContext(ctx(t), s)
	for i := 1; i <= 3; i++ {
		if _, err := coll.InsertOne(sc, bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := coll.UpdateOne(sc, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.DeleteOne(sc, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if cs.TryNext(ctx(t)) {
		t.Fatalf("an event before the commit: %s", cs.Current)
	}
	if err := s.CommitTransaction(ctx(t)); err != nil {
		t.Fatal(err)
	}
	want := []string{"insert 1", "insert 2", "insert 3", "update 2", "delete 1"}
	var got []string
	var lastToken string
	for len(got) < len(want) && cs.Next(ctx(t)) {
		var ev struct {
			OperationType string   `bson:"operationType"`
			ID            bson.Raw `bson:"_id"`
			DocumentKey   struct {
				ID int32 `bson:"_id"`
			} `bson:"documentKey"`
			LSID      bson.Raw `bson:"lsid"`
			TxnNumber int64    `bson:"txnNumber"`
		}
		if err := bson.Unmarshal(cs.Current, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.LSID == nil || ev.TxnNumber == 0 {
			t.Errorf("event without lsid/txnNumber: %s", cs.Current)
		}
		data := ev.ID.Lookup("_data").StringValue()
		if data <= lastToken {
			t.Errorf("token %s not after %s", data, lastToken)
		}
		lastToken = data
		got = append(got, fmt.Sprintf("%s %d", ev.OperationType, ev.DocumentKey.ID))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
}

// TestChangeStreamThousandWatchers: 1,000 concurrent watchers of one
// collection each receive every event of a burst of inserts, in order.
func TestChangeStreamThousandWatchers(t *testing.T) {
	const watchers, burst = 1000, 50
	srv := cairndtest.Start(t, cairndtest.DefaultMode)
	c := dial(t, srv.URI, options.Client().SetMaxPoolSize(watchers+16).SetTimeout(120*time.Second))
	coll := c.Database("csmany").Collection("c")
	if err := c.Database("csmany").CreateCollection(ctx(t), "c"); err != nil {
		t.Fatal(err)
	}
	streams := make([]*mongo.ChangeStream, watchers)
	for i := range streams {
		cs, err := coll.Watch(ctx(t), mongo.Pipeline{}, options.ChangeStream().SetMaxAwaitTime(time.Second))
		if err != nil {
			t.Fatalf("watcher %d: %v", i, err)
		}
		streams[i] = cs
		defer cs.Close(context.Background())
	}
	var bad atomic.Int64
	var wg sync.WaitGroup
	runCtx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for i, cs := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := int32(0); n < burst; n++ {
				if !cs.Next(runCtx) {
					t.Errorf("watcher %d after %d events: %v", i, n, cs.Err())
					bad.Add(1)
					return
				}
				var ev struct {
					DocumentKey struct {
						ID int32 `bson:"_id"`
					} `bson:"documentKey"`
				}
				if err := bson.Unmarshal(cs.Current, &ev); err != nil || ev.DocumentKey.ID != n {
					t.Errorf("watcher %d: event %d is %s", i, n, cs.Current)
					bad.Add(1)
					return
				}
			}
		}()
	}
	for i := int32(0); i < burst; i++ {
		if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if bad.Load() > 0 {
		t.Fatalf("%d watchers missed events", bad.Load())
	}
}

// TestChangeStreamImagesAndClusterParameter: pre- and post-images of a
// collection with changeStreamPreAndPostImages, changeStreamOptions'
// expireAfterSeconds through setClusterParameter and getClusterParameter,
// and 40573 on a standalone.
func TestChangeStreamImagesAndClusterParameter(t *testing.T) {
	srv := cairndtest.Start(t, cairndtest.DefaultMode)
	c := dial(t, srv.URI)
	db := c.Database("csimg")
	if err := db.RunCommand(ctx(t), bson.D{{Key: "create", Value: "c"}, {Key: "changeStreamPreAndPostImages", Value: bson.D{{Key: "enabled", Value: true}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("c")
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	cs, err := coll.Watch(ctx(t), mongo.Pipeline{}, options.ChangeStream().
		SetFullDocument(options.Required).SetFullDocumentBeforeChange(options.Required))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(context.Background())
	if _, err := coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "a", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.DeleteOne(ctx(t), bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	doc := func(a int32) string {
		raw, _ := bson.Marshal(bson.D{{Key: "_id", Value: int32(1)}, {Key: "a", Value: a}})
		return bson.Raw(raw).String()
	}
	for _, want := range []struct{ op, before, after string }{
		{"update", doc(1), doc(2)},
		{"delete", doc(2), ""},
	} {
		if !cs.Next(ctx(t)) {
			t.Fatal(cs.Err())
		}
		ev := cs.Current
		if op := ev.Lookup("operationType").StringValue(); op != want.op {
			t.Fatalf("event %s, want %s", ev, want.op)
		}
		if got := ev.Lookup("fullDocumentBeforeChange").Document().String(); got != want.before {
			t.Errorf("%s: fullDocumentBeforeChange %s, want %s", want.op, got, want.before)
		}
		if want.after != "" {
			if got := ev.Lookup("fullDocument").Document().String(); got != want.after {
				t.Errorf("%s: fullDocument %s, want %s", want.op, got, want.after)
			}
		}
	}
	// A transaction's statements keep their pre-images too, under their
	// operation's index in the applyOps entry.
	if _, err := coll.InsertMany(ctx(t), []any{bson.D{{Key: "_id", Value: int32(1)}, {Key: "a", Value: int32(5)}}, bson.D{{Key: "_id", Value: int32(2)}}}); err != nil {
		t.Fatal(err)
	}
	sess, err := c.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(context.Background())
	_, err = sess.WithTransaction(ctx(t), func(sc context.Context) (any, error) {
		if _, err := coll.DeleteOne(sc, bson.D{{Key: "_id", Value: 2}}); err != nil {
			return nil, err
		}
		return coll.UpdateOne(sc, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "a", Value: 1}}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"insert", "insert", "delete", "update"} {
		if !cs.Next(ctx(t)) {
			t.Fatal(cs.Err())
		}
		ev := cs.Current
		if op := ev.Lookup("operationType").StringValue(); op != want {
			t.Fatalf("event %s, want %s", ev, want)
		}
		if want == "update" {
			if got := ev.Lookup("fullDocumentBeforeChange").Document().String(); got != doc(5) {
				t.Errorf("transaction's update: fullDocumentBeforeChange %s, want %s", got, doc(5))
			}
			if got := ev.Lookup("fullDocument").Document().String(); got != doc(6) {
				t.Errorf("transaction's update: fullDocument %s, want %s", got, doc(6))
			}
		}
		if want == "delete" {
			if _, err := ev.LookupErr("fullDocumentBeforeChange", "_id"); err != nil {
				t.Errorf("transaction's delete has no pre-image: %s", ev)
			}
		}
	}
	admin := c.Database("admin")
	set := func(v any) error {
		return admin.RunCommand(ctx(t), bson.D{{Key: "setClusterParameter", Value: bson.D{{Key: "changeStreamOptions",
			Value: bson.D{{Key: "preAndPostImages", Value: bson.D{{Key: "expireAfterSeconds", Value: v}}}}}}}}).Err()
	}
	if err := set(int64(3600)); err != nil {
		t.Fatal(err)
	}
	cmdErr(t, set("soon"), 2)
	cmdErr(t, set(int32(0)), 2)
	var got struct {
		ClusterParameters []struct {
			ID               string `bson:"_id"`
			PreAndPostImages struct {
				ExpireAfterSeconds int64 `bson:"expireAfterSeconds"`
			} `bson:"preAndPostImages"`
		} `bson:"clusterParameters"`
	}
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "getClusterParameter", Value: "changeStreamOptions"}}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if len(got.ClusterParameters) != 1 || got.ClusterParameters[0].PreAndPostImages.ExpireAfterSeconds != 3600 {
		t.Errorf("getClusterParameter: %+v", got)
	}
	// A standalone has no oplog: mongod's 40573.
	sa := cairndtest.Start(t)
	_, err = dial(t, sa.URI).Database("x").Collection("c").Watch(ctx(t), mongo.Pipeline{})
	cmdErr(t, err, 40573)
}

// TestChangeStreamRefusals: mongod's errors for a view, a stage a change
// stream may not run, two resume options, and the admin and cluster
// scopes; a database stream sees its collections and not another
// database's.
func TestChangeStreamRefusals(t *testing.T) {
	srv := cairndtest.Start(t, cairndtest.DefaultMode)
	c := dial(t, srv.URI)
	db := c.Database("csref")
	if err := db.CreateCollection(ctx(t), "c"); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateView(ctx(t), "v", "c", mongo.Pipeline{}); err != nil {
		t.Fatal(err)
	}
	_, err := db.Collection("v").Watch(ctx(t), mongo.Pipeline{})
	cmdErr(t, err, 166)
	_, err = db.Collection("c").Watch(ctx(t), mongo.Pipeline{{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}}}}})
	cmdErr(t, err, 20)
	_, err = db.Collection("c").Watch(ctx(t), mongo.Pipeline{{{Key: "$unknownStage", Value: 1}}})
	cmdErr(t, err, 40324)
	_, err = db.Collection("c").Watch(ctx(t), mongo.Pipeline{}, options.ChangeStream().
		SetStartAtOperationTime(&bson.Timestamp{T: 1}).SetResumeAfter(bson.D{{Key: "_data", Value: "00"}}))
	if err == nil {
		t.Fatal("two resume options accepted")
	}
	err = c.Database("admin").RunCommand(ctx(t), bson.D{{Key: "aggregate", Value: 1},
		{Key: "pipeline", Value: bson.A{bson.D{{Key: "$changeStream", Value: bson.D{}}}}}, {Key: "cursor", Value: bson.D{}}}).Err()
	cmdErr(t, err, 73)
	err = db.RunCommand(ctx(t), bson.D{{Key: "aggregate", Value: 1},
		{Key: "pipeline", Value: bson.A{bson.D{{Key: "$changeStream", Value: bson.D{{Key: "allChangesForCluster", Value: true}}}}}}, {Key: "cursor", Value: bson.D{}}}).Err()
	cmdErr(t, err, 73)
	_, err = db.Collection("c").Watch(ctx(t), mongo.Pipeline{}, options.ChangeStream().SetStartAtOperationTime(&bson.Timestamp{T: 1}))
	cmdErr(t, err, 286)
	// A database stream: its collections' changes, not another database's.
	cs, err := db.Watch(ctx(t), mongo.Pipeline{})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(context.Background())
	if _, err := c.Database("csother").Collection("x").InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("d").InsertOne(ctx(t), bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	if !cs.Next(ctx(t)) {
		t.Fatal(cs.Err())
	}
	if coll := cs.Current.Lookup("ns", "coll").StringValue(); coll != "d" {
		t.Errorf("database stream's first event: %s", cs.Current)
	}
}
