package command

import (
	"math/rand/v2"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/query"
)

// BenchmarkFindSort sorts 200,000 documents as find does, in memory
// (budget 100 MiB) and spilling (budget 1 MiB: about 20 runs).
func BenchmarkFindSort(b *testing.B) {
	raw, _ := dbson.Marshal(dbson.D{{Key: "k", Value: 1}})
	srt, err := query.ParseSort(bson.Doc(raw), &query.Options{})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	docs := make([]bson.Doc, 200_000)
	keys := make([][]byte, len(docs))
	for i := range docs {
		d, _ := dbson.Marshal(dbson.D{{Key: "k", Value: rng.Int64()}, {Key: "s", Value: "some padding of a document"}, {Key: "i", Value: i}})
		docs[i] = bson.Doc(d)
		keys[i] = srt.Key(nil, docs[i])
	}
	for _, c := range []struct {
		name   string
		budget int64
	}{{"memory", 100 << 20}, {"spill", 1 << 20}} {
		b.Run(c.name, func(b *testing.B) {
			old := exec.SortMemoryBudget()
			exec.SetSortMemoryBudget(c.budget)
			defer func() { exec.SetSortMemoryBudget(old) }()
			dir := b.TempDir()
			b.ReportAllocs()
			for b.Loop() {
				st := &exec.Sorter{AllowDisk: true, Parent: dir}
				for i, d := range docs {
					if err := st.Add(keys[i], d); err != nil {
						b.Fatal(err)
					}
				}
				stream, err := st.Finish()
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					d, err := stream.Next()
					if err != nil {
						b.Fatal(err)
					}
					if d == nil {
						break
					}
					n++
				}
				stream.Close()
				if n != len(docs) {
					b.Fatalf("%d documents, want %d", n, len(docs))
				}
			}
		})
	}
}
