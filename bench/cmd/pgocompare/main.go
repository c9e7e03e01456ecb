// Command pgocompare measures what profile-guided optimisation gives
// cairnd: it builds cairnd twice, with -pgo=off and with
// cmd/cairnd/default.pgo, and runs the same benchmarks against each,
// alternating the builds run by run (A B A B ...) so that both see the
// same machine load, then reports each benchmark's median per build and
// the speedup (PGO ÷ off for rates, off ÷ PGO for times; above 1 means the
// PGO build is faster).
//
// Benchmarks per run, each against a fresh server:
//
//   - YCSB: load of -records records with j:true inserts (insert rate),
//     then workloads A and C at -clients clients (throughput);
//
//   - indexbench with -docs documents: insert rate and each index build;
//
//   - ClickBench's 43 queries over -clickrows rows, when bench/cmd/clickbench
//     exists (time per query, best of its runs).
//
//     go run ./cmd/pgocompare -runs 5 -out results -name pgo   (from bench/)
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type options struct {
	runs      int
	records   int
	ops       int
	clients   string
	docs      int
	clickRows int
	clickRuns int
	out, name string
	ycsbOnly  bool
}

// build is one cairnd binary under test.
type build struct{ name, bin string }

// metric is one benchmark figure across runs.
type metric struct {
	Name         string               `json:"name"`
	HigherBetter bool                 `json:"higher_is_better"`
	Unit         string               `json:"unit"`
	Values       map[string][]float64 `json:"values"` // by build
}

type results struct {
	Date    string    `json:"date"`
	Machine string    `json:"machine"`
	Go      string    `json:"go"`
	Commit  string    `json:"commit"`
	Command string    `json:"command"`
	Runs    int       `json:"runs"`
	Metrics []*metric `json:"metrics"`
	Notes   []string  `json:"notes,omitempty"`
}

func (r *results) add(name, unit string, higher bool, b string, v float64) {
	for _, m := range r.Metrics {
		if m.Name == name {
			m.Values[b] = append(m.Values[b], v)
			return
		}
	}
	r.Metrics = append(r.Metrics, &metric{Name: name, Unit: unit, HigherBetter: higher, Values: map[string][]float64{b: {v}}})
}

func main() {
	var o options
	flag.IntVar(&o.runs, "runs", 5, "runs per build (alternating the builds)")
	flag.IntVar(&o.records, "records", 20000, "YCSB records (loaded with j:true inserts)")
	flag.IntVar(&o.ops, "ops", 60000, "YCSB operations per workload")
	flag.StringVar(&o.clients, "clients", "8", "YCSB client counts")
	flag.IntVar(&o.docs, "docs", 100000, "indexbench documents")
	flag.IntVar(&o.clickRows, "clickrows", 100000, "ClickBench rows (when bench/cmd/clickbench exists)")
	flag.IntVar(&o.clickRuns, "clickruns", 3, "ClickBench runs per query (the best after the first counts)")
	flag.StringVar(&o.out, "out", "results", "directory for NAME.md and NAME.json")
	flag.BoolVar(&o.ycsbOnly, "ycsbonly", false, "run only the YCSB benchmarks")
	flag.StringVar(&o.name, "name", "pgo", "base name of the result files")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "pgocompare:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	tmp, err := os.MkdirTemp("", "pgocompare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	builds := []build{{"off", filepath.Join(tmp, "cairnd-off")}, {"pgo", filepath.Join(tmp, "cairnd-pgo")}}
	if _, err := os.Stat("../cmd/cairnd/default.pgo"); err != nil {
		return fmt.Errorf("no ../cmd/cairnd/default.pgo (run bench/pgo.sh): %w", err)
	}
	for _, step := range []struct {
		dir  string
		args []string
	}{
		{"..", []string{"build", "-pgo=off", "-o", builds[0].bin, "./cmd/cairnd"}},
		{"..", []string{"build", "-pgo=auto", "-o", builds[1].bin, "./cmd/cairnd"}},
		{".", []string{"build", "-o", filepath.Join(tmp, "ycsb"), "./cmd/ycsb"}},
		{".", []string{"build", "-o", filepath.Join(tmp, "indexbench"), "./cmd/indexbench"}},
	} {
		cmd := exec.Command("go", step.args...)
		cmd.Dir, cmd.Stderr = step.dir, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go %s: %w", strings.Join(step.args, " "), err)
		}
	}
	click := ""
	if _, err := os.Stat("cmd/clickbench"); err == nil {
		click = filepath.Join(tmp, "clickbench")
		cmd := exec.Command("go", "build", "-o", click, "./cmd/clickbench")
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building clickbench: %w", err)
		}
	}
	commit, _ := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	res := &results{Date: time.Now().UTC().Format(time.RFC3339), Machine: machine(), Go: runtime.Version(),
		Commit: strings.TrimSpace(string(commit)), Command: "pgocompare " + strings.Join(os.Args[1:], " ")}
	if click == "" {
		res.Notes = append(res.Notes, "bench/cmd/clickbench does not exist in this checkout: no ClickBench rows")
	}
	for r := 0; r < o.runs; r++ {
		for _, b := range builds {
			fmt.Fprintf(os.Stderr, "== run %d/%d, build %s\n", r+1, o.runs, b.name)
			dir := filepath.Join(tmp, fmt.Sprintf("run%d-%s", r, b.name))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			if err := ycsbRun(o, tmp, b, dir, res); err != nil {
				return fmt.Errorf("ycsb, %s: %w", b.name, err)
			}
			if o.ycsbOnly {
				os.RemoveAll(dir)
				continue
			}
			if err := indexRun(o, tmp, b, dir, res); err != nil {
				return fmt.Errorf("indexbench, %s: %w", b.name, err)
			}
			if click != "" {
				if err := clickRun(o, click, b, dir, res); err != nil {
					return fmt.Errorf("clickbench, %s: %w", b.name, err)
				}
			}
			os.RemoveAll(dir)
		}
		// Written after every round, so that an interrupted comparison
		// keeps the rounds it finished.
		res.Runs = r + 1
		if err := res.write(o.out, o.name); err != nil {
			return err
		}
	}
	fmt.Print(res.markdown())
	return nil
}

func (r *results) write(dir, name string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	js, _ := json.MarshalIndent(r, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, name+".json"), js, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+".md"), []byte(r.markdown()), 0o644)
}

// ycsbRun starts the build on a fresh data directory, loads the records
// with j:true and runs workloads A and C.
func ycsbRun(o options, tmp string, b build, dir string, res *results) error {
	port := 20000 + rand.IntN(20000)
	srv := exec.Command(b.bin, "--dbpath", filepath.Join(dir, "db"), "--port", strconv.Itoa(port), "--logpath", filepath.Join(dir, "cairnd.log"))
	if err := os.MkdirAll(filepath.Join(dir, "db"), 0o755); err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return err
	}
	defer func() {
		_ = srv.Process.Signal(syscall.SIGTERM)
		_ = srv.Wait()
	}()
	uri := fmt.Sprintf("mongodb://127.0.0.1:%d/?directConnection=true", port)
	ycsb := filepath.Join(tmp, "ycsb")
	pid := strconv.Itoa(srv.Process.Pid)
	load := exec.Command(ycsb, "-uri", uri+"&journal=true", "-pid", pid, "-recordcount", strconv.Itoa(o.records), "-loadonly", "-out", dir, "-name", "load")
	load.Stderr = os.Stderr
	if out, err := load.Output(); err != nil {
		return fmt.Errorf("load: %w: %s", err, out)
	}
	var rep struct {
		Load *struct {
			Throughput float64 `json:"ops_per_sec"`
			Sched      *struct {
				CPU float64 `json:"server_cpu_us_per_op"`
			} `json:"sched"`
		} `json:"load"`
		Runs []struct {
			Workload   string  `json:"workload"`
			Threads    int     `json:"threads"`
			Throughput float64 `json:"ops_per_sec"`
			Sched      *struct {
				CPU float64 `json:"server_cpu_us_per_op"`
			} `json:"sched"`
		} `json:"runs"`
	}
	if err := readJSON(filepath.Join(dir, "load.json"), &rep); err != nil {
		return err
	}
	res.add("journal insert (j:true, 8 clients)", "inserts/s", true, b.name, rep.Load.Throughput)
	if rep.Load.Sched != nil {
		res.add("journal insert: server CPU per insert", "µs", false, b.name, rep.Load.Sched.CPU)
	}
	wl := exec.Command(ycsb, "-uri", uri, "-pid", pid, "-recordcount", strconv.Itoa(o.records), "-skipload", "-workloads", "a,c",
		"-threads", o.clients, "-operationcount", strconv.Itoa(o.ops), "-out", dir, "-name", "run")
	wl.Stderr = os.Stderr
	if out, err := wl.Output(); err != nil {
		return fmt.Errorf("workloads: %w: %s", err, out)
	}
	if err := readJSON(filepath.Join(dir, "run.json"), &rep); err != nil {
		return err
	}
	for _, x := range rep.Runs {
		res.add(fmt.Sprintf("YCSB %s, %d clients", strings.ToUpper(x.Workload), x.Threads), "ops/s", true, b.name, x.Throughput)
		if x.Sched != nil {
			res.add(fmt.Sprintf("YCSB %s, %d clients: server CPU per op", strings.ToUpper(x.Workload), x.Threads), "µs", false, b.name, x.Sched.CPU)
		}
	}
	return nil
}

// indexRun runs indexbench against the build and reads its table.
func indexRun(o options, tmp string, b build, dir string, res *results) error {
	ib := filepath.Join(dir, "ib")
	if err := os.MkdirAll(ib, 0o755); err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(tmp, "indexbench"), "-docs", strconv.Itoa(o.docs), "-cairnd", b.bin, "-dir", ib)
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "|")
		if len(f) < 4 {
			continue
		}
		name := strings.TrimSpace(f[1])
		ms, err := strconv.ParseFloat(strings.TrimSpace(f[2]), 64)
		if err != nil {
			continue
		}
		label := ""
		switch {
		case strings.HasPrefix(name, "insert_"):
			label = "indexbench insert (" + strings.TrimPrefix(name, "insert_") + ")"
		case strings.HasPrefix(name, "build_fg_"):
			label = "index build " + strings.TrimPrefix(name, "build_fg_")
		default:
			continue
		}
		res.add(label, "ms", false, b.name, ms)
		// The last column is the server's CPU time for the step.
		if len(f) >= 7 {
			if c, err := strconv.ParseFloat(strings.TrimSpace(f[5]), 64); err == nil {
				res.add(label+": server CPU", "ms", false, b.name, c)
			}
		}
	}
	return nil
}

// clickRun runs ClickBench's queries once each against the build and reads
// each query's best time from its JSON.
func clickRun(o options, click string, b build, dir string, res *results) error {
	if err := os.MkdirAll(filepath.Join(dir, "click"), 0o755); err != nil {
		return err
	}
	cmd := exec.Command(click, "-rows", strconv.Itoa(o.clickRows), "-runs", strconv.Itoa(o.clickRuns), "-cairnd", b.bin, "-out", dir, "-name", "click", "-dir", filepath.Join(dir, "click"))
	cmd.Dir = "."
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	b2, err := os.ReadFile(filepath.Join(dir, "click.json"))
	if err != nil {
		return err
	}
	times, cpus, err := clickTimes(b2)
	if err != nil {
		return err
	}
	for i, t := range times {
		if t > 0 {
			res.add(fmt.Sprintf("ClickBench Q%d", i), "ms", false, b.name, t)
		}
		if cpus[i] > 0 {
			res.add(fmt.Sprintf("ClickBench Q%d: server CPU", i), "ms", false, b.name, cpus[i])
		}
	}
	return nil
}

// clickTimes reads clickbench's JSON (per query, its run times and the
// server's CPU time per run, in seconds) and returns, per query, the best
// wall time and the best server CPU time of the runs after the first, in
// milliseconds (0 for a query that failed).
func clickTimes(b []byte) (times, cpus []float64, err error) {
	var rep struct {
		Queries []struct {
			Query int       `json:"query"`
			Times []float64 `json:"times"`
			CPU   []float64 `json:"cpu"`
			Error string    `json:"error"`
		} `json:"queries"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, nil, err
	}
	times, cpus = make([]float64, len(rep.Queries)), make([]float64, len(rep.Queries))
	for i, q := range rep.Queries {
		if q.Error != "" {
			continue
		}
		times[i], cpus[i] = bestHot(q.Times), bestHot(q.CPU)
	}
	return times, cpus, nil
}

// bestHot is the least of the runs after the first (the only run if there
// is one), in milliseconds; 0 when there is none.
func bestHot(secs []float64) float64 {
	if len(secs) > 1 {
		secs = secs[1:]
	}
	best := math.Inf(1)
	for _, t := range secs {
		if t >= 0 {
			best = min(best, t*1000)
		}
	}
	if math.IsInf(best, 1) {
		return 0
	}
	return best
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// speedup is how much faster the PGO build is (>1: faster).
func (m *metric) speedup() float64 {
	off, pgo := median(m.Values["off"]), median(m.Values["pgo"])
	if m.HigherBetter {
		return pgo / off
	}
	return off / pgo
}

func (r *results) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# cairnd built with -pgo=off and with default.pgo\n\n- Date: %s\n- Machine: %s\n- Go: %s, commit %s\n- Command: `%s` (in bench/)\n- Runs: %d per build, alternating the builds run by run; medians\n\n",
		r.Date, r.Machine, r.Go, r.Commit, r.Command, r.Runs)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "- Note: %s\n", n)
	}
	b.WriteString("| benchmark | unit | -pgo=off (median) | default.pgo (median) | speedup (>1: PGO faster) | runs off | runs pgo |\n|---|---|---:|---:|---:|---|---|\n")
	for _, m := range r.Metrics {
		fmt.Fprintf(&b, "| %s | %s | %.1f | %.1f | %.3f | %s | %s |\n", m.Name, m.Unit, median(m.Values["off"]), median(m.Values["pgo"]), m.speedup(), list(m.Values["off"]), list(m.Values["pgo"]))
	}
	b.WriteString("\n")
	// Wall-clock figures and the server's CPU time are summarised apart:
	// on a shared machine the CPU time is the steadier of the two.
	for _, kind := range []struct {
		title string
		cpu   bool
	}{{"wall-clock and throughput figures", false}, {"server CPU time figures", true}} {
		var all []float64
		logSum, worst, worstName, slower := 0.0, math.Inf(1), "", 0
		for _, m := range r.Metrics {
			if strings.Contains(m.Name, "server CPU") != kind.cpu {
				continue
			}
			sp := m.speedup()
			if math.IsNaN(sp) || sp <= 0 {
				continue
			}
			all = append(all, sp)
			logSum += math.Log(sp)
			if sp < worst {
				worst, worstName = sp, m.Name
			}
			if sp < 0.98 {
				slower++
			}
		}
		if len(all) == 0 {
			continue
		}
		fmt.Fprintf(&b, "- %s (%d benchmarks): median speedup **%.3f**, geometric mean %.3f; more than 2 %% slower under PGO: %d; slowest: %s (%.3f).\n",
			kind.title, len(all), median(all), math.Exp(logSum/float64(len(all))), slower, worstName, worst)
	}
	return b.String()
}

func list(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strings.Join(s, " ")
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
	return fmt.Sprintf("%s, %s, %d CPUs", host, model, runtime.NumCPU())
}
