package e2e

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

func jsColl(t *testing.T, client *mongo.Client) *mongo.Collection {
	t.Helper()
	c := client.Database("js").Collection("c")
	var docs []any
	for i := 1; i <= 10; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i}, {Key: "b", Value: 10 - i},
			{Key: "tags", Value: bson.A{"x", "y"}[:1+i%2]}})
	}
	if _, err := c.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	return c
}

// countCmd runs the count command (the driver's CountDocuments is an
// aggregation, whose $match refuses $where as mongod's does).
func countCmd(t *testing.T, c *mongo.Collection, filter bson.D) (int64, error) {
	var r struct{ N int64 }
	err := c.Database().RunCommand(ctx(t), bson.D{{Key: "count", Value: c.Name()}, {Key: "query", Value: filter}}).Decode(&r)
	return r.N, err
}

// TestWhere runs $where in find, count, delete and update filters, as a
// string, as code, with this and obj.
func TestWhere(t *testing.T) {
	_, client := connect(t)
	c := jsColl(t, client)
	cases := []struct {
		name   string
		filter bson.D
		want   int64
	}{
		{"string", bson.D{{Key: "$where", Value: "this.a > this.b"}}, 5},
		{"code", bson.D{{Key: "$where", Value: bson.JavaScript("function() { return obj.a % 2 == 0; }")}}, 5},
		{"with other clauses", bson.D{{Key: "a", Value: bson.D{{Key: "$lt", Value: 5}}}, {Key: "$where", Value: "return this.tags.length == 2"}}, 2},
		{"in $or", bson.D{{Key: "$or", Value: bson.A{bson.D{{Key: "$where", Value: "this.a == 1"}}, bson.D{{Key: "a", Value: 2}}}}}, 2},
		{"NumberLong helpers", bson.D{{Key: "$where", Value: "NumberLong(this.a).toNumber() == 3"}}, 1},
	}
	for _, tc := range cases {
		n, err := countCmd(t, c, tc.filter)
		if err != nil || n != tc.want {
			t.Errorf("%s: count %d, %v; want %d", tc.name, n, err, tc.want)
		}
		cur, err := c.Find(ctx(t), tc.filter)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got []bson.M
		if err := cur.All(ctx(t), &got); err != nil || int64(len(got)) != tc.want {
			t.Errorf("%s: find %d, %v; want %d", tc.name, len(got), err, tc.want)
		}
	}
	up, err := c.UpdateMany(ctx(t), bson.D{{Key: "$where", Value: "this.a <= 3"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "low", Value: true}}}})
	if err != nil || up.ModifiedCount != 3 {
		t.Fatalf("update: %+v, %v", up, err)
	}
	del, err := c.DeleteMany(ctx(t), bson.D{{Key: "$where", Value: "this.low === true"}})
	if err != nil || del.DeletedCount != 3 {
		t.Fatalf("delete: %+v, %v", del, err)
	}
	// Errors as mongod's.
	errs := []struct {
		name   string
		filter bson.D
		code   int32
	}{
		{"syntax error", bson.D{{Key: "$where", Value: "function( {"}}, 139},
		{"exception", bson.D{{Key: "$where", Value: "nosuch.x"}}, 139},
		{"in $elemMatch", bson.D{{Key: "tags", Value: bson.D{{Key: "$elemMatch", Value: bson.D{{Key: "$where", Value: "true"}}}}}}, 2},
		{"bad type", bson.D{{Key: "$where", Value: 1}}, 2},
	}
	for _, e := range errs {
		_, err := c.Find(ctx(t), e.filter)
		if err == nil {
			t.Errorf("%s: no error", e.name)
			continue
		}
		cmdErr(t, err, e.code)
	}
	_, err = c.Aggregate(ctx(t), mongo.Pipeline{{{Key: "$match", Value: bson.D{{Key: "$where", Value: "true"}}}}})
	cmdErr(t, err, 2)
}

// TestWhereMaxTimeMS: maxTimeMS ends an endless $where with
// MaxTimeMSExpired (50).
func TestWhereMaxTimeMS(t *testing.T) {
	_, client := connect(t)
	c := jsColl(t, client)
	start := time.Now()
	err := c.Database().RunCommand(ctx(t), bson.D{{Key: "find", Value: "c"},
		{Key: "filter", Value: bson.D{{Key: "$where", Value: "while (true) {}"}}}, {Key: "maxTimeMS", Value: 200}}).Err()
	cmdErr(t, err, 50)
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("took %v", d)
	}
	// The server still answers scripts.
	if n, err := countCmd(t, c, bson.D{{Key: "$where", Value: "true"}}); err != nil || n != 10 {
		t.Fatalf("after: %d, %v", n, err)
	}
}

// TestFunctionAndAccumulator runs $function and $accumulator in
// aggregations.
func TestFunctionAndAccumulator(t *testing.T) {
	_, client := connect(t)
	c := jsColl(t, client)
	cur, err := c.Aggregate(ctx(t), mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$lte", Value: 2}}}}}},
		{{Key: "$project", Value: bson.D{{Key: "s", Value: bson.D{{Key: "$function", Value: bson.D{
			{Key: "body", Value: "function(a, b) { return a * 100 + b; }"},
			{Key: "args", Value: bson.A{"$a", "$b"}}, {Key: "lang", Value: "js"}}}}}}}},
		{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.M
	if err := cur.All(ctx(t), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0]["s"] != float64(109) || got[1]["s"] != float64(208) {
		t.Fatalf("$function: %v", got)
	}
	// $accumulator: an average by parity, with initArgs and finalize.
	cur, err = c.Aggregate(ctx(t), mongo.Pipeline{
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$mod", Value: bson.A{"$a", 2}}}},
			{Key: "avg", Value: bson.D{{Key: "$accumulator", Value: bson.D{
				{Key: "init", Value: "function(base) { return {count: 0, sum: base}; }"},
				{Key: "initArgs", Value: bson.A{0}},
				{Key: "accumulate", Value: "function(state, a) { return {count: state.count + 1, sum: state.sum + a}; }"},
				{Key: "accumulateArgs", Value: bson.A{"$a"}},
				{Key: "merge", Value: "function(s1, s2) { return {count: s1.count + s2.count, sum: s1.sum + s2.sum}; }"},
				{Key: "finalize", Value: "function(state) { return state.sum / state.count; }"},
				{Key: "lang", Value: "js"}}}}}}}},
		{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	if err := cur.All(ctx(t), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0]["avg"] != float64(6) || got[1]["avg"] != float64(5) {
		t.Fatalf("$accumulator: %v", got)
	}
	// $function in a find's $expr.
	n, err := c.CountDocuments(ctx(t), bson.D{{Key: "$expr", Value: bson.D{{Key: "$function", Value: bson.D{
		{Key: "body", Value: "function(a) { return a > 7; }"}, {Key: "args", Value: bson.A{"$a"}}, {Key: "lang", Value: "js"}}}}}})
	if err != nil || n != 3 {
		t.Fatalf("$expr $function: %d, %v", n, err)
	}
	// Errors.
	for _, e := range []struct {
		stage bson.D
		code  int32
	}{
		{bson.D{{Key: "$project", Value: bson.D{{Key: "s", Value: bson.D{{Key: "$function", Value: bson.D{{Key: "body", Value: "function(){}"}, {Key: "args", Value: bson.A{}}}}}}}}}, 31418},
		{bson.D{{Key: "$project", Value: bson.D{{Key: "s", Value: bson.D{{Key: "$function", Value: bson.D{{Key: "body", Value: "function(){ throw 'x' }"}, {Key: "args", Value: bson.A{}}, {Key: "lang", Value: "js"}}}}}}}}, 139},
		{bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "x", Value: bson.D{{Key: "$accumulator", Value: bson.D{{Key: "init", Value: "function(){}"}}}}}}}}, 4544708},
		{bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "x", Value: bson.D{{Key: "$accumulator", Value: bson.D{
			{Key: "init", Value: "function(){ return 0 }"}, {Key: "accumulate", Value: "function(s){ return s }"}, {Key: "accumulateArgs", Value: bson.A{}},
			{Key: "merge", Value: "function(a){ return a }"}, {Key: "finalize", Value: "function(){ throw new Error('fin') }"}, {Key: "lang", Value: "js"}}}}}}}}, 139},
	} {
		cur, err := c.Aggregate(ctx(t), mongo.Pipeline{e.stage})
		if err == nil {
			var out []bson.M
			err = cur.All(ctx(t), &out)
		}
		cmdErr(t, err, e.code)
	}
}

// TestNoScripting: --noscripting refuses server-side JavaScript with
// mongod's codes.
func TestNoScripting(t *testing.T) {
	srv := startNoScripting(t)
	client := dial(t, srv.URI)
	c := jsColl(t, client)
	_, err := c.Find(ctx(t), bson.D{{Key: "$where", Value: "true"}})
	cmdErr(t, err, 6108304)
	_, err = c.Aggregate(ctx(t), mongo.Pipeline{{{Key: "$project", Value: bson.D{{Key: "s", Value: bson.D{{Key: "$function", Value: bson.D{
		{Key: "body", Value: "function(){ return 1 }"}, {Key: "args", Value: bson.A{}}, {Key: "lang", Value: "js"}}}}}}}}})
	if err == nil {
		t.Fatal("$function ran with --noscripting")
	}
	cmdErr(t, err, 31264)
	// Queries without scripts are unaffected.
	if n, err := c.CountDocuments(ctx(t), bson.D{}); err != nil || n != 10 {
		t.Fatalf("count: %d, %v", n, err)
	}
}

func startNoScripting(t *testing.T) *cairndtest.Server {
	t.Helper()
	return cairndtest.Start(t, "--noscripting")
}
