package agg

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/cairndb/cairn/bson"
)

// ClickBench-shaped benchmarks: the $group-heavy queries of
// bench/cmd/clickbench over narrow synthetic documents (only the fields
// the queries read, as a column cache would feed them), run across two
// workers as the server does.

const hitsRows = 200_000

var (
	hitsOnce sync.Once
	hitsData []bson.Doc
)

func hitsDocs() []bson.Doc {
	hitsOnce.Do(func() {
		r := rand.New(rand.NewPCG(7, 11))
		phrases := make([]string, 5000)
		for i := range phrases {
			phrases[i] = fmt.Sprintf("phrase %d of the search", i)
		}
		hitsData = make([]bson.Doc, hitsRows)
		for i := range hitsData {
			var b bson.Builder
			b.AppendInt64("WatchID", int64(r.Uint64()>>1))
			b.AppendInt32("ClientIP", int32(r.Uint32()))
			b.AppendInt64("UserID", int64(r.IntN(hitsRows/4))*7919)
			b.AppendInt32("RegionID", int32(r.IntN(300)*r.IntN(300)/300))
			b.AppendInt32("ResolutionWidth", int32(800+r.IntN(1200)))
			b.AppendInt32("IsRefresh", int32(r.IntN(2)))
			b.AppendInt32("AdvEngineID", int32(r.IntN(200)/190))
			sp := ""
			if r.IntN(8) == 0 {
				sp = phrases[r.IntN(len(phrases))]
			}
			b.AppendString("SearchPhrase", sp)
			b.AppendDateTime("EventTime", 1373846400000+int64(r.IntN(30*86400))*1000)
			hitsData[i] = b.Finish()
		}
	})
	return hitsData
}

func benchParallel(b *testing.B, pipeline string) { benchParallelLimit(b, pipeline, 0) }

// benchParallelLimit is benchParallel with a $group memory limit (0: the
// default): a small one makes the groups spill, as a million-row table's
// do under the default.
func benchParallelLimit(b *testing.B, pipeline string, memLimit int64) {
	docs := hitsDocs()
	stages := parseJSONArray(b, pipeline)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		p, err := Parse(&Context{DB: "d", Coll: "c", AllowDiskUse: true, MemoryLimit: memLimit, TempDir: b.TempDir()}, stages)
		if err != nil {
			b.Fatal(err)
		}
		it, ok, err := p.RunParallel(&sliceBatches{docs: docs}, 2)
		if err != nil || !ok {
			b.Fatal(ok, err)
		}
		for {
			d, err := it.Next()
			if err != nil {
				b.Fatal(err)
			}
			if d == nil {
				break
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(docs)), "ns/row")
	// The machine is shared: CPU time (all threads, GC included) is the
	// steadier figure.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N*len(docs)), "cpu-ns/row")
}

// cpuTime is the process's user and system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func BenchmarkClickQ32(b *testing.B) {
	benchParallel(b, `[{"$group": {"_id": {"$concat": [{"$toString": "$ClientIP"}, "|", {"$toString": "$WatchID"}]},
		"WatchID": {"$first": "$WatchID"}, "ClientIP": {"$first": "$ClientIP"},
		"avg_ResolutionWidth": {"$avg": "$ResolutionWidth"}, "sum_IsRefresh": {"$sum": "$IsRefresh"}, "c": {"$sum": 1}}},
		{"$sort": {"c": -1}}, {"$limit": 10}]`)
}

// BenchmarkClickQ32Spill is Q32 with the groups past 8 MB spilled.
func BenchmarkClickQ32Spill(b *testing.B) {
	benchParallelLimit(b, `[{"$group": {"_id": {"WatchID": "$WatchID", "ClientIP": "$ClientIP"},
		"c": {"$sum": 1}, "s": {"$sum": "$IsRefresh"}, "a": {"$avg": "$ResolutionWidth"}}},
		{"$sort": {"c": -1}}, {"$limit": 10}]`, 8<<20)
}

func BenchmarkClickQ29(b *testing.B) {
	var s strings.Builder
	s.WriteString(`[{"$project": {"_id": 0, "ResolutionWidth": {"$toLong": "$ResolutionWidth"}}}, {"$group": {"_id": null`)
	for k := 0; k < 90; k++ {
		fmt.Fprintf(&s, `, "srw_plus_%d": {"$sum": {"$add": ["$ResolutionWidth", %d]}}`, k, k)
	}
	s.WriteString(`}}]`)
	benchParallel(b, s.String())
}

func BenchmarkClickQ18(b *testing.B) {
	benchParallel(b, `[{"$group": {"_id": {"UserID": "$UserID", "SearchPhrase": "$SearchPhrase", "m": {"$minute": "$EventTime"}}, "c": {"$sum": 1}}},
		{"$sort": {"c": -1}}, {"$limit": 10}]`)
}

func BenchmarkClickQ8(b *testing.B) {
	benchParallel(b, `[{"$group": {"_id": {"RegionID": "$RegionID", "UserID": "$UserID"}}},
		{"$group": {"_id": "$_id.RegionID", "u": {"$sum": 1}}}, {"$sort": {"u": -1}}, {"$limit": 10}]`)
}

func BenchmarkClickQ9(b *testing.B) {
	benchParallel(b, `[{"$group": {"_id": "$RegionID", "sum_AdvEngineID": {"$sum": "$AdvEngineID"},
		"avg_ResolutionWidth": {"$avg": "$ResolutionWidth"}, "c": {"$sum": 1}}},
		{"$sort": {"c": -1}}, {"$limit": 10}]`)
}

func BenchmarkClickQ16(b *testing.B) {
	benchParallel(b, `[{"$group": {"_id": {"$concat": ["$SearchPhrase", "|", {"$toString": "$UserID"}]},
		"SearchPhrase": {"$first": "$SearchPhrase"}, "UserID": {"$first": "$UserID"}, "c": {"$sum": 1}}},
		{"$sort": {"c": -1}}, {"$limit": 10}]`)
}

func BenchmarkClickQ15(b *testing.B) {
	benchParallel(b, `[{"$group": {"_id": "$UserID", "c": {"$sum": 1}}}, {"$sort": {"c": -1}}, {"$limit": 10}]`)
}
