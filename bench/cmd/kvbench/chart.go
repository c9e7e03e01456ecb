package main

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

var engineColors = map[string]color.RGBA{
	"kv":     {R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	"lmdb":   {R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"bbolt":  {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	"pebble": {R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	"badger": {R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
}

// chartBase is the bar length of the fastest engine of a row; a bar of
// length chartBase+k is 2^k times slower. Bars stop at chartCap times the
// best (their label still gives the true multiple).
const (
	chartBase = 0.5
	chartCap  = 256
)

// chart draws one group of horizontal bars per row, one bar per engine, of
// length chartBase+log2(figure/best figure of the row): the x axis is
// logarithmic, labelled in multiples of the fastest (or smallest), and each
// bar carries its multiple. The compaction time, which is not in redb's
// table, is left out.
func (r *report) chart(path string) error {
	var rows []*row
	for _, rw := range r.rows() {
		if rw.best() != "" && rw.name != "compaction" {
			rows = append(rows, rw)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	const barW = vg.Length(9)
	k := len(r.Engines)
	group := barW*vg.Length(k) + 10

	p := plot.New()
	p.Title.Text = fmt.Sprintf("kvbench (redb's lmdb_benchmark), scale %d: time or size relative to the best engine of each row (shorter is better)", r.Counts.Scale)
	p.Title.TextStyle.Font.Size = 11
	p.X.Label.Text = fmt.Sprintf("× the best engine of the row (log scale; bars stop at %d×, labels give the true multiple)", chartCap)
	maxRatio := 1.0
	names := make([]string, len(rows))
	for i, rw := range rows {
		label := rw.label()
		if rw.kind == "size" {
			label += " [size]"
		}
		names[len(rows)-1-i] = label // first row on top
	}
	for j, e := range r.Engines {
		vals := make(plotter.Values, len(rows))
		var xys plotter.XYs
		var labels []string
		for i, rw := range rows {
			y := len(rows) - 1 - i
			cell, ok := rw.cells[e]
			v, ok2 := cell.value()
			best, _ := rw.cells[rw.best()].value()
			if !ok || !ok2 {
				xys = append(xys, plotter.XY{X: 0, Y: float64(y)})
				labels = append(labels, " n/a")
				continue
			}
			ratio := float64(max(v, 1)) / float64(max(best, 1))
			maxRatio = max(maxRatio, min(ratio, chartCap))
			vals[y] = chartBase + math.Log2(min(ratio, chartCap))
			xys = append(xys, plotter.XY{X: vals[y], Y: float64(y)})
			labels = append(labels, " "+fmtRatio(ratio))
		}
		bars, err := plotter.NewBarChart(vals, barW)
		if err != nil {
			return fmt.Errorf("chart: %w", err)
		}
		bars.Horizontal = true
		bars.Color = engineColors[e]
		bars.LineStyle.Width = 0
		off := (vg.Length(k-1)/2 - vg.Length(j)) * barW
		bars.Offset = off
		p.Add(bars)
		p.Legend.Add(e, bars)

		lab, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err != nil {
			return fmt.Errorf("chart: %w", err)
		}
		for i := range lab.TextStyle {
			lab.TextStyle[i].Font = font.From(plotter.DefaultFont, 7)
			lab.TextStyle[i].YAlign = text.YCenter
		}
		lab.Offset = vg.Point{X: 2, Y: off}
		p.Add(lab)
	}
	p.NominalY(names...)
	p.Legend.Top = true
	p.Legend.Left = false
	p.Legend.YOffs = -4
	p.X.Min = 0
	p.X.Max = chartBase + math.Log2(maxRatio) + 1.6
	p.X.Tick.Marker = plot.TickerFunc(func(min, max float64) []plot.Tick {
		var ticks []plot.Tick
		for e := 0; chartBase+float64(e) <= max && math.Exp2(float64(e)) <= chartCap; e++ {
			ticks = append(ticks, plot.Tick{Value: chartBase + float64(e), Label: fmt.Sprintf("%g×", math.Exp2(float64(e)))})
		}
		return ticks
	})
	p.Add(plotter.NewGrid())
	height := group*vg.Length(len(rows)) + 110
	if err := p.Save(11*vg.Inch, height, path); err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	return nil
}

func fmtRatio(r float64) string {
	switch {
	case r >= 100:
		return fmt.Sprintf("%.0f×", r)
	case r >= 10:
		return fmt.Sprintf("%.1f×", r)
	default:
		return fmt.Sprintf("%.2f×", r)
	}
}
