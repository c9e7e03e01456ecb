package exec

import (
	"context"
	"fmt"
	"strconv"
	"syscall"
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/colcache"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/kv"
)

// colBenchDB is a database of n documents of 100 fields (ints and
// strings, ~1.3 KB each, like ClickBench's hits) with a column store
// index over them.
func colBenchDB(b *testing.B, n int) *kv.DB {
	b.Helper()
	db, err := kv.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	err = db.Update(context.Background(), func(tx *kv.Tx) error {
		data, err := tx.CreateTree("data")
		if err != nil {
			return err
		}
		for i := range n {
			var d bson.Builder
			d.AppendInt32("_id", int32(i))
			for f := range 100 {
				if f%3 == 0 {
					d.AppendString("f"+strconv.Itoa(f), fmt.Sprintf("value %d of field %d", i%977, f))
				} else {
					d.AppendInt64("f"+strconv.Itoa(f), int64(i*f%10007))
				}
			}
			doc := d.Finish()
			id, _ := doc.Lookup("_id")
			if err := data.Put(DocKey(nil, id), doc); err != nil {
				return err
			}
		}
		var k, sb bson.Builder
		k.AppendString("$**", "columnstore")
		sb.AppendDocument("key", k.Finish())
		spec, err := index.Parse(sb.Finish())
		if err != nil {
			return err
		}
		_, _, err = index.Build(context.Background(), tx, data, "cs", "db.c", spec, 0)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return db
}

// BenchmarkColumnBuild measures what a cold column scan of two of the
// hundred fields costs: the column cache building them from the
// documents (Docs) or from the column store index (Store). Each
// iteration builds into an empty cache.
func BenchmarkColumnBuild(b *testing.B) {
	db := colBenchDB(b, 100000)
	fields := []string{"f1", "f3"}
	for _, from := range []string{"Docs", "Store"} {
		b.Run(from, func(b *testing.B) {
			tx, err := db.BeginRead()
			if err != nil {
				b.Fatal(err)
			}
			defer tx.Rollback()
			data, _ := tx.Tree("data")
			cs, _ := tx.Tree("cs")
			var src colcache.Source
			if from == "Store" {
				src = &storeSource{name: "cs", t: cs, parallel: true}
			}
			c0 := cpuSeconds()
			n := 0
			for b.Loop() {
				c := colcache.New(colcache.Options{})
				s, err := c.GetFrom(context.Background(), data, fields, false, src)
				if err != nil || s == nil || s.Rows() != 100000 {
					b.Fatalf("%v %v", s, err)
				}
				n++
			}
			// On a shared machine the CPU time is steadier than the wall.
			b.ReportMetric((cpuSeconds()-c0)*1e9/float64(n), "cpu-ns/op")
		})
	}
}

// cpuSeconds is this process's user and system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
