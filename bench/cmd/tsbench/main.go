// Command tsbench compares a time-series collection with a regular
// collection holding the same measurements (issue 26): N measurements
// (default 1,000,000) of 100 sensors, one per sensor per second, in time
// order, inserted through the official Go driver in batches of 1,000 into
// cairnd servers (one per collection kind, each on its own data
// directory; with -base, a third server running that cairnd binary — main's
// build — with the time-series collection), each batch going to every
// server in turn so that the loads are alternated; then the insert rate
// (wall and server CPU), the stored size per measurement (collStats
// totalSize: data and indexes; for the time-series collection, its buckets
// collection's), how many buckets are compressed (control.version 2), and
// an hourly $group with $dateTrunc (avg, min, max and count per hour), the
// same per sensor and one sensor's hour, run -rounds times alternating
// between the servers, median wall and server CPU times. Every cairnd runs
// with --wiredTigerCacheSizeGB 1 and GOMEMLIMIT=2GiB.
//
//	go run ./cmd/tsbench -n 1000000 -base /path/to/main/cairnd
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/bench/internal/cairndproc"
)

const sensors = 100

type target struct {
	name   string
	srv    *cairndproc.Server
	client *mongo.Client
	coll   *mongo.Collection
	stats  string // the collection whose collStats count
}

func main() {
	n := flag.Int("n", 1_000_000, "measurements")
	rounds := flag.Int("rounds", 5, "query rounds per collection")
	bin := flag.String("cairnd", "", "cairnd binary (default: build ../cmd/cairnd)")
	base := flag.String("base", "", "a second cairnd binary (the base build) to load with the time-series collection too")
	dir := flag.String("dir", "", "working directory (default: a temporary one)")
	flag.Parse()
	ctx := context.Background()
	if *dir == "" {
		d, err := os.MkdirTemp("", "tsbench")
		check(err)
		defer os.RemoveAll(d)
		*dir = d
	}
	if *bin == "" {
		b, err := cairndproc.Build(*dir)
		check(err)
		*bin = b
	}
	check(os.Setenv("GOMEMLIMIT", "2GiB"))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var targets []*target
	kinds := []string{"timeseries", "regular"}
	if *base != "" {
		kinds = append(kinds, "ts-base")
	}
	for _, kind := range kinds {
		d := *dir + "/" + kind
		check(os.MkdirAll(d, 0o755))
		b := *bin
		if kind == "ts-base" {
			b = *base
		}
		srv, err := cairndproc.Start(ctx, cairndproc.Options{Binary: b, Dir: d, Args: []string{"--wiredTigerCacheSizeGB", "1"}})
		check(err)
		defer srv.Stop()
		client, err := mongo.Connect(options.Client().ApplyURI(srv.URI))
		check(err)
		db := client.Database("bench")
		t := &target{name: kind, srv: srv, client: client, coll: db.Collection("m"), stats: "m"}
		if kind != "regular" {
			to := options.TimeSeries().SetTimeField("t").SetMetaField("meta").SetGranularity("seconds")
			check(db.CreateCollection(ctx, "m", options.CreateCollection().SetTimeSeriesOptions(to)))
			t.stats = "system.buckets.m"
		} else {
			check(db.CreateCollection(ctx, "m"))
		}
		targets = append(targets, t)
	}
	fmt.Printf("tsbench: %d measurements, %d sensors, 1 s apart, batches of 1000\n", *n, sensors)
	r := rand.New(rand.NewPCG(26, 26))
	level := make([]float64, sensors)
	for i := range level {
		level[i] = 20 + r.Float64()*10
	}
	walls := make([]time.Duration, len(targets))
	cpu0 := make([]time.Duration, len(targets))
	for i, t := range targets {
		cpu0[i] = cairndproc.CPU(t.srv.Pid())
	}
	batch := make([]any, 0, 1000)
	for i := 0; i < *n; i++ {
		s := i % sensors
		level[s] += (r.Float64() - 0.5) / 10
		batch = append(batch, bson.D{
			{Key: "t", Value: start.Add(time.Duration(i/sensors) * time.Second)},
			{Key: "meta", Value: bson.D{{Key: "sensor", Value: int32(s)}, {Key: "kind", Value: "temperature"}}},
			{Key: "v", Value: math.Round(level[s]*100) / 100},
		})
		if len(batch) == cap(batch) || i == *n-1 {
			for j, t := range targets {
				t0 := time.Now()
				_, err := t.coll.InsertMany(ctx, batch)
				check(err)
				walls[j] += time.Since(t0)
			}
			batch = batch[:0]
		}
	}
	for i, t := range targets {
		wall, cpu := walls[i], cairndproc.CPU(t.srv.Pid())-cpu0[i]
		var st bson.M
		check(t.client.Database("bench").RunCommand(ctx, bson.D{{Key: "collStats", Value: t.stats}}).Decode(&st))
		size := toInt(st["totalSize"])
		docs := toInt(st["count"])
		fmt.Printf("%-10s insert: %8.0f measurements/s wall (%.1f s), %6.1f µs server CPU per measurement; stored %d documents, %d bytes (data+indexes), %.1f bytes per measurement",
			t.name, float64(*n)/wall.Seconds(), wall.Seconds(), float64(cpu.Microseconds())/float64(*n), docs, size, float64(size)/float64(*n))
		if t.stats != "m" {
			v2, err := t.client.Database("bench").Collection(t.stats).CountDocuments(ctx, bson.D{{Key: "control.version", Value: 2}})
			check(err)
			fmt.Printf("; %d buckets compressed", v2)
		}
		fmt.Println()
	}
	queries := []struct {
		name string
		p    mongo.Pipeline
	}{
		{"hourly", mongo.Pipeline{{{Key: "$group", Value: bson.D{
			{Key: "_id", Value: bson.D{{Key: "$dateTrunc", Value: bson.D{{Key: "date", Value: "$t"}, {Key: "unit", Value: "hour"}}}}},
			{Key: "avg", Value: bson.D{{Key: "$avg", Value: "$v"}}}, {Key: "min", Value: bson.D{{Key: "$min", Value: "$v"}}},
			{Key: "max", Value: bson.D{{Key: "$max", Value: "$v"}}}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}}}},
		{"hourly per sensor", mongo.Pipeline{{{Key: "$group", Value: bson.D{
			{Key: "_id", Value: bson.D{{Key: "s", Value: "$meta.sensor"}, {Key: "h", Value: bson.D{{Key: "$dateTrunc", Value: bson.D{{Key: "date", Value: "$t"}, {Key: "unit", Value: "hour"}}}}}}},
			{Key: "avg", Value: bson.D{{Key: "$avg", Value: "$v"}}}}}}}},
		{"one sensor, one hour", mongo.Pipeline{
			{{Key: "$match", Value: bson.D{{Key: "meta.sensor", Value: 7}, {Key: "t", Value: bson.D{{Key: "$gte", Value: start.Add(time.Hour)}, {Key: "$lt", Value: start.Add(2 * time.Hour)}}}}}},
			{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "avg", Value: bson.D{{Key: "$avg", Value: "$v"}}}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}}}},
	}
	for _, q := range queries {
		walls := map[string][]time.Duration{}
		cpus := map[string][]time.Duration{}
		answers := make([][]bson.Raw, len(targets))
		for round := 0; round < *rounds+1; round++ { // the first round warms up
			for i, t := range targets {
				cpu0, t0 := cairndproc.CPU(t.srv.Pid()), time.Now()
				cur, err := t.coll.Aggregate(ctx, q.p)
				check(err)
				var docs []bson.Raw
				check(cur.All(ctx, &docs))
				if round > 0 {
					walls[t.name] = append(walls[t.name], time.Since(t0))
					cpus[t.name] = append(cpus[t.name], cairndproc.CPU(t.srv.Pid())-cpu0)
				}
				answers[i] = docs
			}
		}
		same := true
		for _, a := range answers[1:] {
			same = same && len(a) == len(answers[0])
		}
		fmt.Printf("%-22s", q.name)
		for _, t := range targets {
			fmt.Printf("  %s %7.1f ms wall %7.1f ms CPU", t.name, ms(median(walls[t.name])), ms(median(cpus[t.name])))
		}
		fmt.Printf("  (%d groups; same group count: %v)\n", len(answers[0]), same)
	}
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case int32:
		return int64(x)
	case int64:
		return x
	case float64:
		return int64(x)
	}
	return -1
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "tsbench:", err)
		os.Exit(1)
	}
}
