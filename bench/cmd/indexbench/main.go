// Command indexbench reproduces MongoDB's SERVER-16908 index-build table
// against cairnd: insert N documents (default 500,000) through the official
// Go driver with 4 client goroutines, then build, one at a time, foreground
// indexes of each kind, timing each; and, for each build, the floor on this
// machine: the time to scan the collection and sort its keys in memory,
// measured in-process on the same data directory after the server stops
// (the median of three runs after a warm-up scan).
//
//	go run ./cmd/indexbench -docs 500000
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/bench/internal/cairndproc"
	cbson "github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/kv"
)

var words = strings.Fields(`the quick brown fox jumps over lazy dog database index build sort merge
scan key value tree page journal commit durable fast slow read write query plan cursor batch
document field array string number random unique sparse hashed text search stem word`)

// concurrent is the -concurrent flag.
var concurrent bool

// writeStats is what the concurrent writer saw during one build.
type writeStats struct {
	n       int
	longest time.Duration
}

// writeDuring updates random documents ($inc of a field no index holds),
// one at a time, until stop is closed.
func writeDuring(ctx context.Context, coll *mongo.Collection, n int, stop chan struct{}, out chan<- writeStats) {
	rng := rand.New(rand.NewPCG(9, 9))
	var ws writeStats
	for {
		select {
		case <-stop:
			out <- ws
			return
		default:
		}
		t0 := time.Now()
		if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: rng.IntN(n)}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "w", Value: 1}}}}); err != nil {
			fmt.Fprintln(os.Stderr, "concurrent write:", err)
		}
		ws.n++
		ws.longest = max(ws.longest, time.Since(t0))
	}
}

type build struct {
	name string
	spec bson.D
}

var builds = []build{
	{"build_fg_ascending", bson.D{{Key: "key", Value: bson.D{{Key: "inc", Value: 1}}}, {Key: "name", Value: "inc_1"}}},
	{"build_fg_descending", bson.D{{Key: "key", Value: bson.D{{Key: "inc", Value: -1}}}, {Key: "name", Value: "inc_-1"}}},
	{"build_fg_random", bson.D{{Key: "key", Value: bson.D{{Key: "rnd", Value: 1}}}, {Key: "name", Value: "rnd_1"}}},
	{"build_fg_unique", bson.D{{Key: "key", Value: bson.D{{Key: "uniq", Value: 1}}}, {Key: "name", Value: "uniq_1"}, {Key: "unique", Value: true}}},
	{"build_fg_sparse", bson.D{{Key: "key", Value: bson.D{{Key: "half", Value: 1}}}, {Key: "name", Value: "half_1"}, {Key: "sparse", Value: true}}},
	{"build_fg_multikey", bson.D{{Key: "key", Value: bson.D{{Key: "arr", Value: 1}}}, {Key: "name", Value: "arr_1"}}},
	{"build_fg_string", bson.D{{Key: "key", Value: bson.D{{Key: "str", Value: 1}}}, {Key: "name", Value: "str_1"}}},
	{"build_fg_text", bson.D{{Key: "key", Value: bson.D{{Key: "text", Value: "text"}}}, {Key: "name", Value: "text_text"}}},
	{"build_fg_hashed", bson.D{{Key: "key", Value: bson.D{{Key: "h", Value: "hashed"}}}, {Key: "name", Value: "h_hashed"}}},
}

func main() {
	docs := flag.Int("docs", 500000, "documents to insert")
	clients := flag.Int("clients", 4, "client goroutines for the insert phase")
	bin := flag.String("cairnd", "", "cairnd binary (default: build ../cmd/cairnd)")
	dir := flag.String("dir", "", "data directory (default: a new temporary one)")
	flag.BoolVar(&concurrent, "concurrent", false, "during each build, update documents from another client and report how long the longest write waited")
	kinds := flag.String("kinds", "", "comma-separated builds to run, by the name after build_fg_ (default: all)")
	repeat := flag.Int("repeat", 1, "build each index this many times, reporting the median")
	serverArgs := flag.String("serverargs", "", "extra cairnd flags, space-separated (e.g. --cpuprofile=/tmp/cairnd.prof)")
	flag.Parse()
	if *kinds != "" {
		builds = slices.DeleteFunc(builds, func(b build) bool {
			return !slices.Contains(strings.Split(*kinds, ","), strings.TrimPrefix(b.name, "build_fg_"))
		})
	}
	if err := run(*docs, *clients, max(*repeat, 1), *bin, *dir, strings.Fields(*serverArgs)); err != nil {
		fmt.Fprintln(os.Stderr, "indexbench:", err)
		os.Exit(1)
	}
}

func run(n, clients, repeat int, bin, dir string, serverArgs []string) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "indexbench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	ctx := context.Background()
	srv, err := cairndproc.Start(ctx, cairndproc.Options{Binary: bin, Dir: dir, Args: serverArgs})
	if err != nil {
		return err
	}
	defer srv.Stop()
	dbpath := srv.DBPath
	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI).SetTimeout(10 * time.Minute))
	if err != nil {
		return err
	}
	coll := client.Database("bench").Collection("docs")
	results := map[string]time.Duration{}
	cpu := map[string]time.Duration{} // the server's CPU time per step
	var order []string

	// Insert phase: batches of 1,000 from each client goroutine.
	cpu0 := cairndproc.CPU(srv.Pid())
	start := time.Now()
	var done atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, clients)
	stop := make(chan struct{})
	go progress(&done, n, stop)
	per := (n + clients - 1) / clients
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 16908))
			lo, hi := c*per, min((c+1)*per, n)
			batch := make([]any, 0, 1000)
			for i := lo; i < hi; i++ {
				batch = append(batch, doc(i, rng))
				if len(batch) == cap(batch) || i == hi-1 {
					if _, err := coll.InsertMany(ctx, batch); err != nil {
						errc <- err
						return
					}
					done.Add(int64(len(batch)))
					batch = batch[:0]
				}
			}
		}(c)
	}
	wg.Wait()
	close(stop)
	select {
	case err := <-errc:
		return fmt.Errorf("insert: %w", err)
	default:
	}
	results[fmt.Sprintf("insert_%d_docs", n)] = time.Since(start)
	cpu[fmt.Sprintf("insert_%d_docs", n)] = cairndproc.CPU(srv.Pid()) - cpu0
	order = append(order, fmt.Sprintf("insert_%d_docs", n))
	fmt.Fprintf(os.Stderr, "\rinserted %d documents in %v (%.0f docs/s)\n", n, time.Since(start).Round(time.Millisecond), float64(n)/time.Since(start).Seconds())

	// The insert phase leaves the last inserts in the journal and in
	// memory; a build commits through a checkpoint, which would write them
	// too. fsync checkpoints them first, timed on a row of its own, so
	// that each build's time is the build's.
	c0, t0 := cairndproc.CPU(srv.Pid()), time.Now()
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "fsync", Value: 1}}).Err(); err != nil {
		return fmt.Errorf("fsync after the inserts: %w", err)
	}
	results["fsync_after_insert"], cpu["fsync_after_insert"] = time.Since(t0), cairndproc.CPU(srv.Pid())-c0
	order = append(order, "fsync_after_insert")

	// Build phase: one index at a time, dropped after timing; with
	// -repeat, the kinds take turns and each reports its median run.
	notes := map[string]string{}
	writes := map[string]writeStats{}
	type timing struct{ wall, cpu time.Duration }
	runs := map[string][]timing{}
	for r := 0; r < repeat; r++ {
		for _, b := range builds {
			if _, failed := notes[b.name]; failed {
				continue
			}
			var stopW chan struct{}
			wout := make(chan writeStats, 1)
			if concurrent {
				stopW = make(chan struct{})
				go writeDuring(ctx, coll, n, stopW, wout)
			}
			c0, t0 := cairndproc.CPU(srv.Pid()), time.Now()
			err := client.Database("bench").RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "docs"}, {Key: "indexes", Value: bson.A{b.spec}}}).Err()
			el := time.Since(t0)
			if concurrent {
				close(stopW)
				writes[b.name] = <-wout
			}
			if r == 0 {
				order = append(order, b.name)
			}
			if err != nil {
				notes[b.name] = err.Error()
				fmt.Fprintf(os.Stderr, "%s: %v\n", b.name, err)
				continue
			}
			runs[b.name] = append(runs[b.name], timing{el, cairndproc.CPU(srv.Pid()) - c0})
			fmt.Fprintf(os.Stderr, "%s: %v\n", b.name, el.Round(time.Millisecond))
			name := b.spec[1].Value.(string)
			if err := coll.Indexes().DropOne(ctx, name); err != nil {
				return err
			}
		}
	}
	for name, ts := range runs {
		if _, failed := notes[name]; failed {
			continue
		}
		slices.SortFunc(ts, func(a, b timing) int { return cmp.Compare(a.wall, b.wall) })
		results[name], cpu[name] = ts[len(ts)/2].wall, ts[len(ts)/2].cpu
	}
	client.Disconnect(ctx)
	srv.Stop()

	// Floors: scan and sort each index's keys in memory, in-process.
	floors, err := measureFloors(dbpath)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	fmt.Printf("# SERVER-16908 index builds on cairnd\n\n- Date: %s\n- Machine: %s, %d CPUs\n- Command: `go run ./cmd/indexbench %s` (in bench/)\n\n", time.Now().UTC().Format(time.RFC3339), host, nproc(), strings.Join(os.Args[1:], " "))
	if concurrent {
		fmt.Printf("| step | ms | floor: scan + sort in memory (ms) | build ÷ floor | server CPU (ms) | concurrent updates |\n|---|---:|---:|---:|---:|---|\n")
	} else {
		fmt.Printf("| step | ms | floor: scan + sort in memory (ms) | build ÷ floor | server CPU (ms) |\n|---|---:|---:|---:|---:|\n")
	}
	for _, name := range order {
		d, ok := results[name]
		if !ok {
			fmt.Printf("| %s | — (%s) | | | |\n", name, notes[name])
			continue
		}
		if f, ok := floors[name]; ok {
			fmt.Printf("| %s | %d | %d | %.2f× | %d |", name, d.Milliseconds(), f.Milliseconds(), float64(d)/float64(f), cpu[name].Milliseconds())
			if ws, ok := writes[name]; ok {
				fmt.Printf(" %d writes during the build, longest %d ms |", ws.n, ws.longest.Milliseconds())
			}
			fmt.Println()
		} else {
			fmt.Printf("| %s | %d | | | %d |\n", name, d.Milliseconds(), cpu[name].Milliseconds())
		}
	}
	fmt.Printf("\nInsert rate: %.0f documents per second (%d client goroutines, InsertMany of 1,000, default write concern).\n", float64(n)/results[order[0]].Seconds(), clients)
	return nil
}

func doc(i int, rng *rand.Rand) bson.D {
	d := bson.D{{Key: "_id", Value: i}, {Key: "inc", Value: i}, {Key: "rnd", Value: rng.Int64()}, {Key: "uniq", Value: fmt.Sprintf("u%09d", i)}}
	if i%2 == 0 {
		d = append(d, bson.E{Key: "half", Value: i})
	}
	arr := make(bson.A, 10)
	for j := range arr {
		arr[j] = rng.IntN(1000000)
	}
	var text strings.Builder
	for j := 0; j < 30; j++ {
		if j > 0 {
			text.WriteByte(' ')
		}
		text.WriteString(words[rng.IntN(len(words))])
	}
	return append(d, bson.E{Key: "arr", Value: arr}, bson.E{Key: "str", Value: fmt.Sprintf("%016x", rng.Uint64())},
		bson.E{Key: "text", Value: text.String()}, bson.E{Key: "h", Value: rng.Int64()})
}

func progress(done *atomic.Int64, n int, stop chan struct{}) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			d := done.Load()
			w := 40 * int(d) / n
			fmt.Fprintf(os.Stderr, "\rinsert [%s%s] %d/%d", strings.Repeat("#", w), strings.Repeat(".", 40-w), d, n)
		}
	}
}

// floorRuns is how many times each floor is measured (the median is
// reported).
const floorRuns = 3

// measureFloors measures, for each index kind, one scan of the collection
// extracting its keys with the index package and an in-memory sort of
// them (as the build does, without writing anything): after one warm-up
// scan, floorRuns times each, the kinds taking turns, reporting the median.
//
// The floor runs with cairnd's garbage-collector pacing (Go's default,
// see cmd/cairnd/gc.go; GOGC in the environment applies to both), so
// that build and floor pay the same for collection.
func measureFloors(dbpath string) (map[string]time.Duration, error) {
	db, err := kv.Open(dbpath, &kv.Options{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", dbpath, err)
	}
	defer db.Close()
	runs := map[string][]time.Duration{}
	err = db.View(func(tx *kv.Tx) error {
		coll, err := catalog.Get(tx, "bench", "docs")
		if err != nil || coll == nil {
			return fmt.Errorf("collection: %v", err)
		}
		data, err := tx.Tree(coll.DataTree())
		if err != nil {
			return err
		}
		// Warm-up: read every document once.
		n := 0
		cur := data.Cursor()
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			n += len(v)
		}
		for r := 0; r < floorRuns; r++ {
			for _, b := range builds {
				raw, _ := bson.Marshal(b.spec)
				spec, err := index.Parse(cbson.Doc(raw))
				if err != nil {
					continue
				}
				t0 := time.Now()
				if _, err := index.SortKeysInMemory(spec, data); err != nil {
					return err
				}
				runs[b.name] = append(runs[b.name], time.Since(t0))
			}
		}
		return nil
	})
	out := map[string]time.Duration{}
	for name, ds := range runs {
		slices.Sort(ds)
		out[name] = ds[len(ds)/2]
	}
	return out, err
}

func nproc() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "processor\t:")
}
