package e2e

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestCappedConcurrentWritersDriver: 8 clients insert into a capped
// collection of 10 documents; what survives is, for every writer, a
// suffix of what it wrote (the oldest go first), in insertion order both
// ways, and validate finds the _id index in step.
func TestCappedConcurrentWritersDriver(t *testing.T) {
	_, client := connect(t)
	db := client.Database("capped")
	if err := db.CreateCollection(ctx(t), "c", options.CreateCollection().SetCapped(true).SetSizeInBytes(1<<20).SetMaxDocuments(10)); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("c")
	const writers, each = 8, 30
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: fmt.Sprintf("%d-%d", w, i)}, {Key: "w", Value: w}, {Key: "i", Value: i}}); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	type doc struct{ W, I int }
	read := func(dir int) []doc {
		cur, err := coll.Find(ctx(t), bson.D{}, options.Find().SetSort(bson.D{{Key: "$natural", Value: dir}}))
		if err != nil {
			t.Fatal(err)
		}
		var out []doc
		if err := cur.All(ctx(t), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	fwd, back := read(1), read(-1)
	if len(fwd) != 10 || len(back) != 10 {
		t.Fatalf("%d documents (%d backward), want 10", len(fwd), len(back))
	}
	next := map[int]int{} // writer -> the i its next survivor must have
	for k, d := range fwd {
		if back[len(back)-1-k] != d {
			t.Fatalf("$natural -1 is not the reverse of $natural 1: %v / %v", fwd, back)
		}
		if n, seen := next[d.W]; seen && d.I != n {
			t.Fatalf("writer %d's survivors are not consecutive in insertion order: %v", d.W, fwd)
		}
		next[d.W] = d.I + 1
	}
	for w, n := range next {
		if n != each {
			t.Fatalf("writer %d's newest document did not survive (%v)", w, fwd)
		}
	}
	var v struct{ Valid bool }
	if err := db.RunCommand(ctx(t), bson.D{{Key: "validate", Value: "c"}}).Decode(&v); err != nil || !v.Valid {
		t.Fatalf("validate: %v %v", v, err)
	}
	var st struct {
		Capped       bool
		Max, MaxSize int64
		Count        int64
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "collStats", Value: "c"}}).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if !st.Capped || st.Max != 10 || st.MaxSize != 1<<20 || st.Count != 10 {
		t.Fatalf("collStats %+v", st)
	}
}

// TestTailableAwaitDriver: a TailableAwait cursor's getMore, waiting for
// data, returns the document inserted while it waits — in that one
// getMore — and a cursor whose position was capped away fails with
// CappedPositionLost.
func TestTailableAwaitDriver(t *testing.T) {
	_, client := connect(t)
	db := client.Database("tail")
	if err := db.CreateCollection(ctx(t), "c", options.CreateCollection().SetCapped(true).SetSizeInBytes(1<<20).SetMaxDocuments(5)); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("c")
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "seq", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	cur, err := coll.Find(ctx(t), bson.D{}, options.Find().SetCursorType(options.TailableAwait).SetMaxAwaitTime(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close(ctx(t))
	if !cur.Next(ctx(t)) {
		t.Fatalf("first document: %v", cur.Err())
	}
	getMores := func() int64 {
		var ss struct{ Opcounters struct{ Getmore int64 } }
		if err := client.Database("admin").RunCommand(ctx(t), bson.D{{Key: "serverStatus", Value: 1}}).Decode(&ss); err != nil {
			t.Fatal(err)
		}
		return ss.Opcounters.Getmore
	}
	before := getMores()
	got := make(chan bson.Raw, 1)
	go func() {
		if cur.Next(ctx(t)) {
			got <- append(bson.Raw(nil), cur.Current...)
		} else {
			got <- nil
		}
	}()
	// Wait for the getMore to be running (currentOp), then insert.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var ops struct{ Inprog []bson.Raw }
		filter := bson.D{{Key: "currentOp", Value: 1}, {Key: "command.getMore", Value: bson.D{{Key: "$exists", Value: true}}}}
		if err := client.Database("admin").RunCommand(ctx(t), filter).Decode(&ops); err != nil {
			t.Fatal(err)
		}
		if len(ops.Inprog) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the getMore never showed in currentOp")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "seq", Value: 42}}); err != nil {
		t.Fatal(err)
	}
	d := <-got
	if d == nil || d.Lookup("seq").Int32() != 42 {
		t.Fatalf("tailed %v (%v)", d, cur.Err())
	}
	if n := getMores() - before; n != 1 {
		t.Fatalf("%d getMores, want the one that was waiting", n)
	}

	// CappedPositionLost: a tailable cursor whose last document is gone.
	lost, err := coll.Find(ctx(t), bson.D{}, options.Find().SetCursorType(options.Tailable).SetBatchSize(1))
	if err != nil {
		t.Fatal(err)
	}
	defer lost.Close(ctx(t))
	if !lost.Next(ctx(t)) {
		t.Fatal(lost.Err())
	}
	var docs []any
	for i := 0; i < 6; i++ {
		docs = append(docs, bson.D{{Key: "seq", Value: 100 + i}})
	}
	if _, err := coll.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	if lost.Next(ctx(t)) {
		t.Fatal("the lost cursor returned a document")
	}
	cmdErr(t, lost.Err(), 136)

	// A tailable cursor on an ordinary collection is refused.
	if _, err := db.Collection("plain").InsertOne(ctx(t), bson.D{}); err != nil {
		t.Fatal(err)
	}
	_, err = db.Collection("plain").Find(ctx(t), bson.D{}, options.Find().SetCursorType(options.Tailable))
	cmdErr(t, err, 2)
}

func TestConvertToCappedDriver(t *testing.T) {
	_, client := connect(t)
	db := client.Database("conv")
	var docs []any
	for i := 0; i < 20; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "pad", Value: string(make([]byte, 500))}})
	}
	if _, err := db.Collection("c").InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "convertToCapped", Value: "c"}, {Key: "size", Value: 4096}}).Err(); err != nil {
		t.Fatal(err)
	}
	var st struct {
		Capped  bool
		MaxSize int64
		Count   int64
		Size    int64
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "collStats", Value: "c"}}).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if !st.Capped || st.MaxSize != 4096 || st.Size > 4096 || st.Count == 0 || st.Count == 20 {
		t.Fatalf("collStats after convertToCapped: %+v", st)
	}
	// The newest documents are kept.
	var last struct {
		ID int `bson:"_id"`
	}
	if err := db.Collection("c").FindOne(ctx(t), bson.D{}, options.FindOne().SetSort(bson.D{{Key: "$natural", Value: -1}})).Decode(&last); err != nil || last.ID != 19 {
		t.Fatalf("newest document %+v (%v)", last, err)
	}
	cmdErr(t, db.RunCommand(ctx(t), bson.D{{Key: "convertToCapped", Value: "nope"}, {Key: "size", Value: 4096}}).Err(), 26)
	cur, err := db.ListCollections(ctx(t), bson.D{{Key: "name", Value: "c"}})
	if err != nil {
		t.Fatal(err)
	}
	var spec []bson.Raw
	if err := cur.All(ctx(t), &spec); err != nil || len(spec) != 1 {
		t.Fatal(err)
	}
	if capped, ok := spec[0].Lookup("options", "capped").BooleanOK(); !capped || !ok || spec[0].Lookup("options", "size").Int32() != 4096 {
		t.Fatalf("listCollections options %v", spec[0])
	}
}
