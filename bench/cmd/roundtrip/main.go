// Command roundtrip measures the round-trip floor of this machine and puts
// go-ycsb's results beside it and beside the ping ceiling.
//
//	roundtrip serve -reply N
//	roundtrip run -mongo HOST:PORT [-threads 1,8,40,80] [-ops N] [-maxtime D]
//	              [-repeat N] [-ycsb FILE.json] [-goycsb DIR] -out DIR -name NAME
//
// serve is the echo server (run starts it as a child process, so that it
// has a process of its own as cairnd does). run measures, at each client
// count, the echo floor (the minimal client against the echo server, with
// the request bytes of a driver's ping and replies of the size cairnd
// answers ping with) and the raw ping (the same client against cairnd),
// alternating echo and cairnd -repeat times, and takes medians. It then
// reads the project's YCSB report (-ycsb, from cmd/ycsb: its ping run is
// the ceiling of a real driver) and go-ycsb's outputs (-goycsb: files
// WORKLOAD-THREADS.txt, as bench/ycsb.sh writes them) and writes NAME.md,
// NAME.json and NAME.png: each workload's throughput as a share of the
// ping ceiling at the same client count, and ping as a share of the floor.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: roundtrip serve|run [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		fs := flag.NewFlagSet("serve", flag.ExitOnError)
		reply := fs.Int("reply", 38, "reply size in bytes")
		_ = fs.Parse(os.Args[2:])
		err = serve(*reply)
	case "run":
		err = run(os.Args[2:])
	default:
		err = fmt.Errorf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "roundtrip:", err)
		os.Exit(1)
	}
}

// Report is what run writes as NAME.json.
type Report struct {
	Date       string       `json:"date"`
	Machine    string       `json:"machine"`
	Command    string       `json:"command"`
	ReplyBytes int          `json:"reply_bytes"`
	Raw        []*RawResult `json:"raw"`
	// Ceiling is the driver's ping throughput by client count (cmd/ycsb).
	Ceiling map[int]float64 `json:"ping_ceiling"`
	// Project holds cmd/ycsb's throughput by workload and client count.
	Project map[string]map[int]float64 `json:"project_ycsb"`
	GoYCSB  []*GoYCSBResult            `json:"go_ycsb"`
}

// GoYCSBResult is one go-ycsb run.
type GoYCSBResult struct {
	Workload string             `json:"workload"`
	Threads  int                `json:"threads"`
	Total    float64            `json:"ops_per_sec"`
	Ops      map[string]OpLine  `json:"ops"`
	Extra    map[string]float64 `json:"-"`
}

// OpLine is one operation line of go-ycsb's summary.
type OpLine struct {
	Count float64 `json:"count"`
	OPS   float64 `json:"ops_per_sec"`
	P50   float64 `json:"p50_us"`
	P99   float64 `json:"p99_us"`
}

func run(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	mongo := fs.String("mongo", "", "cairnd's address (host:port)")
	threadsF := fs.String("threads", "1,8,40,80", "client counts")
	ops := fs.Int64("ops", 100000, "round trips per run")
	maxTime := fs.Duration("maxtime", 20*time.Second, "longest run")
	repeat := fs.Int("repeat", 3, "runs of each target per client count, alternating")
	ycsbJSON := fs.String("ycsb", "", "cmd/ycsb's report (JSON) with the ping ceiling")
	goDir := fs.String("goycsb", "", "directory of go-ycsb outputs WORKLOAD-THREADS.txt")
	out := fs.String("out", ".", "output directory")
	name := fs.String("name", "roundtrip", "output name")
	_ = fs.Parse(args)
	if *mongo == "" {
		return fmt.Errorf("-mongo is required")
	}
	var threads []int
	for _, s := range strings.Split(*threadsF, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("bad -threads %q", *threadsF)
		}
		threads = append(threads, n)
	}
	size, err := replySize(*mongo)
	if err != nil {
		return fmt.Errorf("pinging cairnd: %w", err)
	}
	echo, err := startEcho(size)
	if err != nil {
		return err
	}
	defer echo.stop()
	rep := &Report{Date: time.Now().UTC().Format(time.RFC3339), Machine: machine(), Command: "roundtrip run " + strings.Join(args, " "), ReplyBytes: size}
	for _, t := range threads {
		for i := 0; i < *repeat; i++ {
			order := []string{"echo", "cairnd"}
			if i%2 == 1 {
				order = []string{"cairnd", "echo"}
			}
			for _, target := range order {
				addr := echo.addr
				if target == "cairnd" {
					addr = *mongo
				}
				r, err := rawRun(target, addr, t, *ops, *maxTime)
				if err != nil {
					return err
				}
				fmt.Printf("%-6s %3d clients: %8.0f round trips/s  p50 %6.0f µs  p99 %6.0f µs\n", target, t, r.Throughput, r.P50us, r.P99us)
				rep.Raw = append(rep.Raw, r)
			}
		}
	}
	if *ycsbJSON != "" {
		if err := rep.readProject(*ycsbJSON); err != nil {
			return err
		}
	}
	if *goDir != "" {
		if err := rep.readGoYCSB(*goDir); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	js, _ := json.MarshalIndent(rep, "", "  ")
	if err := os.WriteFile(filepath.Join(*out, *name+".json"), js, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, *name+".md"), []byte(rep.markdown(threads)), 0o644); err != nil {
		return err
	}
	return rep.chart(filepath.Join(*out, *name+".png"), threads)
}

// median returns the run of median throughput of target at t clients.
func (r *Report) median(target string, t int) *RawResult {
	var rs []*RawResult
	for _, x := range r.Raw {
		if x.Target == target && x.Threads == t {
			rs = append(rs, x)
		}
	}
	if len(rs) == 0 {
		return nil
	}
	slices.SortFunc(rs, func(a, b *RawResult) int { return cmp.Compare(a.Throughput, b.Throughput) })
	return rs[(len(rs)-1)/2]
}

func (r *Report) readProject(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var pr struct {
		Runs []struct {
			Workload   string  `json:"workload"`
			Threads    int     `json:"threads"`
			Throughput float64 `json:"ops_per_sec"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &pr); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	all := map[string]map[int][]float64{}
	for _, x := range pr.Runs {
		if all[x.Workload] == nil {
			all[x.Workload] = map[int][]float64{}
		}
		all[x.Workload][x.Threads] = append(all[x.Workload][x.Threads], x.Throughput)
	}
	r.Project = map[string]map[int]float64{}
	for w, byT := range all {
		r.Project[w] = map[int]float64{}
		for t, v := range byT {
			slices.Sort(v)
			r.Project[w][t] = v[(len(v)-1)/2]
		}
	}
	r.Ceiling = r.Project["ping"]
	return nil
}

var goLine = regexp.MustCompile(`^(\w+)\s+- Takes\(s\): [\d.]+, Count: (\d+), OPS: ([\d.]+), .*50th\(us\): (\d+), .*99th\(us\): (\d+),`)

func (r *Report) readGoYCSB(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*-*.txt"))
	if err != nil {
		return err
	}
	for _, f := range files {
		base := strings.TrimSuffix(filepath.Base(f), ".txt")
		w, ts, _ := strings.Cut(base, "-")
		t, err := strconv.Atoi(ts)
		if err != nil {
			continue
		}
		res := &GoYCSBResult{Workload: w, Threads: t, Ops: map[string]OpLine{}}
		fh, err := os.Open(f)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(fh)
		// go-ycsb prints a summary every 10 s and a final one after
		// "Run finished": keep the last of each operation.
		for sc.Scan() {
			m := goLine.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			var l OpLine
			l.Count, _ = strconv.ParseFloat(m[2], 64)
			l.OPS, _ = strconv.ParseFloat(m[3], 64)
			l.P50, _ = strconv.ParseFloat(m[4], 64)
			l.P99, _ = strconv.ParseFloat(m[5], 64)
			res.Ops[m[1]] = l
		}
		fh.Close()
		if tot, ok := res.Ops["TOTAL"]; ok {
			res.Total = tot.OPS
			r.GoYCSB = append(r.GoYCSB, res)
		}
	}
	slices.SortFunc(r.GoYCSB, func(a, b *GoYCSBResult) int {
		return cmp.Or(cmp.Compare(a.Workload, b.Workload), cmp.Compare(a.Threads, b.Threads))
	})
	return nil
}

func (r *Report) goResult(w string, t int) *GoYCSBResult {
	for _, x := range r.GoYCSB {
		if x.Workload == w && x.Threads == t {
			return x
		}
	}
	return nil
}

func (r *Report) workloads() []string {
	var ws []string
	for _, x := range r.GoYCSB {
		if !slices.Contains(ws, x.Workload) {
			ws = append(ws, x.Workload)
		}
	}
	return ws
}

func machine() string {
	host, _ := os.Hostname()
	model := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	n := 0
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		n = strings.Count(string(b), "\nprocessor") + 1
	}
	return fmt.Sprintf("%s, %s, %d CPUs", host, model, n)
}
