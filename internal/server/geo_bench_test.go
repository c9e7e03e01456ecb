package server

import (
	"math/rand/v2"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"
)

// geoPoints is the size of the geo benchmarks' collection.
const geoPoints = 100_000

// geoServer loads geoPoints random points over Europe (with and without a
// 2dsphere index) and returns the server.
func geoServer(b *testing.B, indexed bool) *Server {
	s := newTestServer(b)
	rng := rand.New(rand.NewPCG(7, 8))
	for start := 0; start < geoPoints; start += 1000 {
		var docs dbson.A
		for i := start; i < start+1000; i++ {
			docs = append(docs, dbson.D{{Key: "_id", Value: i}, {Key: "loc", Value: dbson.D{{Key: "type", Value: "Point"},
				{Key: "coordinates", Value: dbson.A{rng.Float64()*40 - 10, rng.Float64()*30 + 35}}}}})
		}
		sendOnce(b, s, cmdMsg(dbson.D{{Key: "insert", Value: "g"}, {Key: "documents", Value: docs}, {Key: "$db", Value: "bench"}}))
	}
	if indexed {
		sendOnce(b, s, cmdMsg(dbson.D{{Key: "createIndexes", Value: "g"}, {Key: "indexes", Value: dbson.A{
			dbson.D{{Key: "key", Value: dbson.D{{Key: "loc", Value: "2dsphere"}}}, {Key: "name", Value: "loc_2dsphere"}}}}, {Key: "$db", Value: "bench"}}))
	}
	return s
}

// geoCenters are query centers spread over the loaded area.
func geoCenters() [][2]float64 {
	rng := rand.New(rand.NewPCG(9, 10))
	out := make([][2]float64, 256)
	for i := range out {
		out[i] = [2]float64{rng.Float64()*40 - 10, rng.Float64()*30 + 35}
	}
	return out
}

// benchGeoWithin counts the points within 50 km of a center.
func benchGeoWithin(b *testing.B, indexed bool) {
	s := geoServer(b, indexed)
	var msgs [][]byte
	for _, c := range geoCenters() {
		msgs = append(msgs, cmdMsg(dbson.D{{Key: "count", Value: "g"}, {Key: "query", Value: dbson.D{{Key: "loc", Value: dbson.D{
			{Key: "$geoWithin", Value: dbson.D{{Key: "$centerSphere", Value: dbson.A{dbson.A{c[0], c[1]}, 50.0 / 6378.1}}}}}}}},
			{Key: "$db", Value: "bench"}}))
	}
	roundTrips(b, s, msgs)
}

// BenchmarkGeoWithinScan: $geoWithin without an index checks every point.
func BenchmarkGeoWithinScan(b *testing.B) { benchGeoWithin(b, false) }

// BenchmarkGeoWithinIndexed: the same through the 2dsphere index.
func BenchmarkGeoWithinIndexed(b *testing.B) { benchGeoWithin(b, true) }

// BenchmarkGeoNear10 finds the 10 points nearest a center ($near needs
// the index).
func BenchmarkGeoNear10(b *testing.B) {
	s := geoServer(b, true)
	var msgs [][]byte
	for _, c := range geoCenters() {
		msgs = append(msgs, cmdMsg(dbson.D{{Key: "find", Value: "g"}, {Key: "filter", Value: dbson.D{{Key: "loc", Value: dbson.D{
			{Key: "$near", Value: dbson.D{{Key: "$geometry", Value: dbson.D{{Key: "type", Value: "Point"}, {Key: "coordinates", Value: dbson.A{c[0], c[1]}}}}}}}}}},
			{Key: "limit", Value: 10}, {Key: "singleBatch", Value: true}, {Key: "$db", Value: "bench"}}))
	}
	roundTrips(b, s, msgs)
}
