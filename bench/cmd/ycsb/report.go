package main

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Report is a whole matrix: where and how it ran, the load and every run.
type Report struct {
	Date     string       `json:"date"`
	Finished string       `json:"finished"`
	Machine  string       `json:"machine"`
	Go       string       `json:"go"`
	Commit   string       `json:"commit"`
	Command  string       `json:"command"`
	Label    string       `json:"label,omitempty"`
	Load     *RunResult   `json:"load,omitempty"`
	Runs     []*RunResult `json:"runs"`
}

func newReport(f flags) *Report {
	commit, _ := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	return &Report{
		Date:    time.Now().UTC().Format(time.RFC3339),
		Machine: machine(),
		Go:      runtime.Version(),
		Commit:  strings.TrimSpace(string(commit)),
		Command: "ycsb " + strings.Join(os.Args[1:], " "),
		Label:   f.label,
	}
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

// mainOp is the operation a workload's latency column shows.
func mainOp(w string) string {
	switch w {
	case "e":
		return "SCAN"
	case "ping":
		return "PING"
	case "load":
		return "INSERT"
	}
	return "READ"
}

// find returns the run of workload w at the concurrency; with -repeat,
// the run of median throughput (the lower middle one of an even count).
func (r *Report) find(w string, threads int) *RunResult {
	var rs []*RunResult
	for _, x := range r.Runs {
		if x.Workload == w && x.Threads == threads {
			rs = append(rs, x)
		}
	}
	if len(rs) == 0 {
		return nil
	}
	slices.SortFunc(rs, func(a, b *RunResult) int { return cmp.Compare(a.Throughput, b.Throughput) })
	return rs[(len(rs)-1)/2]
}

// repeats is how many runs each workload and concurrency had.
func (r *Report) repeats() int {
	ws, threads := r.axes()
	n := 0
	for _, x := range r.Runs {
		if len(ws) > 0 && len(threads) > 0 && x.Workload == ws[0] && x.Threads == threads[0] {
			n++
		}
	}
	return n
}

func (r *Report) axes() (ws []string, threads []int) {
	for _, x := range r.Runs {
		if !slices.Contains(ws, x.Workload) {
			ws = append(ws, x.Workload)
		}
		if !slices.Contains(threads, x.Threads) {
			threads = append(threads, x.Threads)
		}
	}
	slices.Sort(threads)
	return ws, threads
}

// markdown renders the tables; charts are the chart files' base name
// ("" for none).
func (r *Report) markdown(charts string) string {
	var b strings.Builder
	ws, threads := r.axes()
	fmt.Fprintf(&b, "# YCSB against cairnd\n\n- Date: %s (finished %s)\n- Machine: %s\n- Go: %s, commit %s\n- Command: `%s`\n",
		r.Date, r.Finished, r.Machine, r.Go, r.Commit, r.Command)
	if r.Label != "" {
		fmt.Fprintf(&b, "- Setting: %s\n", r.Label)
	}
	if n := r.repeats(); n > 1 {
		fmt.Fprintf(&b, "- Each workload ran %d times at each concurrency, interleaved (the whole workload list, then again); every figure is from the run of median throughput\n", n)
	}
	if r.Load != nil {
		s := r.Load.Ops["INSERT"]
		fmt.Fprintf(&b, "- Load: %d records with %d clients in %.1f s, %.0f inserts/s (p99 %d µs)\n",
			r.Load.Operations, r.Load.Threads, r.Load.Seconds, r.Load.Throughput, s.P99Us)
	}
	b.WriteString("\n## Throughput (ops/s) and p99 latency of the main operation (µs)\n\n| workload |")
	for _, t := range threads {
		fmt.Fprintf(&b, " %d clients |", t)
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(threads)) + "\n")
	for _, w := range ws {
		fmt.Fprintf(&b, "| %s (%s) |", w, strings.ToLower(mainOp(w)))
		for _, t := range threads {
			if x := r.find(w, t); x != nil {
				fmt.Fprintf(&b, " %.0f (%d) |", x.Throughput, x.Ops[mainOp(w)].P99Us)
			} else {
				b.WriteString(" |")
			}
		}
		b.WriteString("\n")
	}
	if slices.Contains(ws, "ping") {
		b.WriteString("\n## Share of the ping ceiling at the same concurrency\n\n| workload |")
		for _, t := range threads {
			fmt.Fprintf(&b, " %d |", t)
		}
		b.WriteString("\n|---|" + strings.Repeat("---:|", len(threads)) + "\n")
		for _, w := range ws {
			if w == "ping" {
				continue
			}
			fmt.Fprintf(&b, "| %s |", w)
			for _, t := range threads {
				x, p := r.find(w, t), r.find("ping", t)
				if x != nil && p != nil {
					fmt.Fprintf(&b, " %.0f %% |", 100*x.Throughput/p.Throughput)
				} else {
					b.WriteString(" |")
				}
			}
			b.WriteString("\n")
		}
	}
	if slices.Contains(threads, 40) && slices.Contains(threads, 80) {
		b.WriteString("\n## Throughput at 80 clients ÷ at 40\n\n| workload | ratio |\n|---|---:|\n")
		for _, w := range ws {
			a, c := r.find(w, 40), r.find(w, 80)
			if a != nil && c != nil {
				fmt.Fprintf(&b, "| %s | %.2f |\n", w, c.Throughput/a.Throughput)
			}
		}
	}
	if r.repeats() > 1 {
		b.WriteString("\n## Every run's throughput (ops/s, in the order run)\n\n| workload | clients | runs |\n|---|---:|---|\n")
		for _, t := range threads {
			for _, w := range ws {
				var v []string
				for _, x := range r.Runs {
					if x.Workload == w && x.Threads == t {
						v = append(v, fmt.Sprintf("%.0f", x.Throughput))
					}
				}
				fmt.Fprintf(&b, "| %s | %d | %s |\n", w, t, strings.Join(v, ", "))
			}
		}
	}
	b.WriteString("\n## Server scheduler figures per 1,000 operations\n\n" +
		"Voluntary / involuntary context switches and CPU migrations of all of cairnd's threads (from /proc/PID/task/*/status and sched), server CPU time per operation, client CPU time per operation.\n\n" +
		"| workload | clients | voluntary cs | involuntary cs | migrations | server CPU µs/op | client CPU µs/op | server threads |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, w := range ws {
		for _, t := range threads {
			x := r.find(w, t)
			if x == nil || x.Sched == nil {
				continue
			}
			s := x.Sched
			fmt.Fprintf(&b, "| %s | %d | %.0f | %.0f | %.0f | %.1f | %.1f | %d |\n", w, t, s.VoluntaryPer1k, s.NonvoluntaryPer1k, s.MigrationsPer1k, s.CPUusPerOp, x.ClientCPUus, s.Threads)
		}
	}
	b.WriteString("\n## Latency per operation type (µs)\n\n| workload | clients | operation | count | avg | p50 | p95 | p99 | p99.9 | max | errors | not found |\n|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, w := range ws {
		for _, t := range threads {
			x := r.find(w, t)
			if x == nil {
				continue
			}
			for _, op := range opNames {
				if s, ok := x.Ops[op]; ok {
					fmt.Fprintf(&b, "| %s | %d | %s | %d | %.0f | %d | %d | %d | %d | %d | %d | %d |\n", w, t, op, s.Count, s.AvgUs, s.P50Us, s.P95Us, s.P99Us, s.P999Us, s.MaxUs, s.Errors, s.NotFound)
				}
			}
		}
	}
	if charts != "" {
		fmt.Fprintf(&b, "\n![throughput](%s-throughput.png)\n\n![p99](%s-p99.png)\n", charts, charts)
	}
	return b.String()
}

// write saves NAME.md and the charts in dir.
func (r *Report) write(dir, name string) error {
	if err := r.charts(dir, name); err != nil {
		return fmt.Errorf("charts: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, name+".md"), []byte(r.markdown(name)), 0o644)
}
