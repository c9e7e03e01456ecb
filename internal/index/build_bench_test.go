package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/kv"
)

// Index build benchmarks over documents shaped like bench/cmd/indexbench's
// (CAIRN_BUILD_DOCS documents, default 100,000): BenchmarkBuild/<kind>
// runs BuildAll (scan, sort, bulk load; the transaction is rolled back),
// BenchmarkBuildFloor/<kind> only scans, extracts keys and sorts them.

var benchKinds = []struct {
	name string
	spec dbson.D
}{
	{"ascending", dbson.D{{Key: "key", Value: dbson.D{{Key: "inc", Value: 1}}}}},
	{"random", dbson.D{{Key: "key", Value: dbson.D{{Key: "rnd", Value: 1}}}}},
	{"unique", dbson.D{{Key: "key", Value: dbson.D{{Key: "rnd", Value: 1}}}, {Key: "unique", Value: true}}},
	{"sparse", dbson.D{{Key: "key", Value: dbson.D{{Key: "half", Value: 1}}}, {Key: "sparse", Value: true}}},
	{"multikey", dbson.D{{Key: "key", Value: dbson.D{{Key: "arr", Value: 1}}}}},
	{"string", dbson.D{{Key: "key", Value: dbson.D{{Key: "str", Value: 1}}}}},
	{"text", dbson.D{{Key: "key", Value: dbson.D{{Key: "text", Value: "text"}}}}},
	{"hashed", dbson.D{{Key: "key", Value: dbson.D{{Key: "h", Value: "hashed"}}}}},
}

var benchDB struct {
	once sync.Once
	db   *kv.DB
	err  error
}

func benchData(b *testing.B) *kv.DB {
	benchDB.once.Do(func() {
		n := 100000
		if s := os.Getenv("CAIRN_BUILD_DOCS"); s != "" {
			n, _ = strconv.Atoi(s)
		}
		dir, err := os.MkdirTemp("", "buildbench-")
		if err != nil {
			benchDB.err = err
			return
		}
		db, err := kv.Open(dir, nil)
		if err != nil {
			benchDB.err = err
			return
		}
		words := strings.Fields("the quick brown fox jumps over lazy dog database index build sort merge scan key value tree page journal commit durable fast slow read write query plan cursor batch document field array string number random unique sparse hashed text search stem word")
		rng := rand.New(rand.NewPCG(1, 2))
		i := 0
		benchDB.err = db.Update(context.Background(), func(tx *kv.Tx) error {
			_, err := tx.BulkLoad("data", func() ([]byte, []byte, bool, error) {
				if i == n {
					return nil, nil, false, nil
				}
				d := dbson.D{{Key: "_id", Value: i}, {Key: "inc", Value: i}, {Key: "rnd", Value: rng.Int64()}}
				if i%2 == 0 {
					d = append(d, dbson.E{Key: "half", Value: i})
				}
				arr := make(dbson.A, 10)
				for j := range arr {
					arr[j] = rng.IntN(1000000)
				}
				var text strings.Builder
				for j := 0; j < 30; j++ {
					text.WriteString(words[rng.IntN(len(words))] + " ")
				}
				d = append(d, dbson.E{Key: "arr", Value: arr}, dbson.E{Key: "str", Value: fmt.Sprintf("%016x", rng.Uint64())},
					dbson.E{Key: "text", Value: text.String()}, dbson.E{Key: "h", Value: rng.Int64()})
				raw, err := dbson.Marshal(d)
				if err != nil {
					return nil, nil, false, err
				}
				v, _ := bson.Doc(raw).Lookup("_id")
				i++
				return bson.AppendKey(nil, v, false), raw, true, nil
			}, 0)
			return err
		})
		benchDB.db = db
	})
	if benchDB.err != nil {
		b.Fatal(benchDB.err)
	}
	return benchDB.db
}

func BenchmarkBuild(b *testing.B) { benchBuild(b, nil, BuildOptions{}) }

// BenchmarkBuildSpill builds the random and string indexes with a 4 MB
// memory budget, so that the runs spill to files and the load merges them.
func BenchmarkBuildSpill(b *testing.B) {
	benchBuild(b, []string{"random", "string"}, BuildOptions{MemoryBudget: 4 << 20, TempDir: b.TempDir()})
}

// benchBuild builds each of benchKinds (those named in only, if any) with
// opts, in a transaction it rolls back.
func benchBuild(b *testing.B, only []string, opts BuildOptions) {
	db := benchData(b)
	for _, k := range benchKinds {
		if only != nil && !slices.Contains(only, k.name) {
			continue
		}
		raw, _ := dbson.Marshal(k.spec)
		spec, err := Parse(bson.Doc(raw))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(k.name, func(b *testing.B) {
			for b.Loop() {
				tx, err := db.BeginWrite(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				data, err := tx.Tree("data")
				if err != nil {
					b.Fatal(err)
				}
				t := []*BuildTarget{{Spec: spec, TreeName: "ix"}}
				if err := BuildAllWith(context.Background(), tx, data, "bench.docs", t, opts); err != nil {
					b.Fatal(err)
				}
				tx.Rollback()
			}
		})
	}
}

func BenchmarkBuildFloor(b *testing.B) {
	db := benchData(b)
	for _, k := range benchKinds {
		raw, _ := dbson.Marshal(k.spec)
		spec, err := Parse(bson.Doc(raw))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(k.name, func(b *testing.B) {
			for b.Loop() {
				err := db.View(func(tx *kv.Tx) error {
					data, err := tx.Tree("data")
					if err != nil {
						return err
					}
					_, err = SortKeysInMemory(spec, data)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
