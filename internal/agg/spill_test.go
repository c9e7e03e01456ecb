package agg

import (
	"os"
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/extsort"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// TestSpillStats: $sort and $group past their memory limit spill through
// extsort, count their runs in Context.Spill (the command's usedDisk),
// answer as in memory, and leave no file in the temporary directory;
// without allowDiskUse they fail with 292.
func TestSpillStats(t *testing.T) {
	docs := benchDocs(20000)
	for _, c := range []struct {
		name, pipeline string
	}{
		{"sort", `[{"$sort": {"v": -1}}, {"$project": {"v": 1}}]`},
		{"group", `[{"$group": {"_id": "$_id", "v": {"$first": "$v"}}}, {"$sort": {"_id": 1}}]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			stages := parseJSONArray(t, c.pipeline)
			run := func(ctx *Context) (int, error) {
				p, err := Parse(ctx, stages)
				if err != nil {
					return 0, err
				}
				it, err := p.Run(&SliceIterator{Docs: append([]bson.Doc(nil), docs...)})
				if err != nil {
					return 0, err
				}
				n := 0
				for {
					d, err := it.Next()
					if err != nil || d == nil {
						return n, err
					}
					n++
				}
			}
			dir := t.TempDir()
			stats := &extsort.Stats{}
			n, err := run(&Context{DB: "d", Coll: "c", AllowDiskUse: true, MemoryLimit: 256 << 10, TempDir: dir, Spill: stats})
			if err != nil || n != len(docs) {
				t.Fatalf("%d documents, %v", n, err)
			}
			if stats.Runs() < 2 || stats.Bytes() == 0 {
				t.Fatalf("%d runs, %d bytes spilled", stats.Runs(), stats.Bytes())
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Fatalf("%d files left in the temporary directory", len(ents))
			}
			mem := &extsort.Stats{}
			if _, err := run(&Context{DB: "d", Coll: "c", TempDir: dir, Spill: mem}); err != nil || mem.Spilled() {
				t.Fatalf("in memory: %v, spilled %v", err, mem.Spilled())
			}
			_, err = run(&Context{DB: "d", Coll: "c", MemoryLimit: 256 << 10, TempDir: dir})
			if err == nil || mongoerr.As(err).Code != 292 {
				t.Fatalf("without allowDiskUse: %v", err)
			}
		})
	}
}
