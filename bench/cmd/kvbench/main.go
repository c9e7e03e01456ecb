// Command kvbench reproduces the table of redb's lmdb_benchmark for Cairn's
// storage engine kv and its peers: bbolt, Pebble, Badger and LMDB (through
// cgo, with the build tag lmdb).
//
// The workload, with keys of 24 and values of 150 random bytes from a seeded
// generator: a bulk load of 5,000,000 inserts in one transaction; 1,000
// transactions of one insert; 100 transactions of 1,000 inserts; len(); twice
// 1,000,000 random point reads; twice 500,000 range reads of 10 entries from
// a random key; every key read once, split over 4, 8, 16 and 32 goroutines;
// the removal of the first half of the keys in one transaction; and the size
// of the files before and after compaction. Every engine commits in its
// fully durable mode. Each engine runs in its own process (kvbench re-execs
// itself), one after another, each in a fresh directory under -dir. Before
// each engine's individual writes, its process also measures the physical floor of a
// durable commit: 1,000 bare write(174 bytes)+fdatasync calls on a
// preallocated file beside the engine's data, just before and just after
// the engine's own 1,000 individual writes.
//
// -scale N divides the bulk load, the number of batches and the number of
// reads by N for quick runs; the 1,000 individual writes are never divided.
//
// Usage:
//
//	kvbench [-scale N] [-engines kv,lmdb,bbolt,pebble,badger] [-out DIR] [-name results]
//
// It writes DIR/NAME.md (a markdown table: rows are benchmarks, columns are
// engines, times in milliseconds), DIR/NAME.png (a bar chart normalised to
// the fastest engine of each row) and DIR/NAME.json (the raw figures), and
// prints progress to stderr.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"
)

func main() {
	var (
		scale   = flag.Int("scale", 1, "divide the element counts by `N` for quick runs")
		names   = flag.String("engines", strings.Join(engineNames(), ","), "comma-separated `list` of engines to run, in column order")
		out     = flag.String("out", ".", "write the results into `DIR`")
		name    = flag.String("name", "results", "base `name` of the result files (NAME.md, NAME.png, NAME.json)")
		dir     = flag.String("dir", os.TempDir(), "create each engine's fresh data directory under `DIR`")
		timeout = flag.Duration("timeout", 4*time.Hour, "kill an engine's process after this long")
		keep    = flag.Bool("keep", false, "keep the data directories")
		profile = flag.String("cpuprofile", "", "write a CPU profile of each engine's process to `DIR`/ENGINE.pprof")
		render  = flag.String("render", "", "re-render the report from `FILE` (a NAME.json of an earlier run) into -out/-name, and run nothing")
		command = flag.String("command", "", "command line to record in the results (default: this process's)")
		child   = flag.String("child", "", "internal: run one `engine` in this process")
		childD  = flag.String("child-dir", "", "internal: the child's data directory")
		childO  = flag.String("child-out", "", "internal: where the child writes its JSON result")
	)
	flag.Parse()
	if *scale < 1 {
		fatalf("-scale must be >= 1")
	}
	if *child != "" {
		if *profile != "" {
			stop, err := startProfile(filepath.Join(*profile, *child+".pprof"))
			if err != nil {
				fatalf("%s: %v", *child, err)
			}
			defer stop()
		}
		if err := runChild(*child, *childD, *childO, *scale); err != nil {
			if *profile != "" {
				pprof.StopCPUProfile()
			}
			fatalf("%s: %v", *child, err)
		}
		return
	}
	if *render != "" {
		if err := rerender(*render, *out, *name); err != nil {
			fatalf("%v", err)
		}
		return
	}
	list, err := parseEngines(*names)
	if err != nil {
		fatalf("%v", err)
	}
	cmdline := *command
	if cmdline == "" {
		cmdline = strings.Join(os.Args, " ")
	}
	if *profile != "" {
		abs, err := filepath.Abs(*profile)
		if err != nil {
			fatalf("%v", err)
		}
		*profile = abs
		if err := os.MkdirAll(abs, 0o755); err != nil {
			fatalf("%v", err)
		}
	}
	if err := runParent(list, *scale, *out, *name, *dir, *timeout, *keep, cmdline, *profile); err != nil {
		fatalf("%v", err)
	}
}

func parseEngines(s string) ([]string, error) {
	var list []string
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if _, ok := engines[n]; !ok {
			return nil, fmt.Errorf("unknown engine %q (compiled in: %s; lmdb needs -tags lmdb)", n, strings.Join(engineNames(), ", "))
		}
		list = append(list, n)
	}
	if len(list) == 0 {
		return nil, errors.New("no engines selected")
	}
	return list, nil
}

// engineRun is what one engine's process reports.
type engineRun struct {
	Engine string `json:"engine"`
	// FloorNanos is the time of the 1,000 bare write+fdatasync calls beside
	// the engine's directory: the mean of FloorSamples, measured just before
	// and just after the engine's individual writes.
	FloorNanos   int64    `json:"floor_nanos"`
	FloorSamples []int64  `json:"floor_samples_nanos"`
	Results      []result `json:"results"`
	Notes        string   `json:"notes,omitempty"`
	Error        string   `json:"error,omitempty"`
	WallNanos    int64    `json:"wall_nanos"`
	// LoadBefore and LoadAfter are /proc/loadavg when the engine's process
	// started and ended: the machine is shared.
	LoadBefore string `json:"load_before,omitempty"`
	LoadAfter  string `json:"load_after,omitempty"`
}

func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// runParent runs every engine in its own process, one after another, and
// writes the report after each.
func runParent(list []string, scale int, out, name, dir string, timeout time.Duration, keep bool, cmdline, profile string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding own executable: %w", err)
	}
	rep := &report{
		Counts:  countsFor(scale),
		Command: cmdline,
		Machine: describeMachine(dir),
		Engines: list,
	}
	progress("kvbench: scale %d, engines %s, data under %s", scale, strings.Join(list, ", "), dir)
	for _, e := range list {
		run := runEngine(exe, e, scale, dir, timeout, keep, profile)
		if run.Error != "" {
			progress("%s: FAILED: %s", e, run.Error)
		}
		rep.Runs = append(rep.Runs, run)
		if err := rep.write(out, name); err != nil {
			return err
		}
	}
	progress("kvbench: wrote %s", filepath.Join(out, name+".{md,png,json}"))
	return nil
}

// rerender writes the report of an earlier run again, from its JSON.
func rerender(path, out, name string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading results: %w", err)
	}
	var rep report
	if err := json.Unmarshal(data, &rep); err != nil {
		return fmt.Errorf("decoding %s: %w", path, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	return rep.write(out, name)
}

func runEngine(exe, e string, scale int, dir string, timeout time.Duration, keep bool, profile string) engineRun {
	run := engineRun{Engine: e}
	d, err := os.MkdirTemp(dir, "kvbench-"+e+"-")
	if err != nil {
		run.Error = fmt.Sprintf("data directory: %v", err)
		return run
	}
	if !keep {
		defer os.RemoveAll(d)
	}
	resPath := filepath.Join(d, "result.json")
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := []string{"-child", e, "-child-dir", d, "-child-out", resPath, "-scale", fmt.Sprint(scale)}
	if profile != "" {
		args = append(args, "-cpuprofile", profile)
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	data, rerr := os.ReadFile(resPath)
	if rerr == nil {
		rerr = json.Unmarshal(data, &run)
	}
	run.WallNanos = wall.Nanoseconds()
	switch {
	case ctx.Err() != nil:
		run.Error = fmt.Sprintf("killed after the %s timeout", timeout)
	case err != nil && run.Error == "":
		run.Error = fmt.Sprintf("process failed: %v", err)
	case rerr != nil && run.Error == "":
		run.Error = fmt.Sprintf("reading result: %v", rerr)
	}
	return run
}

// runChild runs one engine in this process and writes its engineRun to
// outPath after every row, so that a run killed by the timeout or failing
// part way still reports what it measured.
func runChild(name, dir, outPath string, scale int) error {
	e, ok := engines[name]
	if !ok {
		return fmt.Errorf("unknown engine")
	}
	run := engineRun{Engine: name, LoadBefore: loadAvg()}
	r := &runner{name: name, dir: filepath.Join(dir, "db"), floorDir: dir, c: countsFor(scale)}
	save := func() error {
		run.Results = r.results
		run.FloorSamples, run.FloorNanos = nil, 0
		for _, f := range r.floors {
			run.FloorSamples = append(run.FloorSamples, f.Nanoseconds())
			run.FloorNanos += f.Nanoseconds()
		}
		if len(r.floors) > 0 {
			run.FloorNanos /= int64(len(r.floors))
		}
		run.LoadAfter = loadAvg()
		data, err := json.MarshalIndent(run, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding result: %w", err)
		}
		tmp := outPath + ".tmp"
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return fmt.Errorf("writing result: %w", err)
		}
		if err := os.Rename(tmp, outPath); err != nil {
			return fmt.Errorf("writing result: %w", err)
		}
		return nil
	}
	r.saved = func() {
		if err := save(); err != nil {
			progress("%s: %v", name, err)
		}
	}
	err := func() error {
		if err := os.Mkdir(r.dir, 0o755); err != nil {
			return fmt.Errorf("data directory: %w", err)
		}
		s, err := e.open(r.dir)
		if err != nil {
			return fmt.Errorf("open: %w", err)
		}
		s, err = r.run(s)
		run.Notes = s.Notes()
		if cerr := s.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close: %w", cerr)
		}
		return err
	}()
	if err != nil {
		run.Error = err.Error()
	}
	if serr := save(); serr != nil {
		return serr
	}
	return err
}

// startProfile starts a CPU profile into path and returns its stop function.
func startProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+format+"\n", args...)
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "kvbench: "+format+"\n", args...)
	os.Exit(1)
}

// fmtDur formats d in milliseconds with about three significant digits.
func fmtDur(d time.Duration) string {
	return fmtMillis(float64(d.Nanoseconds())/1e6) + " ms"
}

func fmtMillis(ms float64) string {
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.0f", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1f", ms)
	case ms >= 1:
		return fmt.Sprintf("%.2f", ms)
	default:
		return fmt.Sprintf("%.3f", ms)
	}
}

func fmtBytes(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := int64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.2f %ciB", float64(b)/float64(div), "KMGTPE"[exp])
}
