package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestTimeseriesCompressedBuckets: buckets that fill up (1,000
// measurements) are stored compressed as mongod 7.0 stores them
// (control.version 2, control.count, data.<field> BSONColumn binaries),
// the open ones uncompressed; queries, counts, deletes and meta updates
// answer as on a regular collection with the same documents, before and
// after late measurements that fall in the span of compressed buckets.
func TestTimeseriesCompressedBuckets(t *testing.T) {
	_, client := connect(t)
	db := client.Database("tscomp")
	r, _ := seededRand(t)
	to := options.TimeSeries().SetTimeField("t").SetMetaField("m").SetGranularity("seconds")
	if err := db.CreateCollection(ctx(t), "c", options.CreateCollection().SetTimeSeriesOptions(to)); err != nil {
		t.Fatal(err)
	}
	coll, plain := db.Collection("c"), db.Collection("plain")
	start := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	const sensors, perSensor = 4, 2600
	insert := func(docs []any) {
		t.Helper()
		if _, err := coll.InsertMany(ctx(t), docs); err != nil {
			t.Fatal(err)
		}
		if _, err := plain.InsertMany(ctx(t), docs); err != nil {
			t.Fatal(err)
		}
	}
	measurement := func(i, s int) bson.D {
		d := bson.D{{Key: "t", Value: start.Add(time.Duration(i) * time.Second)},
			{Key: "m", Value: bson.D{{Key: "sensor", Value: int32(s)}, {Key: "kind", Value: "temp"}}}}
		if r.IntN(10) > 0 {
			d = append(d, bson.E{Key: "v", Value: float64(r.IntN(4000)) / 100})
		}
		switch r.IntN(4) {
		case 0:
			d = append(d, bson.E{Key: "n", Value: int32(r.IntN(5))})
		case 1:
			d = append(d, bson.E{Key: "n", Value: int64(r.IntN(5) + 1<<40)})
		case 2:
			d = append(d, bson.E{Key: "s", Value: []string{"a", "b"}[r.IntN(2)]})
		}
		if i%50 == 0 {
			d = append(d, bson.E{Key: "o", Value: bson.D{{Key: "ok", Value: r.IntN(2) == 0}}})
		}
		return d
	}
	var batch []any
	for i := 0; i < perSensor; i++ {
		for s := 0; s < sensors; s++ {
			batch = append(batch, measurement(i, s))
			if len(batch) == 500 {
				insert(batch)
				batch = nil
			}
		}
	}
	insert(batch)

	buckets := func() (v1, v2 int) {
		t.Helper()
		cur, err := db.Collection("system.buckets.c").Find(ctx(t), bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		var bdocs []bson.Raw
		if err := cur.All(ctx(t), &bdocs); err != nil {
			t.Fatal(err)
		}
		for _, bd := range bdocs {
			switch v := bd.Lookup("control", "version").Int32(); v {
			case 1:
				v1++
			case 2:
				v2++
				if n := bd.Lookup("control", "count").Int32(); n < 1 || n > 1000 {
					t.Fatalf("compressed bucket with control.count %d", n)
				}
				sub, data := bd.Lookup("data", "t").Binary()
				if sub != 7 || len(data) == 0 {
					t.Fatalf("compressed bucket's data.t: subtype %d", sub)
				}
			default:
				t.Fatalf("bucket version %d", v)
			}
		}
		return v1, v2
	}
	v1, v2 := buckets()
	if v2 < sensors*2 || v1 == 0 {
		t.Fatalf("%d uncompressed and %d compressed buckets, want %d compressed and the open ones uncompressed", v1, v2, sensors*2)
	}

	hour := bson.D{{Key: "$dateTrunc", Value: bson.D{{Key: "date", Value: "$t"}, {Key: "unit", Value: "minute"}, {Key: "binSize", Value: 10}}}}
	pipelines := []mongo.Pipeline{
		{{{Key: "$group", Value: bson.D{{Key: "_id", Value: hour},
			{Key: "avg", Value: bson.D{{Key: "$avg", Value: "$v"}}}, {Key: "min", Value: bson.D{{Key: "$min", Value: "$v"}}},
			{Key: "max", Value: bson.D{{Key: "$max", Value: "$v"}}}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
			{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}}},
		{{{Key: "$match", Value: bson.D{{Key: "m.sensor", Value: 2}, {Key: "t", Value: bson.D{{Key: "$gte", Value: start.Add(900 * time.Second)}, {Key: "$lt", Value: start.Add(2100 * time.Second)}}}}}},
			{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$n"}, {Key: "c", Value: bson.D{{Key: "$sum", Value: 1}}}, {Key: "s", Value: bson.D{{Key: "$sum", Value: "$v"}}}}}},
			{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}}},
		{{{Key: "$match", Value: bson.D{{Key: "o.ok", Value: true}}}}, {{Key: "$count", Value: "n"}}},
		{{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$m.sensor"}, {Key: "first", Value: bson.D{{Key: "$min", Value: "$t"}}},
			{Key: "last", Value: bson.D{{Key: "$max", Value: "$t"}}}, {Key: "n", Value: bson.D{{Key: "$sum", Value: "$n"}}}}}},
			{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}}},
	}
	filters := []bson.D{
		{},
		{{Key: "v", Value: bson.D{{Key: "$gt", Value: 39.5}}}},
		{{Key: "m.sensor", Value: 1}, {Key: "t", Value: bson.D{{Key: "$gte", Value: start.Add(999 * time.Second)}, {Key: "$lte", Value: start.Add(1001 * time.Second)}}}},
		{{Key: "v", Value: bson.D{{Key: "$exists", Value: false}}}},
		{{Key: "n", Value: bson.D{{Key: "$type", Value: "long"}}}, {Key: "t", Value: bson.D{{Key: "$lt", Value: start.Add(1500 * time.Second)}}}},
	}
	compare := func(stage string) {
		t.Helper()
		for i, p := range pipelines {
			got, want := aggregateAll(t, coll, p), aggregateAll(t, plain, p)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s: pipeline %d: time-series %v, regular %v", stage, i, got, want)
			}
		}
		for i, f := range filters {
			got, want := findAll(t, coll, f), findAll(t, plain, f)
			if !slices.Equal(got, want) {
				t.Fatalf("%s: filter %d: %d measurements on the time-series collection, %d on the regular one", stage, i, len(got), len(want))
			}
			n, err := coll.CountDocuments(ctx(t), f)
			if err != nil || n != int64(len(want)) {
				t.Fatalf("%s: filter %d: count %d %v, want %d", stage, i, n, err, len(want))
			}
		}
	}
	compare("after the inserts")

	// Late measurements in the spans of compressed buckets.
	batch = nil
	for i := 0; i < 40; i++ {
		batch = append(batch, measurement(r.IntN(2000), r.IntN(sensors)))
	}
	insert(batch)
	compare("after late measurements")

	// Deletes (some measurements of compressed buckets) and a meta update.
	for _, f := range []bson.D{
		{{Key: "v", Value: bson.D{{Key: "$lt", Value: 2.0}}}},
		{{Key: "m.sensor", Value: 3}, {Key: "t", Value: bson.D{{Key: "$lt", Value: start.Add(1200 * time.Second)}}}},
	} {
		a, err := coll.DeleteMany(ctx(t), f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := plain.DeleteMany(ctx(t), f)
		if err != nil || a.DeletedCount != b.DeletedCount {
			t.Fatalf("deleted %d from the time-series collection, %d from the regular one (%v)", a.DeletedCount, b.DeletedCount, err)
		}
	}
	upd := bson.D{{Key: "$set", Value: bson.D{{Key: "m.kind", Value: "temperature"}}}}
	a, err := coll.UpdateMany(ctx(t), bson.D{{Key: "m.sensor", Value: 0}}, upd)
	if err != nil {
		t.Fatal(err)
	}
	b, err := plain.UpdateMany(ctx(t), bson.D{{Key: "m.sensor", Value: 0}}, upd)
	if err != nil || a.MatchedCount != b.MatchedCount || a.ModifiedCount != b.ModifiedCount {
		t.Fatalf("update matched/modified %d/%d on the time-series collection, %d/%d on the regular one (%v)", a.MatchedCount, a.ModifiedCount, b.MatchedCount, b.ModifiedCount, err)
	}
	compare("after deletes and a meta update")
	if _, v2 := buckets(); v2 < sensors {
		t.Fatalf("%d compressed buckets left after deletes", v2)
	}
}

// findAll returns the measurements matching f without their _id (a
// time-series collection's measurements keep theirs, but in another
// order), as sorted relaxed extended JSON.
func findAll(t *testing.T, c *mongo.Collection, f bson.D) []string {
	t.Helper()
	cur, err := c.Find(ctx(t), f, options.Find().SetProjection(bson.D{{Key: "_id", Value: 0}}))
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(ctx(t), &docs); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = canonicalFields(d)
	}
	slices.Sort(out)
	return out
}

// canonicalFields is d's fields sorted by name, in relaxed extended JSON
// (a time-series measurement's fields come back time and meta first).
func canonicalFields(d bson.Raw) string {
	els, _ := d.Elements()
	parts := make([]string, len(els))
	for i, e := range els {
		parts[i] = e.Key() + "=" + e.Value().String()
	}
	slices.Sort(parts)
	return fmt.Sprint(parts)
}
