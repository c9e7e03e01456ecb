package agg

import (
	"fmt"
	"testing"

	"github.com/cairndb/cairn/bson"
)

func benchDocs(n int) []bson.Doc {
	docs := make([]bson.Doc, n)
	for i := range docs {
		var b bson.Builder
		b.AppendInt32("_id", int32(i))
		b.AppendInt32("k", int32(i%1000))
		b.AppendString("s", fmt.Sprintf("str-%d", i%97))
		b.AppendDouble("v", float64(i)*0.5)
		docs[i] = b.Finish()
	}
	return docs
}

func benchPipeline(b *testing.B, pipeline string) {
	benchPipelineIn(b, &Context{DB: "d", Coll: "c"}, pipeline)
}

// benchPipelineIn runs pipeline over 100,000 documents in a copy of ctx
// per iteration.
func benchPipelineIn(b *testing.B, ctx *Context, pipeline string) {
	docs := benchDocs(100_000)
	stages := parseJSONArray(b, pipeline)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := *ctx
		p, err := Parse(&c, stages)
		if err != nil {
			b.Fatal(err)
		}
		it, err := p.Run(&SliceIterator{Docs: append([]bson.Doc(nil), docs...)})
		if err != nil {
			b.Fatal(err)
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
}

func BenchmarkGroupSum(b *testing.B) {
	benchPipeline(b, `[{"$group":{"_id":"$k","s":{"$sum":"$v"},"n":{"$sum":1}}}]`)
}

func BenchmarkMatchProject(b *testing.B) {
	benchPipeline(b, `[{"$match":{"k":{"$lt":500}}},{"$project":{"s":1,"x":{"$add":["$v",1]}}}]`)
}

func BenchmarkSortLimit(b *testing.B) {
	benchPipeline(b, `[{"$sort":{"v":-1}},{"$limit":10}]`)
}

func BenchmarkSortByCount(b *testing.B) {
	benchPipeline(b, `[{"$sortByCount":"$s"}]`)
}

// BenchmarkSortAll sorts 100,000 documents without a limit.
func BenchmarkSortAll(b *testing.B) {
	benchPipeline(b, `[{"$sort":{"v":-1}}]`)
}

// BenchmarkSortSpill is BenchmarkSortAll with a 1 MiB memory limit: the
// sort spills about ten runs and merges them.
func BenchmarkSortSpill(b *testing.B) {
	benchPipelineIn(b, &Context{DB: "d", Coll: "c", AllowDiskUse: true, MemoryLimit: 1 << 20, TempDir: b.TempDir()}, `[{"$sort":{"v":-1}}]`)
}
