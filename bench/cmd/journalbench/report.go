package main

import (
	"fmt"
	"os"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

func rate(docs int, r row) float64 { return float64(docs*r.Writers) / (r.ElapsedMs / 1000) }

// render prints both tables and the targets as markdown.
func render(rep report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# SERVER-9754 journal benchmark on cairnd\n\n- Date: %s\n- Machine: %s\n- Command: `%s` (in bench/)\n- %d documents per writer and row, writeConcern {j: true}, one InsertOne at a time per writer, journal compressor %s; medians of %d runs, each alternating with its floor\n\n",
		rep.Date, rep.Machine, rep.Command, rep.Docs, rep.Compressor, rep.Reps)
	b.WriteString("## One writer, by document size\n\n")
	b.WriteString("| BSON size (B) | elapsed (ms) | inserts/s | floor (ms) | rate ÷ floor rate | j:false (ms) | floor ÷ (j:false + floor) | elapsed ÷ elapsed at 98 B | floor ÷ floor at 98 B | fdatasync per insert | server's mean fdatasync (ms) | j:true − j:false per insert ÷ floor per insert | disk bytes per inserted byte | in checkpoints (ms) |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	minRatio, worstGrowth, worstExtra := 10.0, 0.0, 0.0
	var first row
	for i, r := range rep.BySize {
		if i == 0 {
			first = r
		}
		ratio := r.FloorMs / r.ElapsedMs
		minRatio = min(minRatio, ratio)
		g, fg := r.ElapsedMs/first.ElapsedMs, r.FloorMs/first.FloorMs
		worstGrowth = max(worstGrowth, g/fg)
		extra := (r.ElapsedMs - r.UnsyncedMs) / r.FloorMs // per insert, as both count the same inserts
		worstExtra = max(worstExtra, extra)
		fmt.Fprintf(&b, "| %d | %.0f | %.0f | %.0f | %.2f | %.0f | %.2f | %.2f | %.2f | %.3f | %.3f | %.2f | %.2f | %.0f |\n", r.Size, r.ElapsedMs, rate(rep.Docs, r), r.FloorMs, ratio, r.UnsyncedMs, r.FloorMs/(r.UnsyncedMs+r.FloorMs), g, fg, r.FsyncsPerWrite, r.FsyncMs, extra, r.DiskPerByte, r.CheckpointMs)
	}
	b.WriteString("\n## 1 to N writers, 8918-byte documents\n\n")
	b.WriteString("| writers | elapsed (ms) | inserts/s | × one writer | j:false inserts/s | j:true ÷ j:false throughput | inserts per fdatasync | fdatasync per insert | server's mean fdatasync (ms) | disk bytes per inserted byte | in checkpoints (ms) |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var one, last row
	for i, r := range rep.ByWriters {
		if i == 0 {
			one = r
		}
		last = r
		fmt.Fprintf(&b, "| %d | %.0f | %.0f | %.2f | %.0f | %.2f | %.2f | %.3f | %.3f | %.2f | %.0f |\n", r.Writers, r.ElapsedMs, rate(rep.Docs, r), rate(rep.Docs, r)/rate(rep.Docs, one), float64(rep.Docs*r.Writers)/(r.UnsyncedMs/1000), r.UnsyncedMs/r.ElapsedMs, r.GroupSize, r.FsyncsPerWrite, r.FsyncMs, r.DiskPerByte, r.CheckpointMs)
	}
	b.WriteString("\nj:false: the same inserts acknowledged without waiting for the journal's fdatasync (all of the driver's and the server's work but the flush). floor ÷ (j:false + floor) is the most a synchronous writer could reach against the floor if the flush cost no more than the bare fdatasync.\n")
	b.WriteString("\n## Targets\n\n")
	mark := func(ok bool) string {
		if ok {
			return "met"
		}
		return "missed"
	}
	fmt.Fprintf(&b, "- One writer at least 80 %% of the bare write+fdatasync rate: lowest ratio over the sizes %.2f — %s.\n", minRatio, mark(minRatio >= 0.8))
	if len(rep.ByWriters) > 0 {
		sp := rate(rep.Docs, last) / rate(rep.Docs, one)
		fmt.Fprintf(&b, "- %d writers at least 5× the one-writer rate: %.2f× — %s.\n", last.Writers, sp, mark(sp >= 5))
	}
	fmt.Fprintf(&b, "- Issue 27: one j:true writer's latency at most j:false's plus 1.2 × the bare fdatasync: worst (j:true − j:false) ÷ floor over the sizes %.2f — %s.\n", worstExtra, mark(worstExtra <= 1.2))
	for _, r := range rep.ByWriters {
		if r.Writers == 8 {
			fmt.Fprintf(&b, "- Issue 27: 8 j:true writers at least 80 %% of 8 j:false writers' throughput: %.0f %% — %s.\n", 100*r.UnsyncedMs/r.ElapsedMs, mark(r.UnsyncedMs/r.ElapsedMs >= 0.8))
		}
	}
	b.WriteString("- At most one fdatasync per group flush: by construction (one leader per flush, journal.go); the fdatasync-per-insert column shows the sharing.\n")
	fmt.Fprintf(&b, "- Elapsed time grows with document size no faster than the floor: worst (elapsed growth ÷ floor growth) %.2f — %s.\n", worstGrowth, mark(worstGrowth <= 1.0))
	return b.String()
}

// chart draws elapsed time by size (cairnd and floor) and the insert rate
// by writer count side by side.
func chart(rep report, path string) error {
	left := plot.New()
	left.Title.Text = "One writer, 10,000 j:true inserts"
	left.X.Label.Text = "document size (bytes, log)"
	left.Y.Label.Text = "elapsed (ms)"
	left.X.Scale = plot.LogScale{}
	left.X.Tick.Marker = plot.LogTicks{Prec: -1}
	var srv, fl plotter.XYs
	for _, r := range rep.BySize {
		srv = append(srv, plotter.XY{X: float64(r.Size), Y: r.ElapsedMs})
		fl = append(fl, plotter.XY{X: float64(r.Size), Y: r.FloorMs})
	}
	if err := plotutil.AddLinePoints(left, "cairnd", srv, "write+fdatasync floor", fl); err != nil {
		return err
	}
	left.Legend.Top = true
	left.Add(plotter.NewGrid())

	right := plot.New()
	right.Title.Text = "8918-byte j:true inserts"
	right.X.Label.Text = "writers"
	right.Y.Label.Text = "inserts per second"
	var rt plotter.XYs
	for _, r := range rep.ByWriters {
		rt = append(rt, plotter.XY{X: float64(r.Writers), Y: rate(rep.Docs, r)})
	}
	if err := plotutil.AddLinePoints(right, "cairnd", rt); err != nil {
		return err
	}
	right.Legend.Top = true
	right.Add(plotter.NewGrid())

	img := vgimg.New(12*vg.Inch, 4.5*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Inch / 4, PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8}
	plots := [][]*plot.Plot{{left, right}}
	canvases := plot.Align(plots, tiles, dc)
	left.Draw(canvases[0][0])
	right.Draw(canvases[0][1])
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = vgimg.PngCanvas{Canvas: img}.WriteTo(f)
	return err
}
