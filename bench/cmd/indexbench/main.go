// Command indexbench reproduces MongoDB's SERVER-16908 index-build table
// against cairnd: insert N documents (default 500,000) through the official
// Go driver with 4 client goroutines, then build, one at a time, foreground
// indexes of each kind, timing each; and, for each build, the floor on this
// machine: the time to scan the collection and sort its keys in memory,
// measured in-process on the same data directory after the server stops
// (the median of three runs after a warm-up scan).
//
// With -versus, a second cairnd binary gets the same documents and the
// same builds, the two servers taking turns build by build, and a second
// table; -json writes both servers' steps for bench/cmd/pgocompare.
//
//	go run ./cmd/indexbench -docs 500000
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
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
	versus := flag.String("versus", "", "a second cairnd binary to compare with: it gets the same documents, and the two servers take turns build by build")
	jsonPath := flag.String("json", "", "also write every server's steps (ms and server CPU ms) to this JSON file")
	serverArgs := flag.String("serverargs", "", "extra cairnd flags, space-separated (e.g. --cpuprofile=/tmp/cairnd.prof)")
	flag.Parse()
	if *kinds != "" {
		builds = slices.DeleteFunc(builds, func(b build) bool {
			return !slices.Contains(strings.Split(*kinds, ","), strings.TrimPrefix(b.name, "build_fg_"))
		})
	}
	if err := run(*docs, *clients, max(*repeat, 1), *bin, *versus, *dir, strings.Fields(*serverArgs), *jsonPath); err != nil {
		fmt.Fprintln(os.Stderr, "indexbench:", err)
		os.Exit(1)
	}
}

// side is one server under test and its figures.
type side struct {
	label   string // "" for -cairnd, "versus" for -versus
	binary  string
	srv     *cairndproc.Server
	client  *mongo.Client
	coll    *mongo.Collection
	results map[string]time.Duration
	cpu     map[string]time.Duration // the server's CPU time per step
	notes   map[string]string        // the error of a build that failed
	writes  map[string]writeStats
	runs    map[string][]timing
}

type timing struct{ wall, cpu time.Duration }

func startSide(ctx context.Context, label, bin, dir string, serverArgs []string) (*side, error) {
	if err := os.MkdirAll(filepath.Join(dir, "db"), 0o755); err != nil {
		return nil, err
	}
	srv, err := cairndproc.Start(ctx, cairndproc.Options{Binary: bin, Dir: dir, Args: serverArgs})
	if err != nil {
		return nil, err
	}
	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI).SetTimeout(10 * time.Minute))
	if err != nil {
		srv.Stop()
		return nil, err
	}
	return &side{label: label, binary: bin, srv: srv, client: client, coll: client.Database("bench").Collection("docs"),
		results: map[string]time.Duration{}, cpu: map[string]time.Duration{}, notes: map[string]string{},
		writes: map[string]writeStats{}, runs: map[string][]timing{}}, nil
}

func (s *side) stop() {
	s.client.Disconnect(context.Background())
	s.srv.Stop()
}

// step times f as the step name: wall time and the server's CPU time.
func (s *side) step(name string, f func() error) error {
	c0, t0 := cairndproc.CPU(s.srv.Pid()), time.Now()
	if err := f(); err != nil {
		return err
	}
	s.results[name], s.cpu[name] = time.Since(t0), cairndproc.CPU(s.srv.Pid())-c0
	return nil
}

// run inserts n documents into each server (-cairnd's, then -versus's when
// given), then builds each index kind repeat times on each; with two
// servers they take turns build by build (A B, then B A), so that both see
// the same phases of a shared machine.
func run(n, clients, repeat int, bin, versus, dir string, serverArgs []string, jsonPath string) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "indexbench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	ctx := context.Background()
	var sides []*side
	defer func() {
		for _, s := range sides {
			s.stop()
		}
	}()
	for _, x := range []struct{ label, bin, dir string }{{"", bin, dir}, {"versus", versus, filepath.Join(dir, "versus")}} {
		if x.label != "" && versus == "" {
			break
		}
		s, err := startSide(ctx, x.label, x.bin, x.dir, serverArgs)
		if err != nil {
			return err
		}
		sides = append(sides, s)
	}
	dbpath := sides[0].srv.DBPath
	insertStep := fmt.Sprintf("insert_%d_docs", n)
	order := []string{insertStep, "fsync_after_insert"}
	for _, s := range sides {
		if err := s.step(insertStep, func() error { return insert(ctx, s.coll, n, clients) }); err != nil {
			return fmt.Errorf("insert: %w", err)
		}
		fmt.Fprintf(os.Stderr, "\r%sinserted %d documents in %v (%.0f docs/s)\n", prefix(s), n, s.results[insertStep].Round(time.Millisecond), float64(n)/s.results[insertStep].Seconds())
		// The insert phase leaves the last inserts in the journal and in
		// memory; a build commits through a checkpoint, which would write
		// them too. fsync checkpoints them first, timed on a row of its
		// own, so that each build's time is the build's.
		if err := s.step("fsync_after_insert", func() error {
			return s.client.Database("admin").RunCommand(ctx, bson.D{{Key: "fsync", Value: 1}}).Err()
		}); err != nil {
			return fmt.Errorf("fsync after the inserts: %w", err)
		}
	}

	// Build phase: one index at a time, dropped after timing; with
	// -repeat, the kinds take turns and each reports its median run.
	for _, b := range builds {
		order = append(order, b.name)
	}
	for r := 0; r < repeat; r++ {
		for bi, b := range builds {
			for k := range sides {
				i := k
				if (r+bi)%2 == 1 {
					i = len(sides) - 1 - k
				}
				if err := sides[i].build(ctx, b, n); err != nil {
					return err
				}
			}
		}
	}
	for _, s := range sides {
		for name, ts := range s.runs {
			slices.SortFunc(ts, func(a, b timing) int { return cmp.Compare(a.wall, b.wall) })
			s.results[name], s.cpu[name] = ts[len(ts)/2].wall, ts[len(ts)/2].cpu
		}
		s.stop()
	}
	stopped := sides
	sides = nil // the deferred stop has nothing left to do

	// Floors: scan and sort each index's keys in memory, in-process, on
	// the first server's data (the same documents as the second's).
	floors, err := measureFloors(dbpath)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	fmt.Printf("# SERVER-16908 index builds on cairnd\n\n- Date: %s\n- Machine: %s, %d CPUs\n- Command: `go run ./cmd/indexbench %s` (in bench/)\n\n", time.Now().UTC().Format(time.RFC3339), host, nproc(), strings.Join(os.Args[1:], " "))
	for _, s := range stopped {
		if s.label != "" {
			fmt.Printf("\n## %s: %s\n\n", s.label, s.binary)
		}
		s.table(order, floors, clients, n)
	}
	if jsonPath != "" {
		return writeJSON(jsonPath, stopped, order)
	}
	return nil
}

func prefix(s *side) string {
	if s.label == "" {
		return ""
	}
	return s.label + ": "
}

// build builds one index on the side's server, times it and drops it.
func (s *side) build(ctx context.Context, b build, n int) error {
	if _, failed := s.notes[b.name]; failed {
		return nil
	}
	var stopW chan struct{}
	wout := make(chan writeStats, 1)
	if concurrent {
		stopW = make(chan struct{})
		go writeDuring(ctx, s.coll, n, stopW, wout)
	}
	c0, t0 := cairndproc.CPU(s.srv.Pid()), time.Now()
	err := s.client.Database("bench").RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "docs"}, {Key: "indexes", Value: bson.A{b.spec}}}).Err()
	el := time.Since(t0)
	if concurrent {
		close(stopW)
		s.writes[b.name] = <-wout
	}
	if err != nil {
		s.notes[b.name] = err.Error()
		fmt.Fprintf(os.Stderr, "%s%s: %v\n", prefix(s), b.name, err)
		return nil
	}
	s.runs[b.name] = append(s.runs[b.name], timing{el, cairndproc.CPU(s.srv.Pid()) - c0})
	fmt.Fprintf(os.Stderr, "%s%s: %v\n", prefix(s), b.name, el.Round(time.Millisecond))
	return s.coll.Indexes().DropOne(ctx, b.spec[1].Value.(string))
}

// insert inserts n documents in batches of 1,000 from each of clients
// goroutines.
func insert(ctx context.Context, coll *mongo.Collection, n, clients int) error {
	var done atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, clients)
	stop := make(chan struct{})
	go progress(&done, n, stop)
	defer close(stop)
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
	select {
	case err := <-errc:
		return err
	default:
		return nil
	}
}

// table prints the side's steps as a markdown table.
func (s *side) table(order []string, floors map[string]time.Duration, clients, n int) {
	if concurrent {
		fmt.Printf("| step | ms | floor: scan + sort in memory (ms) | build ÷ floor | server CPU (ms) | concurrent updates |\n|---|---:|---:|---:|---:|---|\n")
	} else {
		fmt.Printf("| step | ms | floor: scan + sort in memory (ms) | build ÷ floor | server CPU (ms) |\n|---|---:|---:|---:|---:|\n")
	}
	for _, name := range order {
		d, ok := s.results[name]
		if !ok {
			fmt.Printf("| %s | — (%s) | | | |\n", name, s.notes[name])
			continue
		}
		if f, ok := floors[name]; ok {
			fmt.Printf("| %s | %d | %d | %.2f× | %d |", name, d.Milliseconds(), f.Milliseconds(), float64(d)/float64(f), s.cpu[name].Milliseconds())
			if ws, ok := s.writes[name]; ok {
				fmt.Printf(" %d writes during the build, longest %d ms |", ws.n, ws.longest.Milliseconds())
			}
			fmt.Println()
		} else {
			fmt.Printf("| %s | %d | | | %d |\n", name, d.Milliseconds(), s.cpu[name].Milliseconds())
		}
	}
	fmt.Printf("\nInsert rate: %.0f documents per second (%d client goroutines, InsertMany of 1,000, default write concern).\n", float64(n)/s.results[order[0]].Seconds(), clients)
}

// writeJSON writes every side's steps (wall and server CPU milliseconds)
// to path, for programs that compare builds (bench/cmd/pgocompare).
func writeJSON(path string, sides []*side, order []string) error {
	type stepJSON struct {
		Name  string  `json:"name"`
		MS    float64 `json:"ms"`
		CPUMS float64 `json:"cpu_ms"`
	}
	type sideJSON struct {
		Label  string     `json:"label"`
		Binary string     `json:"binary"`
		Steps  []stepJSON `json:"steps"`
	}
	var out []sideJSON
	for _, s := range sides {
		sj := sideJSON{Label: s.label, Binary: s.binary}
		for _, name := range order {
			if d, ok := s.results[name]; ok {
				sj.Steps = append(sj.Steps, stepJSON{name, float64(d.Microseconds()) / 1000, float64(s.cpu[name].Microseconds()) / 1000})
			}
		}
		out = append(out, sj)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
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
