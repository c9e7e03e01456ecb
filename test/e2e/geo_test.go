package e2e

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
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

// TestGeoNear: 2dsphere indexes, and $near/$nearSphere read through them
// in order of distance.
func TestGeoNear(t *testing.T) {
	_, client := connect(t)
	db := client.Database("geonear")
	coll := db.Collection("places")
	if _, err := coll.InsertMany(ctx(t), []any{
		bson.D{{Key: "_id", Value: int32(1)}, {Key: "name", Value: "Paris"}, {Key: "loc", Value: point(2.3522, 48.8566)}},
		bson.D{{Key: "_id", Value: int32(2)}, {Key: "name", Value: "Eiffel"}, {Key: "loc", Value: point(2.2945, 48.8584)}},
		bson.D{{Key: "_id", Value: int32(3)}, {Key: "name", Value: "London"}, {Key: "loc", Value: point(-0.1276, 51.5072)}},
		bson.D{{Key: "_id", Value: int32(4)}, {Key: "name", Value: "Châtelet"}, {Key: "loc", Value: bson.A{2.347, 48.858}}},
		bson.D{{Key: "_id", Value: int32(5)}, {Key: "name", Value: "Berlin"}, {Key: "loc", Value: point(13.405, 52.52)}},
		bson.D{{Key: "_id", Value: int32(6)}, {Key: "name", Value: "New York"}, {Key: "loc", Value: point(-74.006, 40.7128)}},
		bson.D{{Key: "_id", Value: int32(7)}, {Key: "name", Value: "nowhere"}},
	}); err != nil {
		t.Fatal(err)
	}
	paris := bson.D{{Key: "$geometry", Value: point(2.3522, 48.8566)}}
	near := func(extra ...bson.E) bson.D {
		return bson.D{{Key: "loc", Value: bson.D{{Key: "$near", Value: append(append(bson.D{}, paris...), extra...)}}}}
	}
	inOrder := func(filter any, opts ...options.Lister[options.FindOptions]) []int32 {
		t.Helper()
		return textFind(t, coll, filter, opts...)
	}
	// Without a 2dsphere index: 291.
	_, err := coll.Find(ctx(t), near())
	cmdErr(t, err, 291)

	name, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "loc", Value: "2dsphere"}}})
	if err != nil || name != "loc_2dsphere" {
		t.Fatalf("createIndex = %q, %v", name, err)
	}
	specs, err := coll.Indexes().ListSpecifications(ctx(t))
	if err != nil || len(specs) != 2 {
		t.Fatal(specs, err)
	}
	var raw bson.M
	if err := bson.Unmarshal(specs[1].KeysDocument, &raw); err != nil || raw["loc"] != "2dsphere" {
		t.Fatalf("keys = %v, %v", raw, err)
	}
	var full bson.M
	cur, err := coll.Indexes().List(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var all []bson.M
	if err := cur.All(ctx(t), &all); err != nil || len(all) != 2 {
		t.Fatal(all, err)
	}
	full = all[1]
	if full["2dsphereIndexVersion"] != int32(3) {
		t.Errorf("listIndexes = %v", full)
	}
	// A value that is not a geometry cannot be indexed.
	_, err = coll.InsertOne(ctx(t), bson.D{{Key: "loc", Value: point(200, 0)}})
	var we mongo.WriteException
	if !errors.As(err, &we) || we.WriteErrors[0].Code != 16755 {
		t.Fatalf("bad point: %v", err)
	}

	cases := []struct {
		name   string
		filter bson.D
		opts   []options.Lister[options.FindOptions]
		want   []int32
	}{
		{"all, nearest first", near(), nil, []int32{1, 4, 2, 3, 5, 6}},
		{"within 500 km", near(bson.E{Key: "$maxDistance", Value: 500000}), nil, []int32{1, 4, 2, 3}},
		{"between 1 and 500 km", near(bson.E{Key: "$minDistance", Value: 1000}, bson.E{Key: "$maxDistance", Value: 500000}), nil, []int32{2, 3}},
		{"the two nearest", near(), []options.Lister[options.FindOptions]{options.Find().SetLimit(2)}, []int32{1, 4}},
		{"skip and limit", near(), []options.Lister[options.FindOptions]{options.Find().SetSkip(2).SetLimit(2)}, []int32{2, 3}},
		{"with another condition", append(near(), bson.E{Key: "name", Value: bson.D{{Key: "$ne", Value: "Paris"}}}), nil, []int32{4, 2, 3, 5, 6}},
		{"in a top-level $and", bson.D{{Key: "$and", Value: bson.A{bson.D{{Key: "name", Value: bson.D{{Key: "$ne", Value: "Paris"}}}}, near(bson.E{Key: "$maxDistance", Value: 10000})}}}, nil, []int32{4, 2}},
		{"$nearSphere, legacy pair, radians", bson.D{{Key: "loc", Value: bson.D{{Key: "$nearSphere", Value: bson.A{2.3522, 48.8566}}, {Key: "$maxDistance", Value: 0.01}}}}, nil, []int32{1, 4, 2}},
		{"$nearSphere with $geometry", bson.D{{Key: "loc", Value: bson.D{{Key: "$nearSphere", Value: paris}}}}, []options.Lister[options.FindOptions]{options.Find().SetLimit(3)}, []int32{1, 4, 2}},
	}
	for _, tc := range cases {
		if got := inOrder(tc.filter, tc.opts...); !equalIDs(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	// Outside a find's top level, $near is refused (as in $match, count).
	_, err = coll.CountDocuments(ctx(t), near())
	cmdErr(t, err, 2)
	// $near on a legacy pair needs a 2d index.
	_, err = coll.Find(ctx(t), bson.D{{Key: "loc", Value: bson.D{{Key: "$near", Value: bson.A{2.3, 48.8}}}}})
	cmdErr(t, err, 291)

	// $geoNear: distances (meters for a GeoJSON point) at distanceField,
	// the nearest location at includeLocs, the query applied.
	geoNear := bson.D{{Key: "$geoNear", Value: bson.D{
		{Key: "near", Value: point(2.3522, 48.8566)}, {Key: "distanceField", Value: "dist.km"},
		{Key: "distanceMultiplier", Value: 0.001}, {Key: "maxDistance", Value: 500000},
		{Key: "query", Value: bson.D{{Key: "name", Value: bson.D{{Key: "$ne", Value: "Eiffel"}}}}},
		{Key: "includeLocs", Value: "where"}, {Key: "spherical", Value: true},
	}}}
	agc, err := coll.Aggregate(ctx(t), bson.A{geoNear, bson.D{{Key: "$project", Value: bson.D{{Key: "dist", Value: 1}, {Key: "where", Value: 1}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var near3 []struct {
		ID   int32 `bson:"_id"`
		Dist struct {
			Km float64 `bson:"km"`
		} `bson:"dist"`
		Where bson.RawValue `bson:"where"`
	}
	if err := agc.All(ctx(t), &near3); err != nil {
		t.Fatal(err)
	}
	if len(near3) != 3 || near3[0].ID != 1 || near3[1].ID != 4 || near3[2].ID != 3 ||
		near3[0].Dist.Km != 0 || math.Abs(near3[1].Dist.Km-0.41) > 0.02 || math.Abs(near3[2].Dist.Km-344) > 3 ||
		near3[1].Where.Type != bson.TypeArray {
		t.Errorf("$geoNear = %+v", near3)
	}
	agc, err = coll.Aggregate(ctx(t), bson.A{bson.D{{Key: "$geoNear", Value: bson.D{{Key: "near", Value: bson.A{2.3522, 48.8566}}, {Key: "distanceField", Value: "d"}, {Key: "spherical", Value: true}}}}, bson.D{{Key: "$limit", Value: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	var two []bson.M
	if err := agc.All(ctx(t), &two); err != nil || len(two) != 2 || two[0]["_id"] != int32(1) || two[1]["_id"] != int32(4) || two[1]["d"].(float64) > 0.001 {
		t.Errorf("$geoNear legacy, $limit 2 = %v, %v", two, err)
	}
	for _, bad := range []struct {
		pipeline bson.A
		code     int32
	}{
		{bson.A{bson.D{{Key: "$match", Value: bson.D{}}}, geoNear}, 40602},
		{bson.A{bson.D{{Key: "$geoNear", Value: bson.D{{Key: "near", Value: point(0, 0)}}}}}, 16606},
		{bson.A{bson.D{{Key: "$geoNear", Value: bson.D{{Key: "near", Value: bson.A{0, 0}}, {Key: "distanceField", Value: "d"}}}}}, 291},
	} {
		_, err := coll.Aggregate(ctx(t), bad.pipeline)
		cmdErr(t, err, bad.code)
	}
	_, err = db.Collection("unindexed").InsertOne(ctx(t), bson.D{{Key: "loc", Value: point(0, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Collection("unindexed").Aggregate(ctx(t), bson.A{geoNear})
	cmdErr(t, err, 291)

	// A compound index whose geo field is not first serves too.
	other := db.Collection("shops")
	if _, err := other.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "kind", Value: 1}, {Key: "loc", Value: "2dsphere"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.InsertMany(ctx(t), []any{
		bson.D{{Key: "_id", Value: int32(1)}, {Key: "kind", Value: "bakery"}, {Key: "loc", Value: point(2.36, 48.86)}},
		bson.D{{Key: "_id", Value: int32(2)}, {Key: "kind", Value: "bakery"}, {Key: "loc", Value: point(2.3522, 48.8566)}},
		bson.D{{Key: "_id", Value: int32(3)}, {Key: "kind", Value: "books"}, {Key: "loc", Value: point(2.3522, 48.8567)}},
	}); err != nil {
		t.Fatal(err)
	}
	if got := textFind(t, other, append(near(), bson.E{Key: "kind", Value: "bakery"})); !equalIDs(got, []int32{2, 1}) {
		t.Errorf("compound: %v", got)
	}
}

// TestGeoNearMany checks the index-driven search against brute force on
// random points, and that a bounded search reads only part of them.
func TestGeoNearMany(t *testing.T) {
	_, client := connect(t)
	coll := client.Database("geonear").Collection("random")
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "loc", Value: "2dsphere"}}}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 3000
	type pt struct{ lng, lat float64 }
	pts := make([]pt, n)
	docs := make([]any, n)
	for i := range pts {
		// Around Europe, with some points on the other side of the world.
		p := pt{rng.Float64()*40 - 10, rng.Float64()*30 + 35}
		if i%10 == 0 {
			p = pt{rng.Float64()*360 - 180, rng.Float64()*180 - 90}
		}
		pts[i] = p
		docs[i] = bson.D{{Key: "_id", Value: int32(i)}, {Key: "loc", Value: point(p.lng, p.lat)}}
	}
	if _, err := coll.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	const r = 6378100.0
	dist := func(a, b pt) float64 { // haversine, as a check independent of S2
		rad := math.Pi / 180
		dlat, dlng := (b.lat-a.lat)*rad, (b.lng-a.lng)*rad
		h := math.Sin(dlat/2)*math.Sin(dlat/2) + math.Cos(a.lat*rad)*math.Cos(b.lat*rad)*math.Sin(dlng/2)*math.Sin(dlng/2)
		return 2 * r * math.Asin(math.Sqrt(h))
	}
	center := pt{4.9, 52.37} // Amsterdam
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	sort.SliceStable(order, func(i, j int) bool { return dist(center, pts[order[i]]) < dist(center, pts[order[j]]) })
	nearQ := func(max float64) bson.D {
		q := bson.D{{Key: "$geometry", Value: point(center.lng, center.lat)}}
		if max > 0 {
			q = append(q, bson.E{Key: "$maxDistance", Value: max})
		}
		return bson.D{{Key: "loc", Value: bson.D{{Key: "$near", Value: q}}}}
	}
	// The 20 nearest.
	got := textFind(t, coll, nearQ(0), options.Find().SetLimit(20))
	if !equalIDs(got, order[:20]) {
		t.Errorf("20 nearest: %v\nwant %v", got, order[:20])
	}
	// Everything within 300 km, in order.
	var within []int32
	for _, id := range order {
		if d := dist(center, pts[id]); d <= 300000 && math.Abs(d-300000) > 1 {
			within = append(within, id)
		}
	}
	got = textFind(t, coll, nearQ(300000))
	if !equalIDs(got, within) {
		t.Errorf("within 300 km: %d answers, want %d", len(got), len(within))
	}
	// $geoWithin a $centerSphere of the same radius: the same documents,
	// read through the index (find, count and aggregate alike).
	inCap := bson.D{{Key: "loc", Value: bson.D{{Key: "$geoWithin", Value: bson.D{{Key: "$centerSphere", Value: bson.A{bson.A{center.lng, center.lat}, 300000 / r}}}}}}}
	wantSorted := slices.Clone(within)
	slices.Sort(wantSorted)
	if got := geoIDs(t, coll, inCap); !equalIDs(got, wantSorted) {
		t.Errorf("$centerSphere: %d answers, want %d", len(got), len(wantSorted))
	}
	if cnt, err := coll.CountDocuments(ctx(t), inCap); err != nil || cnt != int64(len(within)) {
		t.Errorf("count $centerSphere = %d, %v; want %d", cnt, err, len(within))
	}
	exw, err := client.Database("geonear").RunCommand(ctx(t), bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "random"}, {Key: "filter", Value: inCap}}}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if ix := exw.Lookup("queryPlanner", "winningPlan", "inputStage", "indexName"); ix.Type != bson.TypeString || ix.StringValue() != "loc_2dsphere" {
		t.Errorf("$geoWithin plan: %v", exw.Lookup("queryPlanner", "winningPlan"))
	}
	if docs := exw.Lookup("executionStats", "totalDocsExamined").AsInt64(); docs > n/4 {
		t.Errorf("$geoWithin examined %d documents of %d", docs, n)
	}
	// The bounded search examines a fraction of the collection.
	var ex bson.Raw
	ex, err = client.Database("geonear").RunCommand(ctx(t), bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "random"}, {Key: "filter", Value: nearQ(300000)}}}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if stage := ex.Lookup("queryPlanner", "winningPlan", "stage").StringValue(); stage != "GEO_NEAR_2DSPHERE" {
		t.Errorf("winning stage %s", stage)
	}
	if docs := ex.Lookup("executionStats", "totalDocsExamined").AsInt64(); docs <= int64(len(within)) || docs > n/4 {
		t.Errorf("docs examined = %d for %d answers of %d", docs, len(within), n)
	}
}

// TestGeo2d: 2d indexes on legacy coordinate pairs, planar $near, and the
// flat shapes read through them.
func TestGeo2d(t *testing.T) {
	_, client := connect(t)
	db := client.Database("geo2d")
	coll := db.Collection("pts")
	name, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "loc", Value: "2d"}}})
	if err != nil || name != "loc_2d" {
		t.Fatalf("createIndex = %q, %v", name, err)
	}
	if _, err := coll.InsertMany(ctx(t), []any{
		bson.D{{Key: "_id", Value: int32(1)}, {Key: "loc", Value: bson.A{0, 0}}},
		bson.D{{Key: "_id", Value: int32(2)}, {Key: "loc", Value: bson.A{3, 4}}},
		bson.D{{Key: "_id", Value: int32(3)}, {Key: "loc", Value: bson.D{{Key: "x", Value: -1}, {Key: "y", Value: 1}}}},
		bson.D{{Key: "_id", Value: int32(4)}, {Key: "loc", Value: bson.A{10, 10}}},
		bson.D{{Key: "_id", Value: int32(5)}, {Key: "loc", Value: bson.A{bson.A{50, 50}, bson.A{0.5, 0}}}}, // two locations
		bson.D{{Key: "_id", Value: int32(6)}, {Key: "name", Value: "no location"}},
	}); err != nil {
		t.Fatal(err)
	}
	var we mongo.WriteException
	for _, bad := range []struct {
		doc  bson.D
		code int
	}{
		{bson.D{{Key: "loc", Value: point(1, 1)}}, 16804},
		{bson.D{{Key: "loc", Value: bson.A{200, 0}}}, 13027},
	} {
		_, err := coll.InsertOne(ctx(t), bad.doc)
		if !errors.As(err, &we) || we.WriteErrors[0].Code != bad.code {
			t.Errorf("insert %v: %v, want %d", bad.doc, err, bad.code)
		}
	}
	near := func(op string, extra ...bson.E) bson.D {
		return bson.D{{Key: "loc", Value: append(bson.D{{Key: op, Value: bson.A{0, 0}}}, extra...)}}
	}
	cases := []struct {
		name   string
		filter bson.D
		opts   []options.Lister[options.FindOptions]
		want   []int32
	}{
		{"planar, nearest first", near("$near"), nil, []int32{1, 5, 3, 2, 4}},
		{"within 5 units", near("$near", bson.E{Key: "$maxDistance", Value: 5}), nil, []int32{1, 5, 3, 2}},
		{"the two nearest", near("$near"), []options.Lister[options.FindOptions]{options.Find().SetLimit(2)}, []int32{1, 5}},
		{"spherical through the 2d index", near("$nearSphere", bson.E{Key: "$maxDistance", Value: 0.1}), nil, []int32{1, 5, 3, 2}},
		{"$box", bson.D{{Key: "loc", Value: bson.D{{Key: "$geoWithin", Value: bson.D{{Key: "$box", Value: bson.A{bson.A{-2, -2}, bson.A{4, 4}}}}}}}}, []options.Lister[options.FindOptions]{options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})}, []int32{1, 2, 3, 5}},
		{"$center", bson.D{{Key: "loc", Value: bson.D{{Key: "$geoWithin", Value: bson.D{{Key: "$center", Value: bson.A{bson.A{0, 0}, 1.5}}}}}}}, []options.Lister[options.FindOptions]{options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})}, []int32{1, 3, 5}},
	}
	for _, tc := range cases {
		if got := textFind(t, coll, tc.filter, tc.opts...); !equalIDs(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	ex, err := db.RunCommand(ctx(t), bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "pts"},
		{Key: "filter", Value: bson.D{{Key: "loc", Value: bson.D{{Key: "$geoWithin", Value: bson.D{{Key: "$box", Value: bson.A{bson.A{-2, -2}, bson.A{4, 4}}}}}}}}}}}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if ix := ex.Lookup("queryPlanner", "winningPlan", "inputStage", "indexName"); ix.Type != bson.TypeString || ix.StringValue() != "loc_2d" {
		t.Errorf("$box plan: %v", ex.Lookup("queryPlanner", "winningPlan"))
	}
	// $geoNear, planar: distances in coordinate units.
	agc, err := coll.Aggregate(ctx(t), bson.A{bson.D{{Key: "$geoNear", Value: bson.D{{Key: "near", Value: bson.A{0, 0}}, {Key: "distanceField", Value: "d"}}}}, bson.D{{Key: "$limit", Value: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	var got []struct {
		ID int32   `bson:"_id"`
		D  float64 `bson:"d"`
	}
	if err := agc.All(ctx(t), &got); err != nil || len(got) != 4 || got[0].D != 0 || got[1].D != 0.5 || math.Abs(got[2].D-math.Sqrt2) > 1e-9 || got[3].D != 5 {
		t.Errorf("$geoNear planar = %+v, %v", got, err)
	}
	// $centerSphere across the antimeridian through the 2d index: the
	// cap's box then spans every longitude.
	if _, err := coll.InsertMany(ctx(t), []any{
		bson.D{{Key: "_id", Value: int32(20)}, {Key: "loc", Value: bson.A{179.9, 0}}},
		bson.D{{Key: "_id", Value: int32(21)}, {Key: "loc", Value: bson.A{-179.9, 0.1}}},
	}); err != nil {
		t.Fatal(err)
	}
	if got := textFind(t, coll, bson.D{{Key: "loc", Value: bson.D{{Key: "$geoWithin", Value: bson.D{{Key: "$centerSphere", Value: bson.A{bson.A{180, 0}, 0.01}}}}}}}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})); !equalIDs(got, []int32{20, 21}) {
		t.Errorf("antimeridian: %v", got)
	}
	// Options: a custom space; 2d must come first.
	other := db.Collection("grid")
	if _, err := other.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "p", Value: "2d"}},
		Options: options.Index().SetMin(0).SetMax(1000).SetBits(20)}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.InsertOne(ctx(t), bson.D{{Key: "p", Value: bson.A{999, 0}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.InsertOne(ctx(t), bson.D{{Key: "p", Value: bson.A{-1, 5}}}); !errors.As(err, &we) || we.WriteErrors[0].Code != 13027 {
		t.Errorf("outside [0, 1000): %v", err)
	}
	_, err = other.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}, {Key: "q", Value: "2d"}}})
	cmdErr(t, err, 16801)
}
