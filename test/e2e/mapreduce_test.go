package e2e

import (
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

func mrSetup(t *testing.T, client *mongo.Client) *mongo.Database {
	t.Helper()
	db := client.Database("mr")
	docs := []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "cust", Value: "a"}, {Key: "amount", Value: 10}, {Key: "status", Value: "A"}},
		bson.D{{Key: "_id", Value: 2}, {Key: "cust", Value: "a"}, {Key: "amount", Value: 5}, {Key: "status", Value: "A"}},
		bson.D{{Key: "_id", Value: 3}, {Key: "cust", Value: "b"}, {Key: "amount", Value: 7}, {Key: "status", Value: "A"}},
		bson.D{{Key: "_id", Value: 4}, {Key: "cust", Value: "c"}, {Key: "amount", Value: 1}, {Key: "status", Value: "B"}},
	}
	if _, err := db.Collection("orders").InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	return db
}

type mrResult struct {
	ID    string  `bson:"_id"`
	Value float64 `bson:"value"`
}

// TestMapReduce runs mapReduce inline and into collections (replace,
// merge, reduce) with query, sort, limit, finalize and scope.
func TestMapReduce(t *testing.T) {
	_, client := connect(t)
	db := mrSetup(t, client)
	base := bson.D{{Key: "mapReduce", Value: "orders"},
		{Key: "map", Value: bson.JavaScript("function() { emit(this.cust, this.amount * factor); }")},
		{Key: "reduce", Value: "function(k, vals) { return Array.sum(vals); }"},
		{Key: "scope", Value: bson.D{{Key: "factor", Value: 2}}},
	}
	with := func(extra ...bson.E) bson.D { return append(append(bson.D{}, base...), extra...) }
	var inline struct {
		Results []mrResult
		OK      float64
	}
	if err := db.RunCommand(ctx(t), with(bson.E{Key: "out", Value: bson.D{{Key: "inline", Value: 1}}},
		bson.E{Key: "query", Value: bson.D{{Key: "status", Value: "A"}}})).Decode(&inline); err != nil {
		t.Fatal(err)
	}
	want := []mrResult{{"a", 30}, {"b", 14}}
	if len(inline.Results) != 2 || inline.Results[0] != want[0] || inline.Results[1] != want[1] || inline.OK != 1 {
		t.Fatalf("inline: %+v", inline)
	}
	// sort and limit pick the input; finalize shapes the output.
	if err := db.RunCommand(ctx(t), with(bson.E{Key: "out", Value: bson.D{{Key: "inline", Value: 1}}},
		bson.E{Key: "sort", Value: bson.D{{Key: "amount", Value: 1}}}, bson.E{Key: "limit", Value: 2},
		bson.E{Key: "finalize", Value: "function(k, v) { return v + 1000; }"})).Decode(&inline); err != nil {
		t.Fatal(err)
	}
	if len(inline.Results) != 2 || inline.Results[0] != (mrResult{"a", 1010}) || inline.Results[1] != (mrResult{"c", 1002}) {
		t.Fatalf("sort/limit/finalize: %+v", inline.Results)
	}
	read := func(name string) []mrResult {
		cur, err := db.Collection(name).Find(ctx(t), bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		var rs []mrResult
		if err := cur.All(ctx(t), &rs); err != nil {
			t.Fatal(err)
		}
		return rs
	}
	// replace.
	if _, err := db.Collection("totals").InsertOne(ctx(t), bson.D{{Key: "_id", Value: "zzz"}, {Key: "value", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	var res struct{ Result string }
	if err := db.RunCommand(ctx(t), with(bson.E{Key: "out", Value: "totals"})).Decode(&res); err != nil || res.Result != "totals" {
		t.Fatalf("replace: %+v, %v", res, err)
	}
	if got := read("totals"); len(got) != 3 || got[0] != (mrResult{"a", 30}) || got[2] != (mrResult{"c", 2}) {
		t.Fatalf("replace wrote %+v", got)
	}
	// merge keeps the other documents and replaces matched ones.
	if _, err := db.Collection("merged").InsertMany(ctx(t), []any{bson.D{{Key: "_id", Value: "a"}, {Key: "value", Value: 1}},
		bson.D{{Key: "_id", Value: "x"}, {Key: "value", Value: 9}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx(t), with(bson.E{Key: "out", Value: bson.D{{Key: "merge", Value: "merged"}}})).Err(); err != nil {
		t.Fatal(err)
	}
	if got := read("merged"); len(got) != 4 || got[0] != (mrResult{"a", 30}) || got[3] != (mrResult{"x", 9}) {
		t.Fatalf("merge wrote %+v", got)
	}
	// reduce folds the existing value in, into another database.
	var res2 struct {
		Result struct{ DB, Collection string }
	}
	other := client.Database("mrout")
	if _, err := other.Collection("reduced").InsertOne(ctx(t), bson.D{{Key: "_id", Value: "b"}, {Key: "value", Value: 100}}); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx(t), with(bson.E{Key: "out", Value: bson.D{{Key: "reduce", Value: "reduced"}, {Key: "db", Value: "mrout"}}})).Decode(&res2); err != nil {
		t.Fatal(err)
	}
	if res2.Result.DB != "mrout" || res2.Result.Collection != "reduced" {
		t.Fatalf("reduce reply: %+v", res2)
	}
	cur, err := other.Collection("reduced").Find(ctx(t), bson.D{{Key: "_id", Value: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	var rs []mrResult
	if err := cur.All(ctx(t), &rs); err != nil || len(rs) != 1 || rs[0].Value != 114 {
		t.Fatalf("reduce wrote %+v, %v", rs, err)
	}
	// Errors.
	for _, e := range []struct {
		cmd  bson.D
		code int32
	}{
		{bson.D{{Key: "mapReduce", Value: "orders"}, {Key: "map", Value: "function(){}"}, {Key: "out", Value: bson.D{{Key: "inline", Value: 1}}}}, 40414},
		{with(), 40414},
		{with(bson.E{Key: "out", Value: bson.D{{Key: "inline", Value: 1}}}, bson.E{Key: "bogus", Value: 1}), 40415},
		{append(bson.D{{Key: "mapReduce", Value: "orders"}, {Key: "map", Value: "function() { emit(this.cust, nosuch); }"}}, base[2:]...), 40414},
		{bson.D{{Key: "mapReduce", Value: "orders"}, {Key: "map", Value: "function() { emit(this.cust, nosuch); }"},
			{Key: "reduce", Value: "function(k, v) { return 1; }"}, {Key: "out", Value: bson.D{{Key: "inline", Value: 1}}}}, 139},
	} {
		cmdErr(t, db.RunCommand(ctx(t), e.cmd).Err(), e.code)
	}
}

// TestMapReduceKillOp: killOp ends a mapReduce whose map never returns.
func TestMapReduceKillOp(t *testing.T) {
	_, client := connect(t)
	db := mrSetup(t, client)
	done := make(chan error, 1)
	go func() {
		done <- db.RunCommand(ctx(t), bson.D{{Key: "mapReduce", Value: "orders"},
			{Key: "map", Value: "function() { while (true) {} }"}, {Key: "reduce", Value: "function(k, v) { return 1; }"},
			{Key: "out", Value: bson.D{{Key: "inline", Value: 1}}}}).Err()
	}()
	admin := client.Database("admin")
	var opid int64
	for deadline := time.Now().Add(20 * time.Second); opid == 0; time.Sleep(20 * time.Millisecond) {
		var r struct {
			Inprog []struct {
				Opid    int64
				Command bson.M
			}
		}
		if err := admin.RunCommand(ctx(t), bson.D{{Key: "currentOp", Value: 1}, {Key: "command.mapReduce", Value: "orders"}}).Decode(&r); err != nil {
			t.Fatal(err)
		}
		if len(r.Inprog) > 0 {
			opid = r.Inprog[0].Opid
		}
		if time.Now().After(deadline) {
			t.Fatal("the mapReduce never showed in currentOp")
		}
	}
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "killOp", Value: 1}, {Key: "op", Value: opid}}).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var ce mongo.CommandError
		if !errors.As(err, &ce) || ce.Code != 11601 {
			t.Fatalf("got %v, want Interrupted (11601)", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("killOp did not end the mapReduce")
	}
}

// TestMapReduceNoScripting: --noscripting refuses mapReduce.
func TestMapReduceNoScripting(t *testing.T) {
	srv := startNoScripting(t)
	db := mrSetup(t, dial(t, srv.URI))
	err := db.RunCommand(ctx(t), bson.D{{Key: "mapReduce", Value: "orders"}, {Key: "map", Value: "function() {}"},
		{Key: "reduce", Value: "function(k, v) { return 1; }"}, {Key: "out", Value: bson.D{{Key: "inline", Value: 1}}}}).Err()
	cmdErr(t, err, 31246)
}
