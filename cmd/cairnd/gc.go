package main

import (
	"os"
	"runtime/debug"
)

// The garbage collector's pacing. Go's default (GOGC=100: collect when
// the heap has doubled since the last collection) suits programs whose
// live heap is small. A database server's is not: a $group over a
// million keys holds a million small groups full of pointers, and every
// collection marks them all, so that with the default a third of such a
// query's CPU time went to marking (ClickBench's Q32 at 200,000 rows:
// 2.9 µs of CPU per row with GOGC=100, 1.6 µs with 400). cairnd therefore
// collects less often (gcPercent) and bounds the heap with a soft memory
// limit instead (memoryLimitShare of the machine's RAM), past which the
// collector runs as often as it must: the storage engine's and the
// column cache's budgets stay well below it.
//
// GOGC and GOMEMLIMIT in the environment take precedence, as for any Go
// program.
const (
	gcPercent        = 400
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
