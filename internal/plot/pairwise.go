package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/crosscluster/crosscluster/overlap"
)

// Size of the two-panel many-cluster figure: two square-ish heatmaps side
// by side.
const (
	PairwiseWidth  = 11 * vg.Inch
	PairwiseHeight = 5 * vg.Inch
)

// Pairwise writes the comparison of k clusters (overlap.Pairwise) to path
// (PNG or SVG, PairwiseWidth × PairwiseHeight) as two heatmaps, rows the
// source cluster and columns the target: the domain classifier's AUC with
// its DeLong 95% interval (0.5, indistinguishable clusters, light; 1,
// separable, dark), and the share of the column cluster's jobs in the
// band (1 light, 0 dark) with the count, so that dark cells mark pairs
// whose comparison is hard to defend in both panels. The diagonal is grey.
// Cells show their numbers; when the cells are too narrow for the interval
// or the count, only the value is shown. A matrix of fewer than two
// clusters is an error wrapping ErrNoData.
func Pairwise(path string, m *overlap.PairMatrix) error {
	k := len(m.Names)
	if k < 2 {
		return fmt.Errorf("plot: Pairwise: %w (%d clusters)", ErrNoData, k)
	}
	auc := &heatCells{names: m.Names, shade: make([][]float64, k), lines: make([][][2]string, k)}
	cov := &heatCells{names: m.Names, shade: make([][]float64, k), lines: make([][][2]string, k)}
	for i, row := range m.Pairs {
		auc.shade[i], cov.shade[i] = make([]float64, k), make([]float64, k)
		auc.lines[i], cov.lines[i] = make([][2]string, k), make([][2]string, k)
		for j, p := range row {
			if i == j || p == nil {
				auc.shade[i][j], cov.shade[i][j] = math.NaN(), math.NaN()
				continue
			}
			// AUC 0.5 (or below: the classifier is no better than chance)
			// is 0, 1 is 1.
			auc.shade[i][j] = math.Max(0, math.Min(1, 2*(p.AUC.AUC-0.5)))
			auc.lines[i][j] = [2]string{fmt.Sprintf("%.3f", p.AUC.AUC), fmt.Sprintf("[%.3f, %.3f]", p.AUC.Lo, p.AUC.Hi)}
			if math.IsNaN(p.AUC.Lo) {
				auc.lines[i][j][1] = "no interval"
			}
			cov.shade[i][j] = 1 - p.Coverage
			cov.lines[i][j] = [2]string{fmt.Sprintf("%.3f", p.Coverage), fmt.Sprintf("%d / %d", p.NTargetInBand, p.NTarget)}
		}
	}
	xlabel, ylabel := "target cluster", "source cluster"
	if short, ok := shortNames(m.Names); ok {
		auc.names, cov.names = short, short
		xlabel += " (names shortened; full in the CSV)"
	}
	left := heatPlot("domain classifier AUC, DeLong 95% CI (darker: easier to tell apart)", xlabel, ylabel, auc)
	right := heatPlot(fmt.Sprintf("target's jobs in band %v: share, count (darker: less overlap)", m.Band), xlabel+", jobs counted", ylabel, cov)
	return savePanels(path, PairwiseWidth, PairwiseHeight, left, right)
}

// heatCells draws a k × k grid of cells, row i at the top for i = 0, each
// filled by its shade in [0, 1] (NaN: grey) and labelled with up to two
// lines. It implements gplot.Plotter.
type heatCells struct {
	names []string
	shade [][]float64
	lines [][][2]string
}

// heatRamp maps 0 to a light and 1 to a dark blue (the palette's blue,
// Palette[0], at the dark end), through linear steps in RGB.
func heatRamp(v float64) color.RGBA {
	lo, hi := color.RGBA{240, 246, 252, 255}, color.RGBA{8, 64, 129, 255}
	mix := func(a, b uint8) uint8 { return uint8(math.Round(float64(a) + v*(float64(b)-float64(a)))) }
	return color.RGBA{mix(lo.R, hi.R), mix(lo.G, hi.G), mix(lo.B, hi.B), 255}
}

// Plot implements gplot.Plotter.
func (h *heatCells) Plot(c draw.Canvas, plt *gplot.Plot) {
	k := len(h.names)
	trX, trY := plt.Transforms(&c)
	cellW := trX(1) - trX(0)
	cellH := trY(1) - trY(0)
	sty := plt.X.Tick.Label
	sty.XAlign, sty.YAlign = text.XCenter, text.YCenter
	// The largest font up to 11 pt at which the second lines fit.
	widest := ""
	for _, row := range h.lines {
		for _, l := range row {
			if len(l[1]) > len(widest) {
				widest = l[1]
			}
		}
	}
	sty.Font.Size = vg.Points(11)
	for sty.Font.Size > vg.Points(6) && (sty.Width(widest) > 0.9*cellW || 3*sty.Height("0") > 0.9*cellH) {
		sty.Font.Size -= vg.Points(0.5)
	}
	two := sty.Width(widest) <= 0.9*cellW && 3*sty.Height("0") <= 0.9*cellH
	for i := range k {
		for j := range k {
			x0, x1 := trX(float64(j)-0.5), trX(float64(j)+0.5)
			y0, y1 := trY(float64(k-1-i)-0.5), trY(float64(k-1-i)+0.5)
			v := h.shade[i][j]
			fill := color.RGBA{200, 200, 200, 255}
			if !math.IsNaN(v) {
				fill = heatRamp(v)
			}
			c.FillPolygon(fill, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
			c.StrokeLines(draw.LineStyle{Color: color.White, Width: vg.Points(1.5)}, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}, {X: x0, Y: y0}})
			if math.IsNaN(v) {
				continue
			}
			ts := sty
			ts.Color = color.Black
			if v > 0.55 {
				ts.Color = color.White
			}
			mid := vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}
			l := h.lines[i][j]
			if !two || l[1] == "" {
				c.FillText(ts, mid, l[0])
				continue
			}
			gap := 0.75 * ts.Height("0")
			c.FillText(ts, vg.Point{X: mid.X, Y: mid.Y + gap}, l[0])
			c.FillText(ts, vg.Point{X: mid.X, Y: mid.Y - gap}, l[1])
		}
	}
}

// heatPlot returns a plot of cells with the cluster names as ticks, row 0
// at the top.
func heatPlot(title, xlabel, ylabel string, cells *heatCells) *gplot.Plot {
	k := len(cells.names)
	p := New(title, xlabel, ylabel)
	p.X.Min, p.X.Max = -0.5, float64(k)-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(k)-0.5
	var xt, yt []gplot.Tick
	for i, name := range cells.names {
		xt = append(xt, gplot.Tick{Value: float64(i), Label: name})
		yt = append(yt, gplot.Tick{Value: float64(k - 1 - i), Label: name})
	}
	p.X.Tick.Marker = gplot.ConstantTicks(xt)
	p.Y.Tick.Marker = gplot.ConstantTicks(yt)
	p.X.Tick.Length, p.Y.Tick.Length = 0, 0
	p.X.Padding, p.Y.Padding = 0, 0
	p.Add(cells)
	return p
}

// savePanels renders plots side by side in equal columns of a w × h figure
// at path (PNG or SVG), each inside the house margin, written atomically
// as Save does.
func savePanels(path string, w, h vg.Length, plots ...*gplot.Plot) error {
	c, err := canvas(w, h, strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), "."))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	dc := draw.New(c)
	col := w / vg.Length(len(plots))
	for i, p := range plots {
		left := vg.Length(i) * col
		p.Draw(draw.Crop(dc, left+margin, -(w-left-col)-margin, margin, -margin))
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return writeFile(path, buf.Bytes())
}

// shortNames returns names for the axes of a heatmap: when the names are
// long (file stems such as stampede_feb_2018_job_accounting-1), the
// parts that every name shares at the same place are dropped
// (feb-1, mar-1, ...), and what is still longer than maxName is cut with an
// ellipsis. The full names stay in the CSV and Markdown tables. It reports
// whether it changed anything.
func shortNames(names []string) ([]string, bool) {
	const maxName = 18
	long := false
	for _, n := range names {
		long = long || len([]rune(n)) > maxName
	}
	if !long {
		return names, false
	}
	isSep := func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == ' ' || r == '/' }
	split := func(s string) (parts, seps []string) {
		// parts[i] is preceded by seps[i] ("" for the first).
		sep := ""
		cur := []rune{}
		for _, r := range s {
			if isSep(r) {
				parts, seps = append(parts, string(cur)), append(seps, sep)
				cur, sep = cur[:0], string(r)
				continue
			}
			cur = append(cur, r)
		}
		return append(parts, string(cur)), append(seps, sep)
	}
	parts := make([][]string, len(names))
	seps := make([][]string, len(names))
	for i, n := range names {
		parts[i], seps[i] = split(n)
	}
	out := slices.Clone(names)
	same := true
	for i := range parts {
		same = same && len(parts[i]) == len(parts[0])
	}
	if same {
		for i := range names {
			var b strings.Builder
			for k, part := range parts[i] {
				shared := true
				for j := range parts {
					shared = shared && parts[j][k] == part
				}
				if shared {
					continue
				}
				if b.Len() > 0 {
					b.WriteString(seps[i][k])
				}
				b.WriteString(part)
			}
			if b.Len() > 0 {
				out[i] = b.String()
			}
		}
	}
	for i, n := range out {
		if r := []rune(n); len(r) > maxName {
			out[i] = string(r[:maxName-1]) + "…"
		}
	}
	return out, true
}
