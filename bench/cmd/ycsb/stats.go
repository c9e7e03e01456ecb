package main

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in microseconds, as YCSB reports them, from 1 µs
// to one minute with three significant digits.
const (
	histMin    = 1
	histMax    = 60_000_000
	histDigits = 3
)

// opHists are one goroutine's latency histograms, one per operation type;
// goroutines record without sharing and the histograms are merged at the
// end.
type opHists struct {
	h        [numOps]*hdrhistogram.Histogram
	errors   [numOps]int64
	notFound [numOps]int64
}

func newOpHists() *opHists {
	var o opHists
	for i := range o.h {
		o.h[i] = hdrhistogram.New(histMin, histMax, histDigits)
	}
	return &o
}

func (o *opHists) record(op int, d time.Duration) {
	us := d.Microseconds()
	if us < histMin {
		us = histMin
	}
	_ = o.h[op].RecordValue(min(us, histMax))
}

func (o *opHists) merge(other *opHists) {
	for i := range o.h {
		o.h[i].Merge(other.h[i])
		o.errors[i] += other.errors[i]
		o.notFound[i] += other.notFound[i]
	}
}

// OpStats is one operation type's summary in a run's result.
type OpStats struct {
	Count    int64   `json:"count"`
	Errors   int64   `json:"errors,omitempty"`
	NotFound int64   `json:"not_found,omitempty"`
	AvgUs    float64 `json:"avg_us"`
	P50Us    int64   `json:"p50_us"`
	P95Us    int64   `json:"p95_us"`
	P99Us    int64   `json:"p99_us"`
	P999Us   int64   `json:"p999_us"`
	MaxUs    int64   `json:"max_us"`
}

func (o *opHists) summary() map[string]OpStats {
	out := map[string]OpStats{}
	for i, h := range o.h {
		if h.TotalCount() == 0 && o.errors[i] == 0 {
			continue
		}
		out[opNames[i]] = OpStats{
			Count: h.TotalCount(), Errors: o.errors[i], NotFound: o.notFound[i], AvgUs: h.Mean(),
			P50Us: h.ValueAtQuantile(50), P95Us: h.ValueAtQuantile(95), P99Us: h.ValueAtQuantile(99),
			P999Us: h.ValueAtQuantile(99.9), MaxUs: h.Max(),
		}
	}
	return out
}

// progress prints YCSB's status line (elapsed, operations, current rate)
// every second on standard error until stop is closed.
func progress(label string, done *atomic.Int64, total int64, stop <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	start := time.Now()
	last, lastAt := int64(0), start
	for {
		select {
		case <-stop:
			fmt.Fprintf(os.Stderr, "\r%s\r", strings.Repeat(" ", 100))
			return
		case now := <-t.C:
			d := done.Load()
			rate := float64(d-last) / now.Sub(lastAt).Seconds()
			last, lastAt = d, now
			fmt.Fprintf(os.Stderr, "\r%-24s %4.0f s: %9d of %d operations; %8.0f current ops/s   ",
				label, now.Sub(start).Seconds(), d, total, rate)
		}
	}
}
