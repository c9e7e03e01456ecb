package main

import (
	"fmt"
	"strings"
)

// targets renders the checks of issue 2's targets for the kv column against
// its peers in this run, or "" if kv did not run.
func (r *report) targets() string {
	kvRun := r.run("kv")
	if kvRun == nil || len(kvRun.Results) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Issue 2 targets for kv (ratios within this run)\n\n")
	b.WriteString("Judged on wall time, as the targets are; the CPU-time ratio (user+system of each process) is shown beside it because the machine is shared.\n\n")
	b.WriteString("| target | row | kv | peer | kv ÷ peer | limit | met | kv ÷ peer, CPU time |\n|---|---|---:|---:|---:|---:|:---:|---:|\n")
	check := func(target, rowName, peerName string, kv, peer result, limit float64) {
		kvV, ok1 := kv.value()
		pV, ok2 := peer.value()
		if !ok1 || !ok2 || pV == 0 {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | — | %.2f | n/a | — |\n", target, rowName, kv, peer, limit)
			return
		}
		ratio := float64(kvV) / float64(pV)
		met := "yes"
		if ratio > limit {
			met = fmt.Sprintf("**no** (%.0f%% over)", (ratio/limit-1)*100)
		}
		cpu := "—"
		if kv.Kind == "time" && peer.CPUNanos > 0 {
			cpu = fmt.Sprintf("%.2f", float64(kv.CPUNanos)/float64(peer.CPUNanos))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s (%s) | %.2f | %.2f | %s | %s |\n", target, rowName, kv, peer, peerName, ratio, limit, met, cpu)
	}
	rows := r.rows()
	for _, rw := range rows {
		if rw.kind != "time" || rw.name == "compaction" {
			continue
		}
		if p, ok := rw.cells["bbolt"]; ok {
			check("≤ bbolt", rw.label(), "bbolt", rw.cells["kv"], p, 1)
		}
	}
	for _, rw := range rows {
		if !strings.HasPrefix(rw.name, "random reads") && rw.name != "random range reads" {
			continue
		}
		if p, ok := rw.cells["lmdb"]; ok {
			check("≤ 1.25 × LMDB", rw.label(), "lmdb", rw.cells["kv"], p, 1.25)
		}
	}
	for _, rw := range rows {
		switch {
		case rw.name == "individual writes" && kvRun.FloorNanos > 0:
			floor := result{Name: "floor", Kind: "time", Nanos: kvRun.FloorNanos}
			check("≤ 1.5 × floor", rw.name, "floor", rw.cells["kv"], floor, 1.5)
		case rw.name == "bulk load":
			if p, ok := rw.cells["pebble"]; ok {
				check("≤ pebble", rw.name, "pebble", rw.cells["kv"], p, 1)
			}
		case rw.name == "compacted size":
			if p, ok := rw.cells["bbolt"]; ok {
				check("≤ bbolt", rw.name, "bbolt", rw.cells["kv"], p, 1)
			}
		}
	}
	b.WriteString("\n")
	return b.String()
}
