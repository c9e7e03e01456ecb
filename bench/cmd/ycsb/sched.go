package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn/bench/internal/cairndproc"
)

// schedSample is the server process's scheduler counters, summed over its
// threads (/proc/<pid>/task/*): context switches from each thread's status,
// CPU migrations from each thread's sched (nr_migrations, which needs
// CONFIG_SCHED_DEBUG; -1 when absent), CPU time from cairndproc.CPU.
type schedSample struct {
	Voluntary, Nonvoluntary int64
	Migrations              int64
	CPU                     time.Duration
	Threads                 int
}

// SchedFigures are a run's scheduler figures of the server per 1,000
// operations (and its CPU time per operation).
type SchedFigures struct {
	VoluntaryPer1k    float64 `json:"voluntary_cs_per_1k"`
	NonvoluntaryPer1k float64 `json:"nonvoluntary_cs_per_1k"`
	MigrationsPer1k   float64 `json:"migrations_per_1k"` // -1: not available
	CPUusPerOp        float64 `json:"server_cpu_us_per_op"`
	Threads           int     `json:"threads"`
}

func readSched(pid int) (schedSample, bool) {
	var s schedSample
	if pid <= 0 {
		return s, false
	}
	root := filepath.Join("/proc", strconv.Itoa(pid))
	tasks, err := os.ReadDir(filepath.Join(root, "task"))
	if err != nil {
		return s, false
	}
	migrationsKnown := true
	for _, t := range tasks {
		dir := filepath.Join(root, "task", t.Name())
		if b, err := os.ReadFile(filepath.Join(dir, "status")); err == nil {
			s.Voluntary += field(b, "voluntary_ctxt_switches:")
			s.Nonvoluntary += field(b, "nonvoluntary_ctxt_switches:")
		}
		if b, err := os.ReadFile(filepath.Join(dir, "sched")); err == nil && bytes.Contains(b, []byte("nr_migrations")) {
			s.Migrations += field(b, "se.nr_migrations")
		} else {
			migrationsKnown = false
		}
		s.Threads++
	}
	if !migrationsKnown {
		s.Migrations = -1
	}
	s.CPU = cairndproc.CPU(pid)
	return s, true
}

// field reads the integer after the first line starting with name.
func field(b []byte, name string) int64 {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, name); ok {
			rest = strings.TrimLeft(rest, " \t:")
			v, _ := strconv.ParseInt(strings.Fields(rest + " 0")[0], 10, 64)
			return v
		}
	}
	return 0
}

// figures turns two samples into per-operation figures (clock ticks are
// 100 per second on Linux).
func figures(a, b schedSample, ops int64) *SchedFigures {
	if ops <= 0 {
		return nil
	}
	k := 1000 / float64(ops)
	f := &SchedFigures{
		VoluntaryPer1k:    float64(b.Voluntary-a.Voluntary) * k,
		NonvoluntaryPer1k: float64(b.Nonvoluntary-a.Nonvoluntary) * k,
		MigrationsPer1k:   -1,
		CPUusPerOp:        float64(b.CPU-a.CPU) / float64(time.Microsecond) / float64(ops),
		Threads:           b.Threads,
	}
	if a.Migrations >= 0 && b.Migrations >= 0 {
		f.MigrationsPer1k = float64(b.Migrations-a.Migrations) * k
	}
	return f
}
