package main

import (
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// chart draws, per benchmark, the paired speedup of the PGO build in wall
// time and in server CPU time as two bars, with dashed lines at 0.98 (2 %
// slower) and 1.05 (5 % faster).
func (r *results) chart(path string) error {
	var names []string
	var wall, cpu plotter.Values
	for _, m := range r.Metrics {
		if strings.Contains(m.Name, "server CPU") {
			continue
		}
		names = append(names, m.Name)
		wall = append(wall, m.pairedSpeedup())
		c := 0.0
		for _, mc := range r.Metrics {
			if strings.HasPrefix(mc.Name, m.Name+":") && strings.Contains(mc.Name, "server CPU") {
				c = mc.pairedSpeedup()
			}
		}
		cpu = append(cpu, c)
	}
	if len(names) == 0 {
		return nil
	}
	p := plot.New()
	p.Title.Text = "cairnd: default.pgo against -pgo=off, median of the round-by-round ratios (>1: PGO faster)"
	p.Y.Label.Text = "speedup"
	w := vg.Points(5)
	for i, v := range []plotter.Values{wall, cpu} {
		bars, err := plotter.NewBarChart(v, w)
		if err != nil {
			return err
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(2*i-1) * w / 2
		p.Add(bars)
		p.Legend.Add([]string{"wall time / throughput", "server CPU time"}[i], bars)
	}
	for _, y := range []float64{0.98, 1.05} {
		l, err := plotter.NewLine(plotter.XYs{{X: -1, Y: y}, {X: float64(len(names)), Y: y}})
		if err != nil {
			return err
		}
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		l.Color = color.Gray{Y: 80}
		p.Add(l)
	}
	p.Add(plotter.NewGrid())
	top := 1.1
	for _, v := range append(append(plotter.Values{}, wall...), cpu...) {
		top = max(top, v)
	}
	p.Legend.Top = true
	p.Y.Min, p.Y.Max = 0.7, top+0.12 // room for the legend above the bars
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = 1.2
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	return p.Save(40*vg.Centimeter, 16*vg.Centimeter, path)
}
