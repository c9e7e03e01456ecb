// Command ycsb is a YCSB load generator for cairnd (or any MongoDB server)
// that follows YCSB's core workloads: the load phase inserts recordcount
// records {_id: "user"+hash, field0..field9} (10 fields of 100 random
// printable bytes, stored as binary) into ycsb.usertable, and workloads
// A–F run YCSB's operation mixes and request distributions (scrambled
// zipfian 0.99, latest, uniform, hotspot) through the official Go driver,
// each client goroutine with its own connection, as YCSB's MongoDB binding
// issues them: read = find by _id, update = $set of one field, insert =
// insertOne, scan = find {_id: {$gte: key}} sort _id limit n,
// read-modify-write = read then update. The pseudo-workload "ping" runs
// only ping round trips: the ceiling of the same client at the same
// concurrency.
//
// It reports throughput and p50/p95/p99/p99.9 latency per operation type,
// and, given the server's pid, the server's context switches, CPU
// migrations and CPU time per operation from /proc.
//
//	go run ./cmd/ycsb -uri mongodb://127.0.0.1:27017 -recordcount 100000 \
//	    -workloads ping,a,b,c,f,d,e -threads 1,8,40,80 -pid $(pidof cairnd) -out results -name ycsb
//
// bench/ycsb.sh builds and starts cairnd and runs the whole matrix.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

type flags struct {
	uri         string
	records     int64
	opCount     int64
	opOverrides string
	workloads   string
	threads     string
	loadThreads int
	skipLoad    bool
	loadOnly    bool
	repeat      int
	interleave  bool
	maxTime     time.Duration
	pid         int
	out, name   string
	label       string
	render      string
	seed        uint64
	dist        string
	initiate    string
	raftStats   bool
}

func main() {
	var f flags
	flag.StringVar(&f.uri, "uri", "mongodb://127.0.0.1:27017/?directConnection=true", "server connection string")
	flag.Int64Var(&f.records, "recordcount", 100000, "records loaded (and the key space of the workloads)")
	flag.Int64Var(&f.opCount, "operationcount", 50000, "operations per run")
	flag.StringVar(&f.opOverrides, "ops", "", "per-workload operation counts overriding -operationcount, e.g. e=10000,ping=100000")
	flag.StringVar(&f.workloads, "workloads", "ping,a,b,c,f,d,e", "workloads to run at each client count, in order (a-f, ping)")
	flag.StringVar(&f.threads, "threads", "1,8,40,80", "client goroutines (each with its own connection), comma-separated")
	flag.IntVar(&f.loadThreads, "loadthreads", 8, "client goroutines of the load phase")
	flag.BoolVar(&f.skipLoad, "skipload", false, "use the records already loaded (recordcount must match)")
	flag.BoolVar(&f.loadOnly, "loadonly", false, "run only the load phase")
	flag.BoolVar(&f.interleave, "interleave", false, "with -repeat: alternate the client counts within each repetition (for comparing them under a changing machine load)")
	flag.IntVar(&f.repeat, "repeat", 1, "run the workload list this many times at each client count (figures: the run of median throughput)")
	flag.DurationVar(&f.maxTime, "maxtime", 2*time.Minute, "stop a run after this long even if operations remain (YCSB's maxexecutiontime)")
	flag.IntVar(&f.pid, "pid", 0, "server process id, for scheduler figures from /proc (0: none)")
	flag.StringVar(&f.out, "out", "", "directory for NAME.json, NAME.md and NAME-*.png (empty: markdown on standard output only)")
	flag.StringVar(&f.name, "name", "ycsb", "base name of the result files")
	flag.StringVar(&f.label, "label", "", "free text recorded with the results (e.g. GOMAXPROCS=2)")
	flag.StringVar(&f.render, "render", "", "re-render the table and charts of an earlier NAME.json; runs nothing")
	flag.Uint64Var(&f.seed, "seed", 1, "random seed")
	flag.StringVar(&f.dist, "requestdistribution", "", "override the workloads' request distribution: zipfian, uniform, latest or hotspot (hotspot: 80 % of operations on 20 % of the keys)")
	flag.StringVar(&f.initiate, "initiate", "", "initiate the replica set NAME/HOST,HOST,... (replSetInitiate on the first host), wait for a primary and secondaries, and exit")
	flag.BoolVar(&f.raftStats, "raftstats", false, "print the Raft commit latency of the -uri server (serverStatus().repl.raft) and exit")
	flag.Parse()
	if err := mainErr(f); err != nil {
		fmt.Fprintln(os.Stderr, "ycsb:", err)
		os.Exit(1)
	}
}

func mainErr(f flags) error {
	if f.render != "" {
		b, err := os.ReadFile(f.render)
		if err != nil {
			return err
		}
		var r Report
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("%s: %w", f.render, err)
		}
		dir := filepath.Dir(f.render)
		return r.write(dir, strings.TrimSuffix(filepath.Base(f.render), ".json"))
	}
	if f.initiate != "" {
		return initiate(context.Background(), f.initiate, time.Minute)
	}
	if f.raftStats {
		return raftStats(context.Background(), f.uri)
	}
	ws, err := parseWorkloads(f.workloads)
	if err != nil {
		return err
	}
	if f.dist != "" {
		if _, err := newKeyChooser(workload{distribution: f.dist}, 10, 0, newAckCounter(10), nil); err != nil {
			return err
		}
		for i := range ws {
			if ws[i].name != "ping" {
				ws[i].distribution = f.dist
			}
		}
	}
	threads, err := parseInts(f.threads)
	if err != nil {
		return err
	}
	overrides, err := parseOverrides(f.opOverrides)
	if err != nil {
		return err
	}
	ctx := context.Background()
	rep := newReport(f)
	records := f.records
	if !f.skipLoad {
		if err := dropCollection(ctx, f.uri); err != nil {
			return err
		}
		res, err := run(ctx, runConfig{uri: f.uri, w: workload{name: "load", proportions: mix(map[int]float64{opInsert: 1})}, threads: f.loadThreads,
			records: 0, opCount: f.records, maxTime: 24 * time.Hour, serverPID: f.pid, seed: f.seed, load: true})
		if err != nil {
			return fmt.Errorf("load: %w", err)
		}
		rep.Load = res
		printRun(res)
	}
	if f.loadOnly {
		threads = nil
	}
	// The order of the runs: every workload at each client count, the
	// whole list -repeat times; with -interleave, the client counts
	// alternate within each repetition instead.
	type step struct {
		w workload
		n int
	}
	var steps []step
	reps := max(f.repeat, 1)
	if f.interleave {
		for i := 0; i < reps; i++ {
			for _, n := range threads {
				for _, w := range ws {
					steps = append(steps, step{w, n})
				}
			}
		}
	} else {
		for _, n := range threads {
			for i := 0; i < reps; i++ {
				for _, w := range ws {
					steps = append(steps, step{w, n})
				}
			}
		}
	}
	for _, st := range steps {
		ops := f.opCount
		if v, ok := overrides[st.w.name]; ok {
			ops = v
		}
		res, err := run(ctx, runConfig{uri: f.uri, w: st.w, threads: st.n, records: records, opCount: ops,
			maxTime: f.maxTime, serverPID: f.pid, seed: f.seed + uint64(len(rep.Runs)) + 1})
		if err != nil {
			return fmt.Errorf("workload %s, %d clients: %w", st.w.name, st.n, err)
		}
		records += res.Inserted
		rep.Runs = append(rep.Runs, res)
		printRun(res)
	}
	rep.Finished = time.Now().UTC().Format(time.RFC3339)
	if f.out == "" {
		fmt.Print(rep.markdown(""))
		return nil
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(f.out, f.name+".json"), b, 0o644); err != nil {
		return err
	}
	return rep.write(f.out, f.name)
}

// dropCollection empties ycsb.usertable before a load.
func dropCollection(ctx context.Context, uri string) error {
	c, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		return err
	}
	defer c.Disconnect(ctx)
	for i := 0; ; i++ {
		err = c.Database(dbName).Collection(collName).Drop(ctx)
		if err == nil || i > 50 {
			break
		}
		time.Sleep(200 * time.Millisecond) // the server may still be starting
	}
	if err != nil {
		return fmt.Errorf("dropping %s.%s: %w", dbName, collName, err)
	}
	return c.Database(dbName).RunCommand(ctx, bson.D{{Key: "create", Value: collName}}).Err()
}

// printRun prints YCSB's summary lines for one run.
func printRun(r *RunResult) {
	fmt.Printf("[%s, %d clients] %d operations in %.2f s: %.0f ops/s", r.Workload, r.Threads, r.Operations, r.Seconds, r.Throughput)
	if r.Sched != nil {
		fmt.Printf("; server per 1k ops: %.0f voluntary + %.0f involuntary switches, %.0f migrations, %.1f µs CPU/op",
			r.Sched.VoluntaryPer1k, r.Sched.NonvoluntaryPer1k, r.Sched.MigrationsPer1k, r.Sched.CPUusPerOp)
	}
	fmt.Println()
	for _, op := range opNames {
		s, ok := r.Ops[op]
		if !ok {
			continue
		}
		fmt.Printf("  [%s] count %d, avg %.0f µs, p50 %d, p95 %d, p99 %d, p99.9 %d, max %d µs", op, s.Count, s.AvgUs, s.P50Us, s.P95Us, s.P99Us, s.P999Us, s.MaxUs)
		if s.Errors > 0 || s.NotFound > 0 {
			fmt.Printf(" (errors %d, not found %d)", s.Errors, s.NotFound)
		}
		fmt.Println()
	}
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad count %q", p)
		}
		out = append(out, n)
	}
	return out, nil
}

func parseOverrides(s string) (map[string]int64, error) {
	out := map[string]int64{}
	if s == "" {
		return out, nil
	}
	for _, p := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(p, "=")
		n, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil || n <= 0 {
			return nil, fmt.Errorf("bad -ops entry %q (want workload=count)", p)
		}
		out[strings.ToLower(strings.TrimSpace(k))] = n
	}
	return out, nil
}

// processCPU is this process's user+system CPU time in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
