package e2e

import (
	"sort"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// tsMeasurement is one generated measurement.
type tsMeasurement struct {
	sensor int
	at     time.Time
	value  float64
}

// TestTimeseriesCollection: a time-series collection created through the
// driver is listed as mongod lists it (the collection of type timeseries
// and its system.buckets collection), takes measurements in random order
// into buckets whose control.min/max bound their data, answers finds,
// counts and $group/$dateTrunc aggregations as a regular collection with
// the same documents does, pushes time and meta predicates down to the
// buckets (explain), builds indexes on the buckets with mongod's key
// translation, deletes by meta and by measurement field, updates meta
// values, and refuses what mongod refuses.
func TestTimeseriesCollection(t *testing.T) {
	_, client := connect(t)
	db := client.Database("tsdb")
	r, _ := seededRand(t)
	to := options.TimeSeries().SetTimeField("t").SetMetaField("m").SetGranularity("seconds")
	if err := db.CreateCollection(ctx(t), "w", options.CreateCollection().SetTimeSeriesOptions(to)); err != nil {
		t.Fatal(err)
	}
	// Creating it again with the same options is no error; with others it is.
	if err := db.CreateCollection(ctx(t), "w", options.CreateCollection().SetTimeSeriesOptions(to)); err != nil {
		t.Fatalf("re-create with the same options: %v", err)
	}
	err := db.CreateCollection(ctx(t), "w", options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("x")))
	cmdErr(t, err, 48)

	// listCollections: the collection and its buckets.
	cur, err := db.ListCollections(ctx(t), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var infos []bson.Raw
	if err := cur.All(ctx(t), &infos); err != nil {
		t.Fatal(err)
	}
	byName := map[string]bson.Raw{}
	for _, in := range infos {
		byName[in.Lookup("name").StringValue()] = in
	}
	w, b := byName["w"], byName["system.buckets.w"]
	if w == nil || b == nil {
		t.Fatalf("listCollections: %v", infos)
	}
	if w.Lookup("type").StringValue() != "timeseries" || w.Lookup("options", "timeseries", "timeField").StringValue() != "t" ||
		w.Lookup("options", "timeseries", "metaField").StringValue() != "m" || w.Lookup("options", "timeseries", "granularity").StringValue() != "seconds" ||
		w.Lookup("options", "timeseries", "bucketMaxSpanSeconds").Int32() != 3600 {
		t.Fatalf("time-series entry %v", w)
	}
	if b.Lookup("type").StringValue() != "collection" || !b.Lookup("options", "clusteredIndex").Boolean() || b.Lookup("options", "timeseries", "timeField").StringValue() != "t" {
		t.Fatalf("buckets entry %v", b)
	}

	// Measurements of 5 sensors every 10 s over 4 hours, inserted in a
	// random order, in batches of various sizes.
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var all []tsMeasurement
	for i := 0; i < 4*360; i++ {
		for s := 0; s < 5; s++ {
			all = append(all, tsMeasurement{s, start.Add(time.Duration(i) * 10 * time.Second), float64(r.IntN(1000)) / 10})
		}
	}
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	coll, plain := db.Collection("w"), db.Collection("plain")
	began := time.Now()
	for lo := 0; lo < len(all); {
		hi := min(len(all), lo+1+r.IntN(700))
		var docs []any
		for _, m := range all[lo:hi] {
			docs = append(docs, bson.D{{Key: "t", Value: m.at}, {Key: "m", Value: bson.D{{Key: "sensor", Value: m.sensor}}}, {Key: "v", Value: m.value}})
		}
		if _, err := coll.InsertMany(ctx(t), docs); err != nil {
			t.Fatal(err)
		}
		if _, err := plain.InsertMany(ctx(t), docs); err != nil {
			t.Fatal(err)
		}
		lo = hi
	}
	t.Logf("inserted in %v", time.Since(began))
	if n, err := coll.CountDocuments(ctx(t), bson.D{}); err != nil || n != int64(len(all)) {
		t.Fatalf("count %d %v, want %d", n, err, len(all))
	}

	// Every bucket holds one sensor, at most 1000 measurements within an
	// hour of its start, bounded by control.min/max.
	buckets := db.Collection("system.buckets.w")
	bcur, err := buckets.Find(ctx(t), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var bdocs []bson.Raw
	if err := bcur.All(ctx(t), &bdocs); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, bd := range bdocs {
		if bd.Lookup("control", "version").Int32() != 1 {
			t.Fatalf("bucket version %v", bd.Lookup("control"))
		}
		lo, hi := bd.Lookup("control", "min", "t").Time(), bd.Lookup("control", "max", "t").Time()
		vals, _ := bd.Lookup("data", "t").Document().Values()
		if len(vals) == 0 || len(vals) > 1000 {
			t.Fatalf("bucket of %d measurements", len(vals))
		}
		for _, v := range vals {
			at := v.Time()
			if at.Before(lo) || at.After(hi) || !at.Before(lo.Add(time.Hour)) {
				t.Fatalf("measurement at %v outside bucket [%v, %v]", at, lo, hi)
			}
		}
		if lo.Unix()%60 != 0 {
			t.Fatalf("bucket start %v not rounded to the minute", lo)
		}
		total += len(vals)
	}
	if total != len(all) {
		t.Fatalf("buckets hold %d measurements, want %d", total, len(all))
	}
	if len(bdocs) > len(all)/20 {
		t.Fatalf("%d buckets for %d measurements: buckets are not reused", len(bdocs), len(all))
	}
	t.Logf("%d measurements in random order: %d buckets", len(all), len(bdocs))

	// collStats and $collStats report the buckets' storage under the
	// collection's name, with a timeseries section.
	var cs bson.Raw
	if err := db.RunCommand(ctx(t), bson.D{{Key: "collStats", Value: "w"}}).Decode(&cs); err != nil {
		t.Fatal(err)
	}
	if cs.Lookup("ns").StringValue() != "tsdb.w" || cs.Lookup("timeseries", "bucketsNs").StringValue() != "tsdb.system.buckets.w" ||
		cs.Lookup("timeseries", "bucketCount").AsInt64() != int64(len(bdocs)) || cs.Lookup("size").AsInt64() <= 0 {
		t.Fatalf("collStats: %v", cs)
	}
	sdocs := aggregateAll(t, coll, mongo.Pipeline{{{Key: "$collStats", Value: bson.D{{Key: "storageStats", Value: bson.D{}}}}}})
	if len(sdocs) != 1 || sdocs[0].Lookup("storageStats", "timeseries", "bucketCount").AsInt64() != int64(len(bdocs)) {
		t.Fatalf("$collStats: %v", sdocs)
	}

	// In time order, each sensor's hours fill one bucket each.
	ordered := db.Collection("ordered")
	if err := db.CreateCollection(ctx(t), "ordered", options.CreateCollection().SetTimeSeriesOptions(to)); err != nil {
		t.Fatal(err)
	}
	sorted := append([]tsMeasurement(nil), all...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].at.Before(sorted[j].at) })
	for lo := 0; lo < len(sorted); lo += 500 {
		var docs []any
		for _, m := range sorted[lo:min(len(sorted), lo+500)] {
			docs = append(docs, bson.D{{Key: "t", Value: m.at}, {Key: "m", Value: bson.D{{Key: "sensor", Value: m.sensor}}}, {Key: "v", Value: m.value}})
		}
		if _, err := ordered.InsertMany(ctx(t), docs); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := db.Collection("system.buckets.ordered").CountDocuments(ctx(t), bson.D{}); err != nil || n != 5*4 {
		t.Fatalf("in-order inserts: %d buckets (%v), want 20", n, err)
	}

	t.Logf("in-order inserts done at %v", time.Since(began))
	// Queries through the collection agree with the regular collection.
	from, to2 := start.Add(65*time.Minute), start.Add(150*time.Minute)
	filters := []bson.D{
		{},
		{{Key: "m.sensor", Value: 3}},
		{{Key: "t", Value: bson.D{{Key: "$gte", Value: from}, {Key: "$lt", Value: to2}}}},
		{{Key: "m", Value: bson.D{{Key: "sensor", Value: 1}}}, {Key: "t", Value: bson.D{{Key: "$gt", Value: from}}}},
		{{Key: "v", Value: bson.D{{Key: "$gt", Value: 50}}}, {Key: "t", Value: bson.D{{Key: "$lte", Value: to2}}}},
		{{Key: "t", Value: from}},
	}
	for _, f := range filters {
		got := findSorted(t, coll, f)
		want := findSorted(t, plain, f)
		if len(got) != len(want) {
			t.Fatalf("filter %v: %d measurements, regular collection %d", f, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("filter %v: measurement %d is %v, regular collection %v", f, i, got[i], want[i])
			}
		}
	}
	hourly := mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "t", Value: bson.D{{Key: "$gte", Value: from}}}}}},
		{{Key: "$group", Value: bson.D{
			{Key: "_id", Value: bson.D{{Key: "s", Value: "$m.sensor"}, {Key: "h", Value: bson.D{{Key: "$dateTrunc", Value: bson.D{{Key: "date", Value: "$t"}, {Key: "unit", Value: "hour"}}}}}}},
			{Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}},
			{Key: "avg", Value: bson.D{{Key: "$avg", Value: "$v"}}},
			{Key: "max", Value: bson.D{{Key: "$max", Value: "$v"}}},
		}}},
		{{Key: "$sort", Value: bson.D{{Key: "_id.s", Value: 1}, {Key: "_id.h", Value: 1}}}},
	}
	got, want := aggregateAll(t, coll, hourly), aggregateAll(t, plain, hourly)
	if len(got) == 0 || len(got) != len(want) {
		t.Fatalf("hourly groups: %d, regular collection %d", len(got), len(want))
	}
	for i := range got {
		if !bsonEqual(got[i], want[i]) {
			t.Fatalf("hourly group %d: %v, regular collection %v", i, got[i], want[i])
		}
	}

	t.Logf("queries done at %v", time.Since(began))
	// explain shows the unpacking and the predicate on the buckets.
	var ex bson.Raw
	filter := bson.D{{Key: "m.sensor", Value: 2}, {Key: "t", Value: bson.D{{Key: "$gte", Value: from}}}}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "explain", Value: bson.D{{Key: "aggregate", Value: "w"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: filter}}}}, {Key: "cursor", Value: bson.D{}}}}}).Decode(&ex); err != nil {
		t.Fatal(err)
	}
	exs := ex.String()
	for _, want := range []string{"$_internalUnpackBucket", "control.max.t", "meta.sensor"} {
		if !strings.Contains(exs, want) {
			t.Fatalf("explain lacks %s: %s", want, exs)
		}
	}

	// Indexes: created on the buckets with mongod's keys, listed with the
	// user's.
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "m.sensor", Value: 1}, {Key: "t", Value: -1}}}); err != nil {
		t.Fatal(err)
	}
	// The default index {m: 1, t: 1} and the new one, in the user's keys.
	keys := indexKeys(t, coll)
	if keys != `{"m":1,"t":1};{"m.sensor":1,"t":-1};` {
		t.Fatalf("listIndexes on the collection: %s", keys)
	}
	bkeys := indexKeys(t, buckets)
	if bkeys != `{"meta":1,"control.min.t":1,"control.max.t":1};{"meta.sensor":1,"control.max.t":-1,"control.min.t":-1};` {
		t.Fatalf("listIndexes on the buckets: %s", bkeys)
	}

	// Deletes: by meta, and by a measurement field (MongoDB 7.0).
	res, err := coll.DeleteMany(ctx(t), bson.D{{Key: "m.sensor", Value: 4}})
	if err != nil || res.DeletedCount != 4*360 {
		t.Fatalf("delete by meta: %v %v", res, err)
	}
	res, err = coll.DeleteMany(ctx(t), bson.D{{Key: "v", Value: bson.D{{Key: "$gte", Value: 90}}}, {Key: "m.sensor", Value: 0}})
	if err != nil {
		t.Fatal(err)
	}
	pres, _ := plain.DeleteMany(ctx(t), bson.D{{Key: "v", Value: bson.D{{Key: "$gte", Value: 90}}}, {Key: "m.sensor", Value: 0}})
	if _, err := plain.DeleteMany(ctx(t), bson.D{{Key: "m.sensor", Value: 4}}); err != nil {
		t.Fatal(err)
	}
	if res.DeletedCount != pres.DeletedCount || res.DeletedCount == 0 {
		t.Fatalf("delete by value: %d, regular collection %d", res.DeletedCount, pres.DeletedCount)
	}
	for _, f := range filters[:3] {
		if g, w := findSorted(t, coll, f), findSorted(t, plain, f); len(g) != len(w) {
			t.Fatalf("after deletes, filter %v: %d vs %d", f, len(g), len(w))
		}
	}

	// Updates: meta only.
	ures, err := coll.UpdateMany(ctx(t), bson.D{{Key: "m.sensor", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "m.sensor", Value: 11}}}})
	if err != nil || ures.MatchedCount != 4*360 || ures.ModifiedCount != 4*360 {
		t.Fatalf("meta update: %+v %v", ures, err)
	}
	if n, err := coll.CountDocuments(ctx(t), bson.D{{Key: "m.sensor", Value: 11}}); err != nil || n != 4*360 {
		t.Fatalf("after the meta update: %d %v", n, err)
	}
	_, err = coll.UpdateMany(ctx(t), bson.D{{Key: "v", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "m.sensor", Value: 1}}}})
	cmdErr(t, err, 72)
	_, err = coll.UpdateMany(ctx(t), bson.D{{Key: "m.sensor", Value: 2}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: 1}}}})
	cmdErr(t, err, 72)
	_, err = coll.UpdateOne(ctx(t), bson.D{{Key: "m.sensor", Value: 2}}, bson.D{{Key: "$set", Value: bson.D{{Key: "m.x", Value: 1}}}})
	cmdErr(t, err, 72)

	// Refusals.
	_, err = coll.InsertOne(ctx(t), bson.D{{Key: "m", Value: 1}, {Key: "v", Value: 1}})
	cmdErr(t, err, 2)
	_, err = coll.InsertOne(ctx(t), bson.D{{Key: "t", Value: "not a date"}})
	cmdErr(t, err, 2)
	cmdErr(t, client.Database("admin").RunCommand(ctx(t), bson.D{{Key: "renameCollection", Value: "tsdb.w"}, {Key: "to", Value: "tsdb.w2"}}).Err(), 20)
	bad := []struct {
		opts bson.D
		code int32
	}{
		{bson.D{{Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "a.b"}}}}, 72},
		{bson.D{{Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}, {Key: "metaField", Value: "t"}}}}, 72},
		{bson.D{{Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}, {Key: "metaField", Value: "_id"}}}}, 72},
		{bson.D{{Key: "timeseries", Value: bson.D{{Key: "timeField", Value: 1}}}}, 14},
		{bson.D{{Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}, {Key: "bogus", Value: 1}}}}, 40415},
		{bson.D{{Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}, {Key: "bucketMaxSpanSeconds", Value: 10}}}}, 72},
		{bson.D{{Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}, {Key: "granularity", Value: "minutes"}, {Key: "bucketMaxSpanSeconds", Value: 3600}}}}, 72},
		{bson.D{{Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}, {Key: "granularity", Value: "hours"}, {Key: "bucketRoundingSeconds", Value: 60}}}}, 72},
		{bson.D{{Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}}}, {Key: "capped", Value: true}, {Key: "size", Value: 100}}, 72},
		{bson.D{{Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}}}, {Key: "expireAfterSeconds", Value: -10}}, 72},
		{bson.D{{Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}}}, {Key: "expireAfterSeconds", Value: "x"}}, 14},
	}
	for _, c := range bad {
		cmd := append(bson.D{{Key: "create", Value: "bad"}}, c.opts...)
		cmdErr(t, db.RunCommand(ctx(t), cmd).Err(), c.code)
	}

	// collMod: granularity only coarser.
	if err := db.RunCommand(ctx(t), bson.D{{Key: "collMod", Value: "w"}, {Key: "timeseries", Value: bson.D{{Key: "granularity", Value: "hours"}}}}).Err(); err != nil {
		t.Fatalf("collMod to hours: %v", err)
	}
	cmdErr(t, db.RunCommand(ctx(t), bson.D{{Key: "collMod", Value: "w"}, {Key: "timeseries", Value: bson.D{{Key: "granularity", Value: "minutes"}}}}).Err(), 72)
	if n, err := coll.CountDocuments(ctx(t), bson.D{}); err != nil || n == 0 {
		t.Fatalf("count after collMod: %d %v", n, err)
	}

	// drop removes the collection and its buckets.
	if err := coll.Drop(ctx(t)); err != nil {
		t.Fatal(err)
	}
	names, err := db.ListCollectionNames(ctx(t), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if n == "w" || n == "system.buckets.w" {
			t.Fatalf("after drop: %v", names)
		}
	}
}

// TestTimeseriesTTL: expireAfterSeconds removes the buckets whose newest
// measurement is older than that, and keeps the others.
func TestTimeseriesTTL(t *testing.T) {
	srv := cairndtest.Start(t, "--setParameter", "ttlMonitorSleepSecs=1")
	client := dial(t, srv.URI)
	db := client.Database("tsttl")
	opts := options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("t").SetMetaField("m")).SetExpireAfterSeconds(3600)
	if err := db.CreateCollection(ctx(t), "c", opts); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("c")
	now := time.Now()
	var docs []any
	for i := 0; i < 50; i++ {
		docs = append(docs, bson.D{{Key: "t", Value: now.Add(-5 * time.Hour).Add(time.Duration(i) * time.Second)}, {Key: "m", Value: "old"}})
		docs = append(docs, bson.D{{Key: "t", Value: now.Add(time.Duration(-i) * time.Second)}, {Key: "m", Value: "new"}})
	}
	if _, err := coll.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	waitExpired(t, coll, bson.D{{Key: "m", Value: "old"}}, 15*time.Second, "measurements")
	if n, err := coll.CountDocuments(ctx(t), bson.D{{Key: "m", Value: "new"}}); err != nil || n != 50 {
		t.Fatalf("recent measurements: %d %v", n, err)
	}
}

// findSorted returns the (time, sensor, value) of the documents matching
// f, sorted.
func findSorted(t *testing.T, c *mongo.Collection, f bson.D) []string {
	t.Helper()
	cur, err := c.Find(ctx(t), f)
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(ctx(t), &docs); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.Lookup("t").String() + d.Lookup("m").String() + d.Lookup("v").String()
	}
	sort.Strings(out)
	return out
}

func aggregateAll(t *testing.T, c *mongo.Collection, p mongo.Pipeline) []bson.Raw {
	t.Helper()
	cur, err := c.Aggregate(ctx(t), p)
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(ctx(t), &docs); err != nil {
		t.Fatal(err)
	}
	return docs
}

func bsonEqual(a, b bson.Raw) bool { return a.String() == b.String() }

func indexKeys(t *testing.T, c *mongo.Collection) string {
	t.Helper()
	cur, err := c.Indexes().List(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(ctx(t), &docs); err != nil {
		t.Fatal(err)
	}
	s := ""
	for _, d := range docs {
		s += relaxed(d.Lookup("key").Document()) + ";"
	}
	return s
}

// relaxed is d in relaxed extended JSON.
func relaxed(d bson.Raw) string {
	b, err := bson.MarshalExtJSON(d, false, false)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
