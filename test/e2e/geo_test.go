package e2e

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func point(lng, lat float64) bson.D {
	return bson.D{{Key: "type", Value: "Point"}, {Key: "coordinates", Value: bson.A{lng, lat}}}
}

// geoIDs runs a find and returns the _ids in _id order.
func geoIDs(t *testing.T, coll *mongo.Collection, filter any) []int32 {
	t.Helper()
	return textFind(t, coll, filter, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
}

// TestGeoWithinIntersects: $geoWithin and $geoIntersects need no index,
// as in mongod.
func TestGeoWithinIntersects(t *testing.T) {
	_, client := connect(t)
	coll := client.Database("geo").Collection("places")
	if _, err := coll.InsertMany(ctx(t), []any{
		bson.D{{Key: "_id", Value: int32(1)}, {Key: "loc", Value: point(2.3522, 48.8566)}},  // Paris
		bson.D{{Key: "_id", Value: int32(2)}, {Key: "loc", Value: point(2.2945, 48.8584)}},  // Eiffel tower
		bson.D{{Key: "_id", Value: int32(3)}, {Key: "loc", Value: point(-0.1276, 51.5072)}}, // London
		bson.D{{Key: "_id", Value: int32(4)}, {Key: "loc", Value: bson.A{2.35, 48.85}}},     // legacy pair in Paris
		bson.D{{Key: "_id", Value: int32(5)}, {Key: "loc", Value: "not a place"}},           // ignored
		bson.D{{Key: "_id", Value: int32(6)}, {Key: "loc", Value: bson.D{{Key: "type", Value: "LineString"}, // Paris to London
			{Key: "coordinates", Value: bson.A{bson.A{2.3522, 48.8566}, bson.A{-0.1276, 51.5072}}}}}},
	}); err != nil {
		t.Fatal(err)
	}
	// An ordinary index on the field does not change the answers.
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "loc", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	ile := bson.D{{Key: "type", Value: "Polygon"}, {Key: "coordinates", Value: bson.A{bson.A{
		bson.A{2.0, 48.6}, bson.A{2.7, 48.6}, bson.A{2.7, 49.1}, bson.A{2.0, 49.1}, bson.A{2.0, 48.6}}}}}
	geoWithin := func(shape bson.D) bson.D {
		return bson.D{{Key: "loc", Value: bson.D{{Key: "$geoWithin", Value: shape}}}}
	}
	cases := []struct {
		name   string
		filter bson.D
		want   []int32
	}{
		{"polygon", geoWithin(bson.D{{Key: "$geometry", Value: ile}}), []int32{1, 2, 4}},
		{"5 km around Paris", geoWithin(bson.D{{Key: "$centerSphere", Value: bson.A{bson.A{2.3522, 48.8566}, 5.0 / 6378.1}}}), []int32{1, 2, 4}},
		{"1 km around Paris", geoWithin(bson.D{{Key: "$centerSphere", Value: bson.A{bson.A{2.3522, 48.8566}, 1.0 / 6378.1}}}), []int32{1, 4}},
		{"box, legacy pairs only", geoWithin(bson.D{{Key: "$box", Value: bson.A{bson.A{2, 48}, bson.A{3, 49}}}}), []int32{4}},
		{"intersects the polygon", bson.D{{Key: "loc", Value: bson.D{{Key: "$geoIntersects", Value: bson.D{{Key: "$geometry", Value: ile}}}}}}, []int32{1, 2, 4, 6}},
	}
	for _, tc := range cases {
		if got := geoIDs(t, coll, tc.filter); !equalIDs(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	_, err := coll.Find(ctx(t), geoWithin(bson.D{{Key: "$geometry", Value: point(0, 0)}}))
	cmdErr(t, err, 2)
}
