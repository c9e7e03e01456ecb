package main

import (
	"math"
	"os"
	"runtime/debug"
	"testing"
)

// TestTuneGC: without GOGC and GOMEMLIMIT in the environment cairnd
// collects at gcPercent and sets a soft memory limit below the machine's
// RAM; with GOGC set it keeps the runtime's setting.
func TestTuneGC(t *testing.T) {
	oldPercent := debug.SetGCPercent(37) // not gcPercent: tuneGC must set it
	oldLimit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	})
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOGC")
	os.Unsetenv("GOMEMLIMIT")
	p, limit := tuneGC()
	if p != gcPercent || debug.SetGCPercent(-1) != gcPercent {
		t.Fatalf("GC percent %d, want %d", p, gcPercent)
	}
	if ram := memTotal(); ram > 0 && (limit <= 0 || limit >= ram || debug.SetMemoryLimit(-1) != limit) {
		t.Fatalf("memory limit %d with %d bytes of RAM", limit, ram)
	}
	debug.SetGCPercent(37)
	os.Setenv("GOGC", "37")
	if p, _ := tuneGC(); p != 37 {
		t.Fatalf("with GOGC set: GC percent %d, want the runtime's 37", p)
	}
}
