// Command clickbench runs ClickBench's 43 MongoDB aggregation pipelines
// against cairnd over a deterministic synthetic hits table, checks every
// answer against an independent computation in plain Go over the same
// rows, and reports the times in ClickBench's shape (Q0: [t1, t2, t3]).
//
// Steps: generate -rows rows (seeded) as TSV; start cairnd; load the TSV
// with `cairn import --type tsv --columnsHaveTypes --fieldFile ...`
// (-loader driver inserts through the Go driver instead); create
// ClickBench's 15 indexes; run each pipeline -runs times with
// allowDiskUse: true; check the first run's answer; write
// NAME.md, NAME.json and NAME.png to -out.
//
// The generated table has hits' 105 columns. ClickBench's MongoDB pipelines
// filter and sum on IsRefresh where the SQL has Refresh, a column hits does
// not have; with -isrefresh (default) the generator adds IsRefresh equal to
// Refresh, so that Q30-Q32 and Q36-Q42 select what the SQL selects.
//
//	go run ./cmd/clickbench -rows 1000000 -out results -name clickbench-1m
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

type config struct {
	rows       int
	seed       uint64
	dir        string
	cairnd     string
	cairn      string
	loader     string
	workers    int
	queries    []int
	runs       int
	check      bool
	out, name  string
	isRefresh  bool
	inproc     bool
	cpuprofile string
	keep       bool
	reuse      bool
	uri        string
	cacheGB    float64
	versus     string
	duckdb     bool
	colstore   bool
	serverArgs []string
}

func main() {
	var c config
	var qs string
	flag.IntVar(&c.rows, "rows", 1000000, "rows to generate")
	flag.Uint64Var(&c.seed, "seed", 1, "generator seed")
	flag.StringVar(&c.dir, "dir", "", "working directory for the TSV and the data (default: a new temporary one)")
	flag.StringVar(&c.cairnd, "cairnd", "", "cairnd binary (default: built from ../cmd/cairnd)")
	flag.StringVar(&c.cairn, "cairn", "", "cairn tool binary for the import (default: built from ../cmd/cairn)")
	flag.StringVar(&c.loader, "loader", "import", "how to load: import (cairn import) or driver (InsertMany)")
	flag.IntVar(&c.workers, "workers", 2, "insertion workers (--numInsertionWorkers)")
	flag.StringVar(&qs, "queries", "", "queries to run, e.g. 0,3,10-12 (default: all 43)")
	flag.IntVar(&c.runs, "runs", 3, "runs per query")
	flag.BoolVar(&c.check, "check", true, "check each query's answer against the Go oracle")
	flag.StringVar(&c.out, "out", ".", "directory for NAME.md, NAME.json, NAME.png")
	flag.StringVar(&c.name, "name", "clickbench", "base name of the result files")
	flag.BoolVar(&c.isRefresh, "isrefresh", true, "add the IsRefresh column the pipelines use (equal to Refresh)")
	flag.BoolVar(&c.inproc, "inproc", false, "run the server inside this process (for -cpuprofile)")
	flag.StringVar(&c.cpuprofile, "cpuprofile", "", "with -inproc: write a CPU profile of the query runs to this file")
	flag.BoolVar(&c.keep, "keep", false, "keep the working directory")
	flag.BoolVar(&c.reuse, "reuse", false, "with -dir: keep a hits collection loaded by an earlier run with the same -rows")
	flag.Float64Var(&c.cacheGB, "cacheGB", 8, "cairnd --wiredTigerCacheSizeGB (the storage engine's cache; 0: its default of 1 GiB)")
	flag.StringVar(&c.uri, "uri", "", "use this already loaded server (skips generation's load and the indexes)")
	flag.StringVar(&c.versus, "versus", "", "a second cairnd binary to compare with: it serves its own copy of the table (DIR/versus), and the two servers take turns run by run (A B B A ...)")
	flag.BoolVar(&c.duckdb, "duckdb", false, "also load the rows into DuckDB (embedded, DIR/duck.db) and run ClickBench's DuckDB SQL, with as many threads as cores")
	flag.BoolVar(&c.colstore, "columnstore", false, "also create a column store index ({\"$**\": \"columnstore\"}) after the 15 indexes")
	serverArgs := flag.String("cairndArgs", "", "more cairnd options, separated by spaces (e.g. --columnCacheSizeGB=-1 for the row path)")
	render := flag.String("render", "", "re-render NAME.md and NAME.png from a report JSON file; runs nothing")
	flag.Parse()
	if *render != "" {
		if err := renderReport(*render, c.out, c.name); err != nil {
			fmt.Fprintln(os.Stderr, "clickbench:", err)
			os.Exit(1)
		}
		return
	}
	c.serverArgs = strings.Fields(*serverArgs)
	if c.inproc && len(c.serverArgs) > 0 {
		fmt.Fprintln(os.Stderr, "clickbench: -cairndArgs needs a cairnd process (not -inproc)")
		os.Exit(2)
	}
	var err error
	if c.queries, err = parseQueries(qs, len(queryText)); err != nil {
		fmt.Fprintln(os.Stderr, "clickbench:", err)
		os.Exit(2)
	}
	rep, err := run(context.Background(), &c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "clickbench:", err)
		os.Exit(1)
	}
	if rep.Mismatches > 0 {
		os.Exit(1)
	}
}

// parseQueries reads "0,3,10-12" (empty: all n queries).
func parseQueries(s string, n int) ([]int, error) {
	if s == "" {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, found := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("bad -queries %q", s)
		}
		b := a
		if found {
			if b, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("bad -queries %q", s)
			}
		}
		if a < 0 || b >= n || a > b {
			return nil, fmt.Errorf("-queries: %q out of 0-%d", part, n-1)
		}
		for q := a; q <= b; q++ {
			out = append(out, q)
		}
	}
	return out, nil
}

func run(ctx context.Context, c *config) (*report, error) {
	if c.dir == "" {
		d, err := os.MkdirTemp("", "clickbench-")
		if err != nil {
			return nil, err
		}
		if !c.keep {
			defer os.RemoveAll(d)
		}
		c.dir = d
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return nil, err
	}
	rep := &report{Rows: c.rows, Seed: c.seed, Date: time.Now().UTC().Format(time.RFC3339), GoVersion: runtime.Version(),
		Machine: machine(), Command: "clickbench " + strings.Join(os.Args[1:], " "), Loader: c.loader}
	tsv := filepath.Join(c.dir, "hits.tsv")
	t0 := time.Now()
	hits, err := generate(tsv, c.seed, c.rows, c.isRefresh, c.check)
	if err != nil {
		return nil, err
	}
	rep.GenerateSeconds = time.Since(t0).Seconds()
	fmt.Printf("generated %d rows in %.1f s\n", c.rows, rep.GenerateSeconds)

	srv, err := startServer(ctx, c)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	cl, err := connect(ctx, srv.uri)
	if err != nil {
		return nil, err
	}
	defer cl.Disconnect(context.Background())
	if c.uri == "" {
		if err := prepare(ctx, c, srv, cl, tsv, rep); err != nil {
			return nil, err
		}
	}
	targets := []target{{srv: srv, cl: cl, out: &rep.Queries}}
	if c.versus != "" {
		// The second server loads its own copy of the table; its load
		// figures are not reported.
		vc := *c
		vc.dir, vc.cairnd, vc.inproc, vc.uri = filepath.Join(c.dir, "versus"), c.versus, false, ""
		if err := os.MkdirAll(vc.dir, 0o755); err != nil {
			return nil, err
		}
		vs, err := startServer(ctx, &vc)
		if err != nil {
			return nil, err
		}
		defer vs.stop()
		vcl, err := connect(ctx, vs.uri)
		if err != nil {
			return nil, err
		}
		defer vcl.Disconnect(context.Background())
		if err := prepare(ctx, &vc, vs, vcl, tsv, &report{}); err != nil {
			return nil, fmt.Errorf("versus server: %w", err)
		}
		rep.VersusBinary = c.versus
		targets = append(targets, target{srv: vs, cl: vcl, out: &rep.Versus, label: "versus "})
	}
	var duck *duckPeer
	if c.duckdb {
		if duck, err = loadDuck(ctx, c.dir, tsv, c.isRefresh, runtime.NumCPU(), rep); err != nil {
			return nil, err
		}
		defer duck.close()
	}
	os.Remove(tsv)
	if err := dataSize(ctx, cl, srv, rep); err != nil {
		return nil, err
	}
	fmt.Printf("load: import %.1f s, indexes %.1f s, total %.1f s; data %.1f MiB (BSON %.1f MiB), on disk %.1f MiB\n",
		rep.ImportSeconds, rep.IndexSeconds, rep.ImportSeconds+rep.IndexSeconds,
		float64(rep.StorageBytes)/(1<<20), float64(rep.DataBytes)/(1<<20), float64(rep.DiskBytes)/(1<<20))
	var or *oracle
	if c.check {
		or = &oracle{hits: hits, isRefresh: c.isRefresh}
	}
	stopProfile, err := srv.startProfile(c.cpuprofile)
	if err != nil {
		return nil, err
	}
	err = runQueries(ctx, c, targets, or, rep)
	stopProfile()
	if err != nil {
		return nil, err
	}
	if duck != nil {
		if err := duck.run(ctx, c, rep); err != nil {
			return nil, err
		}
	}
	if err := rep.write(c.out, c.name); err != nil {
		return nil, err
	}
	return rep, nil
}

// prepare loads the table into the server unless -reuse finds it loaded by
// an earlier run in c.dir, and records the load figures in rep.
func prepare(ctx context.Context, c *config, srv *cairnServer, cl *mongo.Client, tsv string, rep *report) error {
	if c.reuse {
		if n, err := cl.Database("test").Collection("hits").EstimatedDocumentCount(ctx); err == nil && n == int64(c.rows) {
			fmt.Printf("reusing the %d rows loaded in %s\n", n, c.dir)
			if err := rep.readLoad(filepath.Join(c.dir, "load.json")); err != nil {
				fmt.Printf("no load figures of the earlier run: %v\n", err)
			}
			return nil
		}
	}
	if err := load(ctx, c, srv, cl, tsv, rep); err != nil {
		return err
	}
	return rep.writeLoad(filepath.Join(c.dir, "load.json"))
}

// renderReport rewrites the markdown and chart of a saved report.
func renderReport(path, out, name string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		return err
	}
	return rep.write(out, name)
}
