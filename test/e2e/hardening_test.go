package e2e

import (
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// TestDuplicateIDRefused: a document with two top-level _id fields was
// stored, and then found by neither (issue 19, item 8). The driver sends
// bson.D as written, duplicates included.
func TestDuplicateIDRefused(t *testing.T) {
	srv := cairndtest.Start(t)
	c := dial(t, srv.URI).Database("lim").Collection("dup")
	two := bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}, {Key: "_id", Value: 2}}
	_, err := c.InsertOne(ctx(t), two)
	cmdErr(t, err, 2)
	if _, err := c.InsertOne(ctx(t), bson.D{{Key: "a", Value: 1}, {Key: "_id", Value: 3}, {Key: "_id", Value: 4}}); err == nil {
		t.Fatal("insert with _id not first and repeated: no error")
	}
	if _, err := c.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	_, err = c.ReplaceOne(ctx(t), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 1}, {Key: "_id", Value: 2}})
	cmdErr(t, err, 2)
	_, err = c.ReplaceOne(ctx(t), bson.D{{Key: "_id", Value: 9}}, bson.D{{Key: "_id", Value: 9}, {Key: "_id", Value: 10}},
		options.Replace().SetUpsert(true))
	cmdErr(t, err, 2)
	n, err := c.CountDocuments(ctx(t), bson.D{})
	if err != nil || n != 1 {
		t.Fatalf("documents stored: %d (%v), want 1", n, err)
	}
	var got bson.D
	if err := c.FindOne(ctx(t), bson.D{{Key: "_id", Value: 1}}).Decode(&got); err != nil || len(got) != 2 {
		t.Fatalf("the document after the refused replacement: %v %v", got, err)
	}
}

// TestViewGraphCheckedAtCreation: a view cycle and a chain deeper than 20
// views are refused by create, as mongod refuses them (issue 19, item 9),
// not first at query time.
func TestViewGraphCheckedAtCreation(t *testing.T) {
	srv := cairndtest.Start(t)
	db := dial(t, srv.URI).Database("lim")
	if _, err := db.Collection("base").InsertOne(ctx(t), bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	view := func(name, on string, pipeline bson.A) error {
		return db.RunCommand(ctx(t), bson.D{{Key: "create", Value: name}, {Key: "viewOn", Value: on}, {Key: "pipeline", Value: pipeline}}).Err()
	}
	// v1 on v2 is allowed while v2 does not exist; v2 on v1 closes a cycle.
	if err := view("v1", "v2", bson.A{}); err != nil {
		t.Fatal(err)
	}
	err := view("v2", "v1", bson.A{})
	errMsg(t, err, 5, "View cycle detected: lim.v2 => lim.v1 => lim.v2")
	// A cycle through a $lookup in the pipeline.
	err = view("v2", "base", bson.A{bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "v1"},
		{Key: "localField", Value: "x"}, {Key: "foreignField", Value: "x"}, {Key: "as", Value: "j"}}}}})
	cmdErr(t, err, 5)
	// A self-reference.
	cmdErr(t, view("self", "self", bson.A{}), 5)

	// A chain: c1 on base, c2 on c1, ... c20 is allowed, c21 is not.
	prev := "base"
	for i := 1; i <= 20; i++ {
		name := fmt.Sprintf("c%d", i)
		if err := view(name, prev, bson.A{}); err != nil {
			t.Fatalf("view %d of a chain of 20: %v", i, err)
		}
		prev = name
	}
	errMsg(t, view("c21", prev, bson.A{}), 165, "View depth limit exceeded; maximum depth is 20")
	if n, err := db.Collection("c20").CountDocuments(ctx(t), bson.D{}); err != nil || n != 1 {
		t.Fatalf("c20: %d %v", n, err)
	}
	// Views resting on a name before it exists count too: a chain of 15
	// on "top", then "top" on c10 would make 25.
	prev = "top"
	for i := 1; i <= 15; i++ {
		name := fmt.Sprintf("t%d", i)
		if err := view(name, prev, bson.A{}); err != nil {
			t.Fatal(err)
		}
		prev = name
	}
	cmdErr(t, view("top", "c10", bson.A{}), 165)
	if err := view("top", "c4", bson.A{}); err != nil {
		t.Fatalf("top on c4 (a chain of 20): %v", err)
	}
	var names []string
	specs, err := db.ListCollectionSpecifications(ctx(t), bson.D{{Key: "name", Value: bson.D{{Key: "$in", Value: bson.A{"v2", "self", "c21"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		names = append(names, s.Name)
	}
	if len(names) != 0 {
		t.Errorf("refused views were created: %v", names)
	}
}

// TestSortKeyLimit: a sort of 33 keys is refused as mongod refuses it
// (13103 "too many compound keys"), in find and in $sort; 32 are fine.
func TestSortKeyLimit(t *testing.T) {
	srv := cairndtest.Start(t)
	c := dial(t, srv.URI).Database("lim").Collection("s")
	if _, err := c.InsertOne(ctx(t), bson.D{{Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	spec := func(n int) bson.D {
		var d bson.D
		for i := range n {
			d = append(d, bson.E{Key: fmt.Sprintf("k%d", i), Value: 1})
		}
		return d
	}
	for _, n := range []int{32, 33} {
		cur, err := c.Find(ctx(t), bson.D{}, options.Find().SetSort(spec(n)))
		if err == nil {
			err = cur.Err()
			cur.Close(ctx(t))
		}
		agg, aerr := c.Aggregate(ctx(t), mongo.Pipeline{{{Key: "$sort", Value: spec(n)}}})
		if aerr == nil {
			agg.Close(ctx(t))
		}
		if n == 32 {
			if err != nil || aerr != nil {
				t.Fatalf("32 sort keys: find %v, aggregate %v", err, aerr)
			}
			continue
		}
		errMsg(t, err, 13103, "too many compound keys")
		errMsg(t, aerr, 13103, "too many compound keys")
	}
}
