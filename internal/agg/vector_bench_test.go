package agg

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchColumns returns a column source of n ClickBench-like rows (an int32
// with few values, an int32, an int64 with many values, a string with
// few values, a date) in chunks of 16,384 rows.
func benchColumns(b *testing.B, n int) *sliceColumns {
	r := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	sb.WriteString("[")
	for i := range n {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"_id": %d, "adv": %d, "width": %d, "user": {"$numberLong": "%d"}, "phrase": "p%d", "t": {"$date": {"$numberLong": "%d"}}}`,
			i, r.IntN(3), 1000+r.IntN(1000), r.Int64N(int64(n/4+1))*7919, r.IntN(50), 1373846400000+r.Int64N(86400000))
	}
	sb.WriteString("]")
	docs := parseJSONArray(b, sb.String())
	src := &sliceColumns{fields: []string{"_id", "adv", "width", "user", "phrase", "t"}, docs: docs, rows: 1 << 14}
	for ci := range src.ColumnChunks() {
		src.ColumnChunk(ci) // build the columns before timing
	}
	return src
}

// BenchmarkVectorGroup runs ClickBench-shaped pipelines vectorized over
// 200,000 rows in memory on 2 workers.
func BenchmarkVectorGroup(b *testing.B) {
	src := benchColumns(b, 200000)
	for _, c := range []struct{ name, pipeline string }{
		{"SumAvgNull", `[{"$group": {"_id": null, "s": {"$sum": "$adv"}, "c": {"$sum": 1}, "a": {"$avg": "$width"}}}]`},
		{"AvgToDecimal", `[{"$group": {"_id": null, "a": {"$avg": {"$toDecimal": "$user"}}}}]`},
		{"CountNe", `[{"$match": {"adv": {"$ne": 0}}}, {"$count": "c"}]`},
		{"GroupInt64", `[{"$group": {"_id": "$user", "c": {"$sum": 1}}}, {"$sort": {"c": -1}}, {"$limit": 10}]`},
		{"GroupConcat", `[{"$group": {"_id": {"$concat": ["$phrase", "|", {"$toString": "$user"}]}, "c": {"$sum": 1}}}, {"$sort": {"c": -1}}, {"$limit": 10}]`},
		// The same _id through the expression engine ($substrBytes does
		// not compile): the row path's cost of the expression.
		{"GroupConcatDoc", `[{"$group": {"_id": {"$concat": ["$phrase", {"$substrBytes": ["|", 0, 1]}, {"$toString": "$user"}]}, "c": {"$sum": 1}}}, {"$sort": {"c": -1}}, {"$limit": 10}]`},
		{"AvgStrLenDoc", `[{"$group": {"_id": "$adv", "l": {"$avg": {"$strLenBytes": {"$substrBytes": ["$phrase", 0, 100]}}}, "c": {"$sum": 1}}}]`},
		{"GroupMinute", `[{"$group": {"_id": {"u": "$user", "m": {"$minute": "$t"}}, "c": {"$sum": 1}}}, {"$sort": {"c": -1}}, {"$limit": 10}]`},
		{"AvgStrLen", `[{"$group": {"_id": "$adv", "l": {"$avg": {"$strLenBytes": "$phrase"}}, "c": {"$sum": 1}}}]`},
		// ClickBench's Q29: ninety sums of a converted column.
		{"Q29Sums", sumsPipeline("width", 90)},
	} {
		b.Run(c.name, func(b *testing.B) {
			spec := parseJSONArray(b, c.pipeline)
			cpu0 := processCPU()
			for b.Loop() {
				p, err := Parse(&Context{DB: "test", Coll: "c", AllowDiskUse: true, TempDir: b.TempDir()}, spec)
				if err != nil {
					b.Fatal(err)
				}
				it, ok, err := p.RunVector(src, 2)
				if err == nil && !ok {
					// Not vectorized: the parallel row path over the
					// narrow documents, as the server runs it.
					it, ok, err = p.RunParallel(&sliceBatches{docs: src.docs}, 2)
				}
				if err != nil || !ok {
					b.Fatal(ok, err)
				}
				if _, err := Drain(it); err != nil {
					b.Fatal(err)
				}
			}
			// The process's CPU time: steadier than the wall time on a
			// shared machine.
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N)/200000, "cpu-ns/row")
		})
	}
}

// sumsPipeline is ClickBench's Q29 over field: a $toLong projection of
// it, then n sums of it plus 0..n-1.
func sumsPipeline(field string, n int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, `[{"$project": {"_id": 0, %q: {"$toLong": "$%s"}}}, {"$group": {"_id": null`, field, field)
	for k := range n {
		fmt.Fprintf(&sb, `, "s%d": {"$sum": {"$add": ["$%s", %d]}}`, k, field, k)
	}
	sb.WriteString(`}}]`)
	return sb.String()
}

// processCPU returns the process's user and system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
