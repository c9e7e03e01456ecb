package e2e

import (
	"context"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// BenchmarkJS compares server-side JavaScript with its aggregation
// equivalent (docs/benchmarks.md): $where over 100,000 documents against
// $expr, and a mapReduce word count against $unwind + $group.
func BenchmarkJS(b *testing.B) {
	srv := cairndtest.Start(b)
	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI))
	if err != nil {
		b.Fatal(err)
	}
	defer client.Disconnect(context.Background())
	ctx := context.Background()
	db := client.Database("jsbench")
	words := strings.Fields("the quick brown fox jumps over the lazy dog and runs far away from the hunter")
	var docs []any
	for i := range 100_000 {
		var text []string
		for j := range 8 {
			text = append(text, words[(i*7+j*3)%len(words)])
		}
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 1000}, {Key: "b", Value: i % 777},
			{Key: "text", Value: strings.Join(text, " ")}})
	}
	for i := 0; i < len(docs); i += 10_000 {
		if _, err := db.Collection("c").InsertMany(ctx, docs[i:i+10_000]); err != nil {
			b.Fatal(err)
		}
	}
	count := func(b *testing.B, filter bson.D, want int64) {
		for b.Loop() {
			var r struct{ N int64 }
			if err := db.RunCommand(ctx, bson.D{{Key: "count", Value: "c"}, {Key: "query", Value: filter}}).Decode(&r); err != nil {
				b.Fatal(err)
			}
			if want >= 0 && r.N != want {
				b.Fatalf("count %d, want %d", r.N, want)
			}
		}
	}
	var want int64 = -1
	b.Run("where", func(b *testing.B) { count(b, bson.D{{Key: "$where", Value: "this.a > this.b"}}, want) })
	b.Run("expr", func(b *testing.B) {
		count(b, bson.D{{Key: "$expr", Value: bson.D{{Key: "$gt", Value: bson.A{"$a", "$b"}}}}}, want)
	})
	b.Run("mapReduce-wordcount", func(b *testing.B) {
		for b.Loop() {
			var r struct{ Results []bson.M }
			err := db.RunCommand(ctx, bson.D{{Key: "mapReduce", Value: "c"},
				{Key: "map", Value: "function() { this.text.split(' ').forEach(function(w) { emit(w, 1); }); }"},
				{Key: "reduce", Value: "function(k, v) { return Array.sum(v); }"},
				{Key: "out", Value: bson.D{{Key: "inline", Value: 1}}}}).Decode(&r)
			if err != nil || len(r.Results) == 0 {
				b.Fatal(err, len(r.Results))
			}
		}
	})
	b.Run("aggregate-wordcount", func(b *testing.B) {
		for b.Loop() {
			cur, err := db.Collection("c").Aggregate(ctx, mongo.Pipeline{
				{{Key: "$project", Value: bson.D{{Key: "w", Value: bson.D{{Key: "$split", Value: bson.A{"$text", " "}}}}}}},
				{{Key: "$unwind", Value: "$w"}},
				{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$w"}, {Key: "value", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
			})
			if err != nil {
				b.Fatal(err)
			}
			var rs []bson.M
			if err := cur.All(ctx, &rs); err != nil || len(rs) == 0 {
				b.Fatal(err, len(rs))
			}
		}
	})
}
