package oplog_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
	"github.com/cairndb/cairn/kv/vfs"
)

// The oplog layer's own cost per logged write: building the entry (and
// an update's $v: 2 diff) and appending it, on an in-memory store, many
// appends per kv transaction so that kv's copy-on-write of the oplog
// tree's path is paid once per batch rather than per entry (its share is
// the command benchmarks' business: internal/command/oplog_bench_test.go).
// allocs/op is exact and does not depend on the machine's load.
//
//	go test ./internal/oplog -run '^$' -bench BenchmarkLog -benchmem

// ycsbRecord is a YCSB record: _id and ten 100-byte fields.
func ycsbRecord(id int, fill byte) bson.Doc {
	var b bson.Builder
	b.AppendString("_id", fmt.Sprintf("user%d", id))
	for f := range 10 {
		b.AppendString(fmt.Sprintf("field%d", f), strings.Repeat(string(rune(fill)), 100))
	}
	return b.Finish()
}

// benchLog runs op b.N times against a log over db.c, committing every
// perTx operations.
func benchLog(b *testing.B, op func(l *oplog.Log, tx *kv.Tx, coll *catalog.Collection, i int) error) {
	db, err := kv.Open("/db", &kv.Options{FS: vfs.NewMem(), Durability: kv.NoSync, JournalSize: 4 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	l, err := oplog.Open(db, repl.NewClock(time.Now, 0), oplog.Config{MaxBytes: 1 << 30}, nil)
	if err != nil {
		b.Fatal(err)
	}
	const perTx = 100
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; {
		tx, err := db.BeginWrite(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		coll, err := exec.CollectionForWrite(tx, "db", "c", true, l)
		if err != nil {
			b.Fatal(err)
		}
		for n := 0; n < perTx && i < b.N; n, i = n+1, i+1 {
			if err := op(l, tx, coll, i); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.CommitWith(kv.NoSync); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLogInsert(b *testing.B) {
	docs := make([]bson.Doc, 64)
	for i := range docs {
		docs[i] = ycsbRecord(i, byte('a'+i%26))
	}
	benchLog(b, func(l *oplog.Log, tx *kv.Tx, coll *catalog.Collection, i int) error {
		d := docs[i%len(docs)]
		id, _ := d.Lookup("_id")
		return l.Insert(tx, coll, d, id, nil)
	})
}

// BenchmarkLogUpdate logs YCSB A's update: a $set of one of the ten
// fields (a $v: 2 diff with one u field).
func BenchmarkLogUpdate(b *testing.B) {
	old := ycsbRecord(1, 'a')
	var updated [10]bson.Doc
	for f := range updated {
		var d bson.Builder
		it := old.Iter()
		for it.Next() {
			e := it.Element()
			if e.Key == fmt.Sprintf("field%d", f) {
				d.AppendString(e.Key, strings.Repeat("z", 100))
			} else {
				d.AppendElement(e)
			}
		}
		updated[f] = d.Finish()
	}
	benchLog(b, func(l *oplog.Log, tx *kv.Tx, coll *catalog.Collection, i int) error {
		return l.Update(tx, coll, old, updated[i%len(updated)], nil)
	})
}
