package server

import (
	"strings"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"
)

// BenchmarkCoveredInt32Range reads 100 int32s through a projection the
// index {a: 1} covers, from 100,000 documents of ~200 bytes: answered
// from the keys (the catalog knows a held only int32s), not by fetching
// each document.
func BenchmarkCoveredInt32Range(b *testing.B) {
	s := newTestServer(b)
	pad := strings.Repeat("p", 180)
	for start := 0; start < 100_000; start += 1000 {
		var docs dbson.A
		for i := start; i < start+1000; i++ {
			docs = append(docs, dbson.D{{Key: "_id", Value: i}, {Key: "a", Value: int32(i)}, {Key: "pad", Value: pad}})
		}
		sendOnce(b, s, cmdMsg(dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: docs}, {Key: "$db", Value: "bench"}}))
	}
	sendOnce(b, s, cmdMsg(dbson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: dbson.A{
		dbson.D{{Key: "key", Value: dbson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}}}}, {Key: "$db", Value: "bench"}}))
	var msgs [][]byte
	for i := 0; i < 256; i++ {
		lo := int32(i * 389 % 99_900)
		msgs = append(msgs, cmdMsg(dbson.D{{Key: "find", Value: "c"},
			{Key: "filter", Value: dbson.D{{Key: "a", Value: dbson.D{{Key: "$gte", Value: lo}, {Key: "$lt", Value: lo + 100}}}}},
			{Key: "projection", Value: dbson.D{{Key: "_id", Value: 0}, {Key: "a", Value: 1}}},
			{Key: "batchSize", Value: 101}, {Key: "singleBatch", Value: true}, {Key: "$db", Value: "bench"}}))
	}
	roundTrips(b, s, msgs)
}
