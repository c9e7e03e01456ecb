package main

import (
	"os"
	"runtime/debug"
)

// The garbage collector's pacing. cairnd collects at Go's default pace
// (gcPercent: collect when the heap has doubled since the last
// collection) and bounds the heap with a soft memory limit
// (memoryLimitShare of the machine's RAM, or of its control group's
// limit), past which the collector runs as often as it must: the storage
// engine's and the column cache's budgets stay well below it.
//
// A larger percentage was tried and is slower for analytics: from
// GOGC=400 (which had helped one million-group $group at 200,000 rows
// before its tables were advised for huge pages) back to 100, ClickBench's
// 43 queries at 1,000,000 rows went from 10.3–11.4 s to 9.3–9.5 s hot
// (GOGC=200: 9.9–10.0 s; 2-core Intel Xeon, 2026-11-30). With a high
// target each query's group tables and buffers come from memory not
// touched for a while (page faults, cold caches and TLB) rather than from
// what the previous collection just freed. Index builds stay within
// 1.03× of their scan-and-sort floor at 100.
//
// GOGC and GOMEMLIMIT in the environment take precedence, as for any Go
// program.
const (
	gcPercent        = 100
	memoryLimitShare = 0.8
)

// tuneGC applies the pacing above where the environment does not set
// its own, and reports what holds: the GC percentage and the memory
// limit in bytes (math.MaxInt64: none).
func tuneGC() (percent int, limit int64) {
	percent = debug.SetGCPercent(-1)
	if _, set := os.LookupEnv("GOGC"); !set {
		percent = gcPercent
	}
	debug.SetGCPercent(percent)
	limit = debug.SetMemoryLimit(-1)
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		if ram := memTotal(); ram > 0 {
			limit = int64(float64(ram) * memoryLimitShare)
			debug.SetMemoryLimit(limit)
		}
	}
	return percent, limit
}
