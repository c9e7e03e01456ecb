package main

import (
	"encoding/json"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// report is everything one run measured.
type report struct {
	Date            string  `json:"date"`
	Machine         string  `json:"machine"`
	GoVersion       string  `json:"go"`
	Command         string  `json:"command"`
	Rows            int     `json:"rows"`
	Seed            uint64  `json:"seed"`
	Loader          string  `json:"loader"`
	ImportCommand   string  `json:"importCommand,omitempty"`
	GenerateSeconds float64 `json:"generateSeconds"`
	ImportSeconds   float64 `json:"importSeconds"`
	IndexSeconds    float64 `json:"indexSeconds"`
	ImportServerCPU float64 `json:"importServerCpu"` // CPU seconds, when known
	ImportToolCPU   float64 `json:"importToolCpu"`
	IndexServerCPU  float64 `json:"indexServerCpu"`
	DataBytes       int64   `json:"dataBytes"`    // collStats size (BSON)
	StorageBytes    int64   `json:"storageBytes"` // collStats storageSize
	DiskBytes       int64   `json:"diskBytes"`    // the data directory
	// LoadDate is set when the load figures come from an earlier run that
	// loaded the reused data directory.
	LoadDate   string        `json:"loadDate,omitempty"`
	Queries    []queryResult `json:"queries"`
	Mismatches int           `json:"mismatches"`
	// With -versus: the second binary and its times, taken in turns with
	// those in Queries.
	VersusBinary string        `json:"versusBinary,omitempty"`
	Versus       []queryResult `json:"versus,omitempty"`
	// With -columnstore: the column store index's build time and size.
	ColumnStoreSeconds float64 `json:"columnStoreSeconds,omitempty"`
	ColumnStoreCPU     float64 `json:"columnStoreCpu,omitempty"`
	ColumnStoreBytes   int64   `json:"columnStoreBytes,omitempty"`
	// With -duckdb: DuckDB's version, threads, load and times (CPU is this
	// process's, DuckDB running in it).
	DuckVersion     string        `json:"duckVersion,omitempty"`
	DuckThreads     int           `json:"duckThreads,omitempty"`
	DuckLoadSeconds float64       `json:"duckLoadSeconds,omitempty"`
	DuckLoadCPU     float64       `json:"duckLoadCpu,omitempty"`
	DuckFileBytes   int64         `json:"duckFileBytes,omitempty"`
	Duck            []queryResult `json:"duck,omitempty"`
}

// loadFigures are what a run that loads records for later -reuse runs.
type loadFigures struct {
	Date            string  `json:"date"`
	Loader          string  `json:"loader"`
	ImportCommand   string  `json:"importCommand,omitempty"`
	ImportSeconds   float64 `json:"importSeconds"`
	IndexSeconds    float64 `json:"indexSeconds"`
	ImportServerCPU float64 `json:"importServerCpu"`
	ImportToolCPU   float64 `json:"importToolCpu"`
	IndexServerCPU  float64 `json:"indexServerCpu"`
}

func (r *report) writeLoad(path string) error {
	b, err := json.Marshal(loadFigures{r.Date, r.Loader, r.ImportCommand, r.ImportSeconds, r.IndexSeconds,
		r.ImportServerCPU, r.ImportToolCPU, r.IndexServerCPU})
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func (r *report) readLoad(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var l loadFigures
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	r.LoadDate, r.Loader, r.ImportCommand = l.Date, l.Loader, l.ImportCommand
	r.ImportSeconds, r.IndexSeconds = l.ImportSeconds, l.IndexSeconds
	r.ImportServerCPU, r.ImportToolCPU, r.IndexServerCPU = l.ImportServerCPU, l.ImportToolCPU, l.IndexServerCPU
	return nil
}

// machine describes the CPU and core count.
func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%d cores, %s, %s/%s", runtime.NumCPU(), model, runtime.GOOS, runtime.GOARCH)
}

func (r *report) totalHot() (float64, int) {
	var sum float64
	n := 0
	for _, q := range r.Queries {
		if h := q.hot(); h >= 0 {
			sum += h
			n++
		}
	}
	return sum, n
}

// totalHotCPU sums, over the queries, the least server CPU time of runs
// 2..n (0 when not measured).
func (r *report) totalHotCPU() float64 {
	var sum float64
	for _, q := range r.Queries {
		if len(q.CPU) < 2 {
			continue
		}
		best := q.CPU[1]
		for _, c := range q.CPU[2:] {
			best = min(best, c)
		}
		sum += best
	}
	return sum
}

func (r *report) write(dir, name string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".md"), []byte(r.markdown(name)), 0o644); err != nil {
		return err
	}
	total, n := r.totalHot()
	checked, ok := 0, 0
	for _, q := range r.Queries {
		if q.Checked {
			checked++
			if q.Mismatch == "" {
				ok++
			}
		}
	}
	fmt.Printf("total hot (best of runs 2..n): %.3f s over %d queries (server CPU %.3f s); %d of %d checked answers correct\n", total, n, r.totalHotCPU(), ok, checked)
	return r.chart(filepath.Join(dir, name+".png"))
}

func (r *report) markdown(name string) string {
	var b strings.Builder
	total, n := r.totalHot()
	fmt.Fprintf(&b, "# ClickBench on Cairn: %s\n\n", name)
	fmt.Fprintf(&b, "- Date: %s\n- Machine: %s\n- Go: %s\n- Command (from `bench/`): `%s`\n", r.Date, r.Machine, r.GoVersion, r.Command)
	if r.ImportCommand != "" {
		fmt.Fprintf(&b, "- Import: `%s`\n", r.ImportCommand)
	}
	fmt.Fprintf(&b, "- Rows: %d (seed %d), loader %s\n", r.Rows, r.Seed, r.Loader)
	if r.LoadDate != "" {
		fmt.Fprintf(&b, "- The data directory was loaded by an earlier run (%s); its load figures follow\n", r.LoadDate)
	}
	fmt.Fprintf(&b, "- Load: import %.1f s + 15 indexes %.1f s = %.1f s wall", r.ImportSeconds, r.IndexSeconds, r.ImportSeconds+r.IndexSeconds)
	if r.ImportServerCPU > 0 {
		fmt.Fprintf(&b, "; CPU: server %.1f s + %.1f s, import tool %.1f s", r.ImportServerCPU, r.IndexServerCPU, r.ImportToolCPU)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "- Data size: %.1f MiB of BSON (collStats size), %.1f MiB data directory\n",
		float64(r.DataBytes)/(1<<20), float64(r.DiskBytes)/(1<<20))
	fmt.Fprintf(&b, "- Total hot time (sum of the best of runs 2 and 3): **%.3f s** over %d queries; server CPU time of those runs %.3f s\n\n", total, n, r.totalHotCPU())
	b.WriteString("| query | run 1 (s) | run 2 (s) | run 3 (s) | hot (s) | server CPU, last run (s) | rows/s/core (hot) | answer |\n|---|---:|---:|---:|---:|---:|---:|---|\n")
	for _, q := range r.Queries {
		fmt.Fprintf(&b, "| Q%d |", q.Query)
		for i := 0; i < 3; i++ {
			if i < len(q.Times) && q.Times[i] >= 0 {
				fmt.Fprintf(&b, " %.3f |", q.Times[i])
			} else {
				b.WriteString(" |")
			}
		}
		if h := q.hot(); h >= 0 {
			cpu := ""
			if len(q.CPU) > 0 {
				cpu = fmt.Sprintf("%.3f", q.CPU[len(q.CPU)-1])
			}
			fmt.Fprintf(&b, " %.3f | %s | %.0f |", h, cpu, float64(r.Rows)/h/float64(runtime.NumCPU()))
		} else {
			b.WriteString(" | | |")
		}
		switch {
		case q.Error != "":
			fmt.Fprintf(&b, " error: %s |\n", strings.ReplaceAll(q.Error, "|", `\|`))
		case q.Mismatch != "":
			fmt.Fprintf(&b, " MISMATCH: %s |\n", strings.ReplaceAll(q.Mismatch, "|", `\|`))
		case q.Checked:
			b.WriteString(" correct |\n")
		default:
			b.WriteString(" not checked |\n")
		}
	}
	b.WriteString("\n```\n")
	for _, q := range r.Queries {
		b.WriteString(q.line())
		b.WriteByte('\n')
	}
	b.WriteString("```\n")
	if len(r.Duck) > 0 {
		r.duckMarkdown(&b)
	}
	return b.String()
}

// hotCPU is the least CPU time of runs 2..n (-1 when not measured).
func (q queryResult) hotCPU() float64 {
	if len(q.CPU) < 2 {
		return -1
	}
	return slices.Min(q.CPU[1:])
}

// duckMarkdown writes the side-by-side table of Cairn and DuckDB.
func (r *report) duckMarkdown(b *strings.Builder) {
	duck := map[int]queryResult{}
	for _, q := range r.Duck {
		duck[q.Query] = q
	}
	var cw, cc, dw, dc float64
	var ratios []float64
	worst, worstQ := 0.0, -1
	fmt.Fprintf(b, "\n## Beside DuckDB\n\n- DuckDB %s (embedded in this program, %d threads), database file %.1f MiB, load %.1f s (CPU %.1f s)\n",
		r.DuckVersion, r.DuckThreads, float64(r.DuckFileBytes)/(1<<20), r.DuckLoadSeconds, r.DuckLoadCPU)
	if r.ColumnStoreBytes > 0 {
		fmt.Fprintf(b, "- Cairn's column store index: built in %.1f s (server CPU %.1f s), %.1f MiB\n", r.ColumnStoreSeconds, r.ColumnStoreCPU, float64(r.ColumnStoreBytes)/(1<<20))
	}
	b.WriteString("\n| query | Cairn hot (s) | Cairn CPU (s) | DuckDB hot (s) | DuckDB CPU (s) | wall ratio |\n|---|---:|---:|---:|---:|---:|\n")
	for _, q := range r.Queries {
		d, ok := duck[q.Query]
		ch, dh := q.hot(), d.hot()
		if !ok || ch < 0 || dh <= 0 {
			fmt.Fprintf(b, "| Q%d | %.3f | | | | |\n", q.Query, ch)
			continue
		}
		ratio := ch / dh
		ratios = append(ratios, ratio)
		if ratio > worst {
			worst, worstQ = ratio, q.Query
		}
		cw, dw = cw+ch, dw+dh
		cc, dc = cc+max(q.hotCPU(), 0), dc+max(d.hotCPU(), 0)
		fmt.Fprintf(b, "| Q%d | %.3f | %.3f | %.4f | %.4f | %.1f× |\n", q.Query, ch, q.hotCPU(), dh, d.hotCPU(), ratio)
	}
	geo := 0.0
	for _, x := range ratios {
		geo += math.Log(x)
	}
	if len(ratios) > 0 {
		geo = math.Exp(geo / float64(len(ratios)))
	}
	fmt.Fprintf(b, "| total | **%.3f** | %.3f | **%.3f** | %.3f | **%.1f×** wall, %.1f× CPU |\n\n", cw, cc, dw, dc, cw/dw, cc/max(dc, 1e-9))
	fmt.Fprintf(b, "Geometric mean of the per-query wall ratios %.1f×; the largest Q%d at %.1f×.\n", geo, worstQ, worst)
}

// chart draws the hot time of every query as a bar.
func (r *report) chart(path string) error {
	p := plot.New()
	total, _ := r.totalHot()
	p.Title.Text = fmt.Sprintf("ClickBench on Cairn, %d rows: hot time per query (total %.2f s)", r.Rows, total)
	p.Y.Label.Text = "seconds (best of runs 2-3)"
	vals := make(plotter.Values, len(r.Queries))
	names := make([]string, len(r.Queries))
	for i, q := range r.Queries {
		vals[i] = max(q.hot(), 0)
		names[i] = fmt.Sprintf("Q%d", q.Query)
	}
	width := vg.Points(10)
	if len(r.Duck) > 0 {
		width = vg.Points(7)
	}
	bars, err := plotter.NewBarChart(vals, width)
	if err != nil {
		return err
	}
	p.Add(bars, plotter.NewGrid())
	if len(r.Duck) > 0 {
		duck := map[int]float64{}
		var dt float64
		for _, q := range r.Duck {
			duck[q.Query] = max(q.hot(), 0)
			dt += max(q.hot(), 0)
		}
		dv := make(plotter.Values, len(r.Queries))
		for i, q := range r.Queries {
			dv[i] = duck[q.Query]
		}
		db, err := plotter.NewBarChart(dv, width)
		if err != nil {
			return err
		}
		bars.Offset, db.Offset = -width/2, width/2
		bars.Color, db.Color = color.RGBA{R: 40, G: 90, B: 170, A: 255}, color.RGBA{R: 230, G: 150, B: 30, A: 255}
		p.Add(db)
		p.Legend.Add(fmt.Sprintf("Cairn (total %.2f s)", total), bars)
		p.Legend.Add(fmt.Sprintf("DuckDB %s (total %.2f s)", r.DuckVersion, dt), db)
		p.Legend.Top = true
		p.Title.Text = fmt.Sprintf("ClickBench, %d rows: hot time per query, Cairn beside DuckDB", r.Rows)
	}
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = 1.2
	p.X.Tick.Label.XAlign = -1.0
	return p.Save(14*vg.Inch, 5*vg.Inch, path)
}
