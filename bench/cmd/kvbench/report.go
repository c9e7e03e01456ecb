package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// report is the whole run: what the parent writes as NAME.json and renders
// as NAME.md and NAME.png.
type report struct {
	Counts  counts      `json:"counts"`
	Command string      `json:"command"`
	Machine machine     `json:"machine"`
	Engines []string    `json:"engines"`
	Runs    []engineRun `json:"runs"`
}

type machine struct {
	Date      string `json:"date"`
	NProc     int    `json:"nproc"`
	CPU       string `json:"cpu"`
	Memory    string `json:"memory"`
	Disk      string `json:"disk"`
	Kernel    string `json:"kernel"`
	GoVersion string `json:"go_version"`
	Commit    string `json:"commit,omitempty"`
}

// describeMachine records where the run happened; dir is the data directory.
func describeMachine(dir string) machine {
	m := machine{
		Date:      time.Now().UTC().Format("Mon Jan 2 15:04:05 UTC 2006"),
		NProc:     runtime.NumCPU(),
		GoVersion: runtime.Version(),
		Memory:    shell("free", "-g"),
		Disk:      shell("df", "-h", dir),
		Kernel:    shell("uname", "-sr"),
		Commit:    shell("git", "rev-parse", "--short", "HEAD"),
	}
	if top := shell("git", "rev-parse", "--show-toplevel"); top != "" && m.Commit != "" {
		if dirty := shell("git", "-C", top, "status", "--porcelain", "--", "kv"); dirty != "" {
			m.Commit += " (kv/ had uncommitted changes in the working tree)"
		}
	}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// shell returns the trimmed output of a command, or "" if it fails.
func shell(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// row is one line of the table: the n-th result of that name.
type row struct {
	name  string
	nth   int
	kind  string
	cells map[string]result // by engine
}

// rows lines up the engines' results: the k-th occurrence of a name in one
// engine's results goes with the k-th occurrence in the others'.
func (r *report) rows() []*row {
	var rows []*row
	index := map[string]*row{}
	for _, run := range r.Runs {
		seen := map[string]int{}
		for _, res := range run.Results {
			nth := seen[res.Name]
			seen[res.Name]++
			id := fmt.Sprintf("%s#%d", res.Name, nth)
			rw := index[id]
			if rw == nil {
				rw = &row{name: res.Name, nth: nth, kind: res.Kind, cells: map[string]result{}}
				index[id] = rw
				rows = append(rows, rw)
			}
			if rw.kind == "na" {
				rw.kind = res.Kind
			}
			rw.cells[run.Engine] = res
		}
	}
	return rows
}

// label names the row; a repeated measurement is numbered.
func (rw *row) label() string {
	if rw.nth > 0 {
		return fmt.Sprintf("%s (run %d)", rw.name, rw.nth+1)
	}
	return rw.name
}

// best returns the engine with the smallest figure in the row, or "".
func (rw *row) best() string {
	bestE, bestV := "", int64(-1)
	for e, c := range rw.cells {
		v, ok := c.value()
		if !ok {
			continue
		}
		if bestV < 0 || v < bestV || (v == bestV && e < bestE) {
			bestE, bestV = e, v
		}
	}
	return bestE
}

// value is the figure compared across engines: nanoseconds or allocated
// bytes.
func (c result) value() (int64, bool) {
	switch c.Kind {
	case "time":
		return c.Nanos, true
	case "size":
		return c.Bytes, true
	}
	return 0, false
}

func (c result) String() string {
	switch c.Kind {
	case "time":
		return fmtMillis(float64(c.Nanos) / 1e6)
	case "size":
		return fmtBytes(c.Bytes)
	case "na":
		return "N/A"
	}
	return "—"
}

func (r *report) run(engine string) *engineRun {
	for i := range r.Runs {
		if r.Runs[i].Engine == engine {
			return &r.Runs[i]
		}
	}
	return nil
}

// write writes NAME.json, NAME.md and NAME.png into dir.
func (r *report) write(dir, name string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding results: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".md"), []byte(r.markdown(name)), 0o644); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	if err := r.chart(filepath.Join(dir, name+".png")); err != nil {
		return fmt.Errorf("writing chart: %w", err)
	}
	return nil
}

func (r *report) markdown(name string) string {
	var b strings.Builder
	c := r.Counts
	m := r.Machine
	fmt.Fprintf(&b, "# kvbench: redb's lmdb_benchmark, scale %d\n\n", c.Scale)
	fmt.Fprintf(&b, "- Date: %s\n", m.Date)
	fmt.Fprintf(&b, "- Command: `%s`\n", r.Command)
	if m.Commit != "" {
		fmt.Fprintf(&b, "- Commit: %s\n", m.Commit)
	}
	fmt.Fprintf(&b, "- Machine: %d CPUs (`nproc`), %s; %s\n", m.NProc, m.CPU, m.Kernel)
	fmt.Fprintf(&b, "- Go: %s\n", m.GoVersion)
	fmt.Fprintf(&b, "- Memory (`free -g`):\n\n```\n%s\n```\n\n", m.Memory)
	fmt.Fprintf(&b, "- Data directory's disk (`df -h`):\n\n```\n%s\n```\n\n", m.Disk)
	fmt.Fprintf(&b, "Workload: keys of %d and values of %d random bytes from a seeded generator; "+
		"bulk load of %d inserts in one transaction; %d transactions of one insert; %d transactions of %d inserts; len(); "+
		"%d × %d random point reads; %d × %d range reads of %d entries from a random key; "+
		"all %d keys read once split over 4, 8, 16 and 32 goroutines; removal of the first half in one transaction; "+
		"size before and after compaction (blocks allocated on disk; one durable insert follows the compaction, as in lmdb_benchmark). "+
		"Every engine commits in its fully durable mode, in its own process, one after another, in a fresh directory on the same disk. "+
		"Times in milliseconds; the best figure of each row is bold.\n\n",
		keySize, valueSize, c.Bulk, c.Individual, c.BatchTxns, c.BatchSize,
		readIterations, c.Reads, scanIterations, c.Scans, c.ScanLen, c.Elements)

	b.WriteString("| |")
	for _, e := range r.Engines {
		fmt.Fprintf(&b, " %s |", e)
	}
	b.WriteString("\n|---|")
	for range r.Engines {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, rw := range r.rows() {
		best := rw.best()
		label := rw.label()
		if rw.name == "compaction" {
			label = "compaction (not in redb's table)"
		}
		fmt.Fprintf(&b, "| %s |", label)
		for _, e := range r.Engines {
			cell, ok := rw.cells[e]
			s := "—"
			if ok {
				s = cell.String()
			}
			if e == best {
				s = "**" + s + "**"
			}
			fmt.Fprintf(&b, " %s |", s)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "| floor: %d × write(%d B)+fdatasync (mean of before and after the individual writes) |", floorWrites, floorRecordSize)
	for _, e := range r.Engines {
		run := r.run(e)
		s := "—"
		if run != nil && run.FloorNanos > 0 {
			s = fmtMillis(float64(run.FloorNanos) / 1e6)
		}
		fmt.Fprintf(&b, " %s |", s)
	}
	b.WriteString("\n| individual writes ÷ floor |")
	for _, e := range r.Engines {
		fmt.Fprintf(&b, " %s |", r.floorRatio(e))
	}
	b.WriteString("\n\n")
	b.WriteString("The floor is measured by each engine's process beside the engine's data directory, just before and just after the engine's individual writes: " +
		"1,000 bare pwrite+fdatasync calls at consecutive offsets of a file preallocated by writing zeros and syncing. " +
		"The machine is shared, so compare figures as ratios within one run.\n\n")

	b.WriteString("### CPU time\n\nUser+system CPU time of the engine's process (all its threads, background work included) during each timed row, in milliseconds: " +
		"steadier than wall time when other work shares the machine.\n\n| |")
	for _, e := range r.Engines {
		fmt.Fprintf(&b, " %s |", e)
	}
	b.WriteString("\n|---|")
	for range r.Engines {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, rw := range r.rows() {
		if rw.kind != "time" {
			continue
		}
		best, bestE := int64(-1), ""
		for _, e := range r.Engines {
			if c, ok := rw.cells[e]; ok && c.Kind == "time" && (best < 0 || c.CPUNanos < best) {
				best, bestE = c.CPUNanos, e
			}
		}
		fmt.Fprintf(&b, "| %s |", rw.label())
		for _, e := range r.Engines {
			s := "—"
			if c, ok := rw.cells[e]; ok && c.Kind == "time" {
				s = fmtMillis(float64(c.CPUNanos) / 1e6)
				if e == bestE {
					s = "**" + s + "**"
				}
			}
			fmt.Fprintf(&b, " %s |", s)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")

	if t := r.targets(); t != "" {
		b.WriteString(t)
	}

	fmt.Fprintf(&b, "![chart](%s.png)\n\n", name)
	b.WriteString("## Engines\n\n")
	for _, e := range r.Engines {
		run := r.run(e)
		if run == nil {
			continue
		}
		fmt.Fprintf(&b, "- **%s**", e)
		if run.Notes != "" {
			fmt.Fprintf(&b, ": %s", run.Notes)
		}
		fmt.Fprintf(&b, " (process wall time %s; load average %s at its start, %s at its end)",
			time.Duration(run.WallNanos).Round(time.Millisecond), run.LoadBefore, run.LoadAfter)
		if run.Error != "" {
			fmt.Fprintf(&b, ". **Failed:** %s", run.Error)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (r *report) floorRatio(e string) string {
	run := r.run(e)
	if run == nil || run.FloorNanos <= 0 {
		return "—"
	}
	for _, res := range run.Results {
		if res.Name == "individual writes" && res.Kind == "time" {
			return fmt.Sprintf("%.2f×", float64(res.Nanos)/float64(run.FloorNanos))
		}
	}
	return "—"
}
