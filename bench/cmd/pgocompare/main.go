// Command pgocompare measures what profile-guided optimisation gives
// cairnd: it builds cairnd twice, with -pgo=off and with
// cmd/cairnd/default.pgo, runs the same benchmarks against each over
// several rounds, and reports each benchmark's median per build and
// the speedup (PGO ÷ off for rates, off ÷ PGO for times; above 1 means the
// PGO build is faster), both as the ratio of the medians and as the median
// of the round-by-round ratios.
//
// The builds take turns benchmark by benchmark within a round (A B, then
// B A in the next round), not run by run: on a shared machine whose speed
// drifts by tens of percent over minutes, the two figures of a pair are
// then taken seconds apart. Benchmarks per round:
//
//   - YCSB, with both builds' servers up on fresh data directories: load of
//     -records records with j:true inserts (insert rate), then -workloads
//     (A, B, C, F, D and E) at -clients clients (throughput), the builds
//     taking turns step by step;
//
//   - indexbench with -docs documents inserted into both builds' servers:
//     insert time and each index build (the median of -indexrepeat builds),
//     the servers taking turns build by build;
//
//   - ClickBench's 43 queries over -clickrows rows, when bench/cmd/clickbench
//     exists (time per query, best of its runs after the first): one
//     clickbench run with both builds' servers up, each on its own copy of
//     the table (loaded and checked in the first round), taking turns query
//     run by query run.
//
//     go run ./cmd/pgocompare -runs 5 -out results -name pgo   (from bench/)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn/bench/internal/cairndproc"
)

type options struct {
	runs      int
	records   int
	ops       int
	clients   string
	workloads string
	docs      int
	repeat    int
	clickRows int
	clickRuns int
	out, name string
	ycsbOnly  bool
	same      bool
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
	flag.StringVar(&o.workloads, "workloads", "a,b,c,f,d,e", "YCSB workloads, in order (D and E insert records; later steps see them)")
	flag.IntVar(&o.docs, "docs", 100000, "indexbench documents")
	flag.IntVar(&o.repeat, "indexrepeat", 1, "indexbench: builds of each index per round (their median counts)")
	flag.IntVar(&o.clickRows, "clickrows", 100000, "ClickBench rows (when bench/cmd/clickbench exists)")
	flag.IntVar(&o.clickRuns, "clickruns", 3, "ClickBench runs per query (the best after the first counts)")
	flag.StringVar(&o.out, "out", "results", "directory for NAME.md and NAME.json")
	flag.BoolVar(&o.ycsbOnly, "ycsbonly", false, "run only the YCSB benchmarks")
	flag.BoolVar(&o.same, "aa", false, "A/A comparison: build the second binary with -pgo=off too, to measure the method's noise")
	flag.StringVar(&o.name, "name", "pgo", "base name of the result files")
	render := flag.String("render", "", "re-render NAME.md and NAME.png from a JSON file of an earlier comparison; runs nothing")
	flag.Parse()
	if *render != "" {
		var res results
		if err := readJSON(*render, &res); err != nil {
			fmt.Fprintln(os.Stderr, "pgocompare:", err)
			os.Exit(1)
		}
		if err := res.write(o.out, o.name); err != nil {
			fmt.Fprintln(os.Stderr, "pgocompare:", err)
			os.Exit(1)
		}
		return
	}
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
	pgoFlag := "-pgo=auto"
	if o.same {
		pgoFlag = "-pgo=off"
	}
	if _, err := os.Stat("../cmd/cairnd/default.pgo"); err != nil {
		return fmt.Errorf("no ../cmd/cairnd/default.pgo (run bench/pgo.sh): %w", err)
	}
	for _, step := range []struct {
		dir  string
		args []string
	}{
		{"..", []string{"build", "-pgo=off", "-o", builds[0].bin, "./cmd/cairnd"}},
		{"..", []string{"build", pgoFlag, "-o", builds[1].bin, "./cmd/cairnd"}},
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
	if o.same {
		res.Notes = append(res.Notes, "A/A comparison (-aa): the column headed default.pgo is a second binary built with -pgo=off, so every difference is the method's noise")
	}
	if click == "" {
		res.Notes = append(res.Notes, "bench/cmd/clickbench does not exist in this checkout: no ClickBench rows")
	}
	for r := 0; r < o.runs; r++ {
		// The builds take turns benchmark by benchmark, in the order
		// off, pgo in even rounds and pgo, off in odd ones (A B B A), so
		// that the two figures of a pair are seconds apart and a drift of
		// the machine within a round falls on both builds alike.
		order := slices.Clone(builds)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		fmt.Fprintf(os.Stderr, "== round %d/%d: %s first\n", r+1, o.runs, order[0].name)
		dir := filepath.Join(tmp, fmt.Sprintf("round%d", r))
		if err := ycsbRound(o, tmp, order, dir, res); err != nil {
			return fmt.Errorf("ycsb: %w", err)
		}
		if !o.ycsbOnly {
			if err := indexRun(o, tmp, order, filepath.Join(dir, "ib"), res); err != nil {
				return fmt.Errorf("indexbench: %w", err)
			}
			// One clickbench run serves both builds, each on its own copy
			// of the table, taking turns query run by query run; the first
			// round loads the tables and checks the answers.
			if click != "" {
				if err := clickRun(o, click, builds, filepath.Join(tmp, "click"), r == 0, res); err != nil {
					return fmt.Errorf("clickbench: %w", err)
				}
			}
		}
		os.RemoveAll(dir)
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
	if err := os.WriteFile(filepath.Join(dir, name+".md"), []byte(r.markdown()), 0o644); err != nil {
		return err
	}
	return r.chart(filepath.Join(dir, name+".png"))
}

// ycsbRound starts every build on a fresh data directory and runs each
// YCSB step against the builds in turn: the load of the records with
// j:true (which drops the collection first), then each workload.
func ycsbRound(o options, tmp string, order []build, dir string, res *results) error {
	servers := make([]*cairndproc.Server, len(order))
	defer func() {
		for _, s := range servers {
			if s != nil {
				s.Stop()
			}
		}
	}()
	for i, b := range order {
		d := filepath.Join(dir, b.name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		s, err := cairndproc.Start(context.Background(), cairndproc.Options{Binary: b.bin, Dir: d})
		if err != nil {
			return fmt.Errorf("starting %s: %w", b.name, err)
		}
		servers[i] = s
	}
	ycsb := filepath.Join(tmp, "ycsb")
	steps := [][]string{{"-loadonly"}}
	for _, w := range strings.Split(o.workloads, ",") {
		steps = append(steps, []string{"-skipload", "-workloads", w, "-threads", o.clients, "-operationcount", strconv.Itoa(o.ops)})
	}
	// records is each server's record count: the load's, plus what the
	// inserts of workloads D and E added.
	records := make([]int64, len(order))
	for si, step := range steps {
		for i, b := range order {
			s, d := servers[i], filepath.Join(dir, b.name)
			uri, n := s.URI, int64(o.records)
			if si == 0 {
				uri += "&journal=true"
			} else {
				n = records[i]
			}
			args := append([]string{"-uri", uri, "-pid", strconv.Itoa(s.Pid()), "-recordcount", strconv.FormatInt(n, 10), "-out", d, "-name", "step"}, step...)
			cmd := exec.Command(ycsb, args...)
			cmd.Stderr = os.Stderr
			if out, err := cmd.Output(); err != nil {
				return fmt.Errorf("%s, %s: %w: %s", b.name, strings.Join(step, " "), err, out)
			}
			added, err := addYCSB(filepath.Join(d, "step.json"), b.name, res)
			if err != nil {
				return err
			}
			records[i] = n + added
		}
	}
	return nil
}

// addYCSB adds the figures of one ycsb report: the load's insert rate or
// each workload's throughput, and the server's CPU time per operation. It
// returns how many records the workloads' inserts added.
func addYCSB(path, b string, res *results) (int64, error) {
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
			Inserted   int64   `json:"inserted"`
			Sched      *struct {
				CPU float64 `json:"server_cpu_us_per_op"`
			} `json:"sched"`
		} `json:"runs"`
	}
	if err := readJSON(path, &rep); err != nil {
		return 0, err
	}
	var added int64
	if rep.Load != nil {
		res.add("journal insert (j:true, 8 clients)", "inserts/s", true, b, rep.Load.Throughput)
		if rep.Load.Sched != nil {
			res.add("journal insert (j:true, 8 clients): server CPU per insert", "µs", false, b, rep.Load.Sched.CPU)
		}
	}
	for _, x := range rep.Runs {
		added += x.Inserted
		res.add(fmt.Sprintf("YCSB %s, %d clients", strings.ToUpper(x.Workload), x.Threads), "ops/s", true, b, x.Throughput)
		if x.Sched != nil {
			res.add(fmt.Sprintf("YCSB %s, %d clients: server CPU per op", strings.ToUpper(x.Workload), x.Threads), "µs", false, b, x.Sched.CPU)
		}
	}
	return added, nil
}

// indexRun runs one indexbench with both builds (the first in order as its
// server, the second as its -versus server, taking turns build by build)
// and adds each step's time and server CPU time per build.
func indexRun(o options, tmp string, order []build, dir string, res *results) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	js := filepath.Join(dir, "steps.json")
	cmd := exec.Command(filepath.Join(tmp, "indexbench"), "-docs", strconv.Itoa(o.docs), "-repeat", strconv.Itoa(o.repeat),
		"-cairnd", order[0].bin, "-versus", order[1].bin, "-dir", dir, "-json", js)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	var sides []struct {
		Steps []struct {
			Name  string  `json:"name"`
			MS    float64 `json:"ms"`
			CPUMS float64 `json:"cpu_ms"`
		} `json:"steps"`
	}
	if err := readJSON(js, &sides); err != nil {
		return err
	}
	if len(sides) != len(order) {
		return fmt.Errorf("indexbench reported %d servers, not %d", len(sides), len(order))
	}
	for i, sd := range sides {
		for _, st := range sd.Steps {
			var label string
			switch {
			case strings.HasPrefix(st.Name, "insert_"):
				label = "indexbench insert (" + strings.TrimPrefix(st.Name, "insert_") + ")"
			case strings.HasPrefix(st.Name, "build_fg_"):
				label = "index build " + strings.TrimPrefix(st.Name, "build_fg_")
			default:
				continue
			}
			res.add(label, "ms", false, order[i].name, st.MS)
			res.add(label+": server CPU", "ms", false, order[i].name, st.CPUMS)
		}
	}
	return nil
}

// clickRun runs ClickBench's queries against both builds (the first as
// clickbench's server, the second as its -versus server) on the tables kept
// in dir, loading them the first time, and adds each query's best time per
// build. With check, the answers are checked against the Go oracle.
func clickRun(o options, click string, builds []build, dir string, check bool, res *results) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cmd := exec.Command(click, "-rows", strconv.Itoa(o.clickRows), "-runs", strconv.Itoa(o.clickRuns),
		"-cairnd", builds[0].bin, "-versus", builds[1].bin,
		"-out", dir, "-name", "click", "-dir", dir, "-keep", "-reuse", "-check="+strconv.FormatBool(check))
	cmd.Dir = "."
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	var rep struct {
		Queries []clickQuery `json:"queries"`
		Versus  []clickQuery `json:"versus"`
	}
	if err := readJSON(filepath.Join(dir, "click.json"), &rep); err != nil {
		return err
	}
	for i, qs := range [][]clickQuery{rep.Queries, rep.Versus} {
		for _, q := range qs {
			if q.Error != "" {
				continue
			}
			res.add(fmt.Sprintf("ClickBench Q%d", q.Query), "ms", false, builds[i].name, bestHot(q.Times))
			if c := bestHot(q.CPU); c > 0 {
				res.add(fmt.Sprintf("ClickBench Q%d: server CPU", q.Query), "ms", false, builds[i].name, c)
			}
		}
	}
	return nil
}

// clickQuery is one query's figures in clickbench's JSON: its run times and
// the server's CPU time per run, in seconds.
type clickQuery struct {
	Query int       `json:"query"`
	Times []float64 `json:"times"`
	CPU   []float64 `json:"cpu"`
	Error string    `json:"error"`
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

// speedup is how much faster the PGO build is (>1: faster), as the ratio
// of the two builds' medians.
func (m *metric) speedup() float64 {
	return m.ratio(median(m.Values["off"]), median(m.Values["pgo"]))
}

// pairedSpeedup is the median of the round-by-round ratios: each round
// measures the two builds seconds apart, so a slow phase of the machine
// that spans a round cancels out of its ratio.
func (m *metric) pairedSpeedup() float64 {
	off, pgo := m.Values["off"], m.Values["pgo"]
	var rs []float64
	for i := range min(len(off), len(pgo)) {
		rs = append(rs, m.ratio(off[i], pgo[i]))
	}
	return median(rs)
}

// slowerRounds is how many rounds measured the PGO build more than 2 %
// slower, and how many rounds there are.
func (m *metric) slowerRounds() (slower, rounds int) {
	off, pgo := m.Values["off"], m.Values["pgo"]
	rounds = min(len(off), len(pgo))
	for i := range rounds {
		if m.ratio(off[i], pgo[i]) < 0.98 {
			slower++
		}
	}
	return slower, rounds
}

func (m *metric) ratio(off, pgo float64) float64 {
	if m.HigherBetter {
		return pgo / off
	}
	return off / pgo
}

func (r *results) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# cairnd built with -pgo=off and with default.pgo\n\n- Date: %s\n- Machine: %s\n- Go: %s, commit %s\n- Command: `%s` (in bench/)\n- Runs: %d rounds; in each, the builds take turns benchmark by benchmark (off first in even rounds, PGO first in odd ones); medians\n\n",
		r.Date, r.Machine, r.Go, r.Commit, r.Command, r.Runs)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "- Note: %s\n", n)
	}
	b.WriteString("| benchmark | unit | -pgo=off (median) | default.pgo (median) | speedup (>1: PGO faster) | paired speedup | runs off | runs pgo |\n|---|---|---:|---:|---:|---:|---|---|\n")
	for _, m := range r.Metrics {
		fmt.Fprintf(&b, "| %s | %s | %.1f | %.1f | %.3f | %.3f | %s | %s |\n", m.Name, m.Unit, median(m.Values["off"]), median(m.Values["pgo"]), m.speedup(), m.pairedSpeedup(), list(m.Values["off"]), list(m.Values["pgo"]))
	}
	b.WriteString("\n")
	// Wall-clock figures and the server's CPU time are summarised apart:
	// on a shared machine the CPU time is the steadier of the two. Each is
	// summarised by the ratio of medians and by the paired ratio.
	for _, kind := range []struct {
		title string
		cpu   bool
	}{{"wall-clock and throughput figures", false}, {"server CPU time figures", true}} {
		for _, how := range []struct {
			title string
			f     func(*metric) float64
		}{{"ratio of medians", (*metric).speedup}, {"paired ratios", (*metric).pairedSpeedup}} {
			var all []float64
			logSum, worst, worstName, slower := 0.0, math.Inf(1), "", 0
			for _, m := range r.Metrics {
				if strings.Contains(m.Name, "server CPU") != kind.cpu {
					continue
				}
				sp := how.f(m)
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
			fmt.Fprintf(&b, "- %s (%d benchmarks), %s: median speedup **%.3f**, geometric mean %.3f; more than 2 %% slower under PGO: %d; slowest: %s (%.3f).\n",
				kind.title, len(all), how.title, median(all), math.Exp(logSum/float64(len(all))), slower, worstName, worst)
		}
		// A benchmark measured more than 2 % slower in every round (or in
		// all but one) is slower beyond the noise: if its true median
		// ratio were 0.98 or more, each round would fall below 0.98 with
		// probability at most one half.
		every, allButOne := 0, 0
		for _, m := range r.Metrics {
			if strings.Contains(m.Name, "server CPU") != kind.cpu {
				continue
			}
			s, n := m.slowerRounds()
			if n > 1 && s == n {
				every++
			}
			if n > 1 && s >= n-1 {
				allButOne++
			}
		}
		fmt.Fprintf(&b, "- %s: more than 2 %% slower under PGO in every round: %d benchmarks; in all rounds but one: %d.\n", kind.title, every, allButOne)
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
