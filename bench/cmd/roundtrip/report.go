package main

import (
	"fmt"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

func (r *Report) markdown(threads []int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Round trips: echo floor, ping ceiling and go-ycsb on cairnd\n\n- Date: %s\n- Machine: %s\n- Command: `%s`\n- Reply size (cairnd's ping reply): %d bytes; request: a driver's ping, %d bytes\n\n",
		r.Date, r.Machine, r.Command, r.ReplyBytes, len(pingRequest()))
	b.WriteString("## Floor and ceiling (round trips/s, medians; p50 / p99 µs)\n\n")
	b.WriteString("echo: the minimal Go client against the minimal Go echo server. raw ping: the same client sending the same bytes to cairnd. driver ping: cmd/ycsb's ping pseudo-workload (the official Go driver, one connection per client).\n\n")
	b.WriteString("| clients | echo floor | raw ping | raw ping ÷ echo | driver ping | driver ping ÷ echo |\n|---:|---:|---:|---:|---:|---:|\n")
	for _, t := range threads {
		e, c := r.median("echo", t), r.median("cairnd", t)
		if e == nil || c == nil {
			continue
		}
		dp, dr := "–", "–"
		if v, ok := r.Ceiling[t]; ok {
			dp, dr = fmt.Sprintf("%.0f", v), pct(v/e.Throughput)
		}
		fmt.Fprintf(&b, "| %d | %.0f (%.0f / %.0f) | %.0f (%.0f / %.0f) | %s | %s | %s |\n", t, e.Throughput, e.P50us, e.P99us, c.Throughput, c.P50us, c.P99us, pct(c.Throughput/e.Throughput), dp, dr)
	}
	ws := r.workloads()
	if len(ws) > 0 {
		b.WriteString("\n## go-ycsb v1.0.3 (mongodb binding): throughput (ops/s) and share of the driver's ping ceiling\n\n")
		b.WriteString("| workload |")
		sep := "|---|"
		for _, t := range threads {
			fmt.Fprintf(&b, " %d clients | ÷ ping |", t)
			sep += "---:|---:|"
		}
		b.WriteString("\n" + sep + "\n")
		for _, w := range ws {
			fmt.Fprintf(&b, "| %s |", w)
			for _, t := range threads {
				g := r.goResult(w, t)
				if g == nil {
					b.WriteString(" – | – |")
					continue
				}
				ratio := "–"
				if v, ok := r.Ceiling[t]; ok && v > 0 {
					ratio = pct(g.Total / v)
				}
				fmt.Fprintf(&b, " %.0f | %s |", g.Total, ratio)
			}
			b.WriteString("\n")
		}
		b.WriteString("\n## go-ycsb latency per operation (p50 / p99 µs)\n\n| workload | clients | operations |\n|---|---:|---|\n")
		for _, g := range r.GoYCSB {
			var parts []string
			for _, op := range []string{"READ", "UPDATE", "INSERT", "SCAN", "READ_MODIFY_WRITE"} {
				if l, ok := g.Ops[op]; ok {
					parts = append(parts, fmt.Sprintf("%s %.0f / %.0f", op, l.P50, l.P99))
				}
			}
			fmt.Fprintf(&b, "| %s | %d | %s |\n", g.Workload, g.Threads, strings.Join(parts, ", "))
		}
	}
	if len(r.Project) > 0 {
		b.WriteString("\n## The project's YCSB generator (cmd/ycsb) in the same run, share of its ping ceiling\n\n| workload |")
		for _, t := range threads {
			fmt.Fprintf(&b, " %d |", t)
		}
		b.WriteString("\n|---|" + strings.Repeat("---:|", len(threads)) + "\n")
		for _, w := range []string{"a", "b", "c", "d", "e", "f"} {
			byT, ok := r.Project[w]
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "| %s |", w)
			for _, t := range threads {
				if v, ok := byT[t]; ok && r.Ceiling[t] > 0 {
					fmt.Fprintf(&b, " %.0f (%s) |", v, pct(v/r.Ceiling[t]))
				} else {
					b.WriteString(" – |")
				}
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func pct(f float64) string { return fmt.Sprintf("%.0f %%", 100*f) }

// chart draws throughput against client count: the echo floor, raw and
// driver ping, and each go-ycsb workload.
func (r *Report) chart(path string, threads []int) error {
	p := plot.New()
	p.Title.Text = "Round trips on cairnd: floor, ceiling and go-ycsb"
	p.X.Label.Text = "clients (one connection each)"
	p.Y.Label.Text = "operations per second"
	p.Y.Min = 0
	ticks := make([]plot.Tick, len(threads))
	for i, t := range threads {
		ticks[i] = plot.Tick{Value: float64(i), Label: strconv.Itoa(t)}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	var lines []any
	add := func(label string, v func(t int) (float64, bool)) {
		var pts plotter.XYs
		for i, t := range threads {
			if y, ok := v(t); ok {
				pts = append(pts, plotter.XY{X: float64(i), Y: y})
			}
		}
		if len(pts) > 0 {
			lines = append(lines, label, pts)
		}
	}
	add("echo floor", func(t int) (float64, bool) {
		m := r.median("echo", t)
		return throughput(m), m != nil
	})
	add("raw ping", func(t int) (float64, bool) {
		m := r.median("cairnd", t)
		return throughput(m), m != nil
	})
	add("driver ping", func(t int) (float64, bool) { v, ok := r.Ceiling[t]; return v, ok })
	for _, w := range r.workloads() {
		add("go-ycsb "+w, func(t int) (float64, bool) {
			g := r.goResult(w, t)
			if g == nil {
				return 0, false
			}
			return g.Total, true
		})
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return err
	}
	return p.Save(9*vg.Inch, 5*vg.Inch, path)
}

func throughput(m *RawResult) float64 {
	if m == nil {
		return 0
	}
	return m.Throughput
}
