package main

import (
	"fmt"
	"image/color"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// charts draws NAME-throughput.png (ops/s against client count, one line
// per workload, the ping ceiling dashed) and NAME-p99.png (p99 latency of
// each workload's main operation, log scale). Client counts are evenly
// spaced on the x axis.
func (r *Report) charts(dir, name string) error {
	ws, threads := r.axes()
	if len(threads) == 0 {
		return nil // a load alone has nothing to draw
	}
	ticks := make([]plot.Tick, len(threads))
	for i, t := range threads {
		ticks[i] = plot.Tick{Value: float64(i), Label: strconv.Itoa(t)}
	}
	for _, kind := range []string{"throughput", "p99"} {
		p := plot.New()
		p.X.Label.Text = "client goroutines (one connection each)"
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.X.Min, p.X.Max = -0.2, float64(len(threads)-1)+0.2
		if kind == "throughput" {
			p.Title.Text = "YCSB on cairnd: throughput (ops/s)"
			p.Y.Label.Text = "operations per second"
			p.Y.Min = 0
		} else {
			p.Title.Text = "YCSB on cairnd: p99 latency of each workload's main operation"
			p.Y.Label.Text = "p99 latency (µs, log scale)"
			p.Y.Scale = plot.LogScale{}
			p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		}
		p.Legend.Top = true
		p.Legend.Left = kind == "p99"
		for wi, w := range ws {
			var pts plotter.XYs
			for i, t := range threads {
				x := r.find(w, t)
				if x == nil {
					continue
				}
				v := x.Throughput
				if kind == "p99" {
					v = float64(max(x.Ops[mainOp(w)].P99Us, 1))
				}
				pts = append(pts, plotter.XY{X: float64(i), Y: v})
			}
			if len(pts) == 0 {
				continue
			}
			line, points, err := plotter.NewLinePoints(pts)
			if err != nil {
				return err
			}
			c := plotutil.Color(wi)
			line.Color, points.Color = c, c
			points.Shape = plotutil.Shape(wi)
			label := "workload " + w
			if w == "ping" {
				label = "ping ceiling"
				line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
				line.Color, points.Color = color.Black, color.Black
				points.Shape = draw.CrossGlyph{}
			}
			p.Add(line, points)
			p.Legend.Add(label, line, points)
		}
		path := filepath.Join(dir, fmt.Sprintf("%s-%s.png", name, kind))
		if err := p.Save(18*vg.Centimeter, 12*vg.Centimeter, path); err != nil {
			return err
		}
	}
	return nil
}
