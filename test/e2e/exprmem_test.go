package e2e

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestExpressionMemoryLimitE2E: expressions that would build more than
// the evaluation's memory limit (100 MiB) answer ExceededMemoryLimit
// (146) without building it — $replaceAll of each of 1 MiB of "x" by
// 1,000 bytes was a 1 GB string — and the server goes on answering.
func TestExpressionMemoryLimitE2E(t *testing.T) {
	_, client := connect(t)
	c := client.Database("exprmem").Collection("c")
	if _, err := c.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1}, {Key: "s", Value: strings.Repeat("x", 1<<20)}}); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("y", 1000)
	for _, x := range []bson.D{
		{{Key: "$replaceAll", Value: bson.D{{Key: "input", Value: "$s"}, {Key: "find", Value: "x"}, {Key: "replacement", Value: long}}}},
		{{Key: "$replaceAll", Value: bson.D{{Key: "input", Value: "$s"}, {Key: "find", Value: ""}, {Key: "replacement", Value: long}}}},
		{{Key: "$reduce", Value: bson.D{{Key: "input", Value: bson.D{{Key: "$range", Value: bson.A{0, 200}}}}, {Key: "initialValue", Value: ""},
			{Key: "in", Value: bson.D{{Key: "$concat", Value: bson.A{"$$value", "$s"}}}}}}},
		{{Key: "$split", Value: bson.A{bson.D{{Key: "$concat", Value: bson.A{"$s", "$s", "$s", "$s", "$s", "$s", "$s", "$s"}}}, "x"}}},
	} {
		_, err := c.Aggregate(ctx(t), mongo.Pipeline{{{Key: "$project", Value: bson.D{{Key: "n", Value: bson.D{{Key: "$strLenBytes", Value: x}}}}}}})
		cmdErr(t, err, 146)
	}
	var got struct{ N int32 }
	err := c.FindOne(ctx(t), bson.D{}, nil).Err()
	if err != nil {
		t.Fatal(err)
	}
	cur, err := c.Aggregate(ctx(t), mongo.Pipeline{{{Key: "$project", Value: bson.D{{Key: "n", Value: bson.D{{Key: "$strLenBytes", Value: bson.D{{Key: "$replaceAll", Value: bson.D{{Key: "input", Value: "$s"}, {Key: "find", Value: "x"}, {Key: "replacement", Value: "ab"}}}}}}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if !cur.Next(ctx(t)) || cur.Decode(&got) != nil || got.N != 2<<20 {
		t.Fatalf("$replaceAll under the limit: %+v, %v", got, cur.Err())
	}
	cur.Close(ctx(t))
}
