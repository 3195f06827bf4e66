package plot

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// BarSeries is one series of a grouped bar chart: a value per category and,
// when Err is not nil, an error bar of ±Err[i] around Values[i].
type BarSeries struct {
	Name   string
	Values []float64
	Err    []float64
}

// Bars writes a grouped bar chart to path (PNG or SVG): one group per
// category, one bar per series in Palette order, error bars where a series
// has them, the legend above the bars (the y range gets headroom for it),
// category names slanted when long. Counts set integer y ticks. NaN or ±Inf
// values are drawn as 0 and counted in the x-axis label, so a figure never
// hides that a value was not finite. The width grows with the categories.
func Bars(path, title, ylabel string, categories []string, series []BarSeries, counts bool) error {
	return bars(path, "Bars", title, "", ylabel, categories, series, counts, 60)
}

// bars draws Bars with an x label, perCategory points of width per
// category.
func bars(path, fn, title, xlabel, ylabel string, categories []string, series []BarSeries, counts bool, perCategory float64) error {
	if len(categories) == 0 || len(series) == 0 {
		return fmt.Errorf("plot: %s: %w", fn, ErrNoData)
	}
	p := New(title, xlabel, ylabel)
	width := categoryWidth(len(categories), perCategory)
	// Bars of one category sit side by side within 0.8 of the unit between
	// categories, positioned in data units so that error bars line up.
	step := 0.8 / float64(len(series))
	w := vg.Length(step * 0.9 * float64(width-vg.Inch) / float64(len(categories)+1))
	nonFinite := 0
	top := 0.0
	for k, s := range series {
		if len(s.Values) != len(categories) || (s.Err != nil && len(s.Err) != len(categories)) {
			return fmt.Errorf("plot: %s: series %q has %d values for %d categories", fn, s.Name, len(s.Values), len(categories))
		}
		vals := make(plotter.Values, len(s.Values))
		for i, v := range s.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				nonFinite++
				v = 0
			}
			vals[i] = v
			e := 0.0
			if s.Err != nil && !math.IsNaN(s.Err[i]) && !math.IsInf(s.Err[i], 0) {
				e = s.Err[i]
			}
			top = max(top, v+e)
		}
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return fmt.Errorf("plot: %s: %w", fn, err)
		}
		shift := step * (float64(k) - float64(len(series)-1)/2)
		b.XMin = shift
		b.Color = Color(k)
		b.LineStyle.Width = 0
		p.Add(b)
		p.Legend.Add(s.Name, b)
		if s.Err != nil {
			xys := make(plotter.XYs, len(vals))
			errs := make(plotter.YErrors, len(vals))
			any := false
			for i, v := range vals {
				xys[i] = plotter.XY{X: float64(i) + shift, Y: v}
				if e := s.Err[i]; e > 0 && !math.IsInf(e, 0) {
					errs[i].Low, errs[i].High = e, e
					any = true
				}
			}
			if any {
				eb, err := plotter.NewYErrorBars(struct {
					plotter.XYs
					plotter.YErrors
				}{xys, errs})
				if err != nil {
					return fmt.Errorf("plot: %s: %w", fn, err)
				}
				eb.LineStyle.Color = Color(7)
				p.Add(eb)
			}
		}
	}
	p.Legend.Top = true
	p.Y.Min = 0
	if top > 0 {
		p.Y.Max = top * 1.3 // headroom so that the legend does not cover the tallest bar
	}
	if counts {
		p.Y.Tick.Marker = IntTicks{}
	}
	p.X.Min, p.X.Max = -0.5, float64(len(categories))-0.5
	p.NominalX(categories...)
	slantLong(p, categories)
	if nonFinite > 0 {
		p.X.Label.Text = strings.TrimPrefix(p.X.Label.Text+fmt.Sprintf("; %d value(s) not finite, drawn as 0", nonFinite), "; ")
	}
	return Save(p, width, categoryHeight(categories), path)
}

// slantLong slants the category labels of the x axis when any is longer
// than a few characters, ending each at its tick so that none runs into
// its neighbour.
func slantLong(p *gplot.Plot, categories []string) {
	for _, c := range categories {
		if len(c) > 6 {
			p.X.Tick.Label.Rotation = math.Pi / 6
			p.X.Tick.Label.XAlign = draw.XRight
			p.X.Tick.Label.YAlign = draw.YCenter
			return
		}
	}
}

// categoryHeight is the figure height for categories on the x axis: the
// house height, plus room for long slanted names so that they do not
// squeeze the data.
func categoryHeight(categories []string) vg.Length {
	n := 0
	for _, c := range categories {
		n = max(n, len(c))
	}
	return Height + vg.Points(2.6*float64(max(0, n-12)))
}

// categoryWidth is the figure width for n categories of per points each
// on the x axis.
func categoryWidth(n int, per float64) vg.Length {
	return vg.Length(max(float64(Width), float64(vg.Points(160+per*float64(n)))))
}

// Points writes a point plot to path, as seaborn's pointplot draws one:
// one column per category, each series a line through its points, with
// error bars of ±Err[i] where a series has them (series are shifted apart
// a little so that their bars do not hide each other). The legend sits
// above the data (the y range gets headroom for it) and long category
// names are slanted. NaN or ±Inf values are left out of their line and
// counted in the x-axis label. Counts set integer y ticks.
func Points(path, title, ylabel string, categories []string, series []BarSeries, counts bool) error {
	if len(categories) == 0 || len(series) == 0 {
		return fmt.Errorf("plot: Points: %w", ErrNoData)
	}
	p := New(title, "", ylabel)
	lo, hi := math.Inf(1), math.Inf(-1)
	nonFinite := 0
	glyphs := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}}
	for k, s := range series {
		if len(s.Values) != len(categories) || (s.Err != nil && len(s.Err) != len(categories)) {
			return fmt.Errorf("plot: Points: series %q has %d values for %d categories", s.Name, len(s.Values), len(categories))
		}
		shift := 0.0
		if len(series) > 1 {
			shift = 0.24 * (float64(k)/float64(len(series)-1) - 0.5)
		}
		var xys plotter.XYs
		var errs plotter.YErrors
		var runs []plotter.XYs // the line breaks where a value is missing
		prev := -2
		for i, v := range s.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				nonFinite++
				continue
			}
			e := 0.0
			if s.Err != nil && s.Err[i] > 0 && !math.IsInf(s.Err[i], 0) {
				e = s.Err[i]
			}
			lo, hi = min(lo, v-e), max(hi, v+e)
			xy := plotter.XY{X: float64(i) + shift, Y: v}
			xys = append(xys, xy)
			errs = append(errs, struct{ Low, High float64 }{e, e})
			if i != prev+1 {
				runs = append(runs, nil)
			}
			runs[len(runs)-1] = append(runs[len(runs)-1], xy)
			prev = i
		}
		if len(xys) == 0 {
			continue
		}
		points, err := plotter.NewScatter(xys)
		if err != nil {
			return fmt.Errorf("plot: Points: %w", err)
		}
		points.Color = Color(k)
		points.Shape = glyphs[k%len(glyphs)]
		points.Radius = vg.Points(3.5)
		var first *plotter.Line
		for _, r := range runs {
			line, err := plotter.NewLine(r)
			if err != nil {
				return fmt.Errorf("plot: Points: %w", err)
			}
			line.Color = Color(k)
			line.Width = vg.Points(1.2)
			p.Add(line)
			if first == nil {
				first = line
			}
		}
		p.Add(points)
		p.Legend.Add(s.Name, first, points)
		if s.Err != nil {
			eb, err := plotter.NewYErrorBars(struct {
				plotter.XYs
				plotter.YErrors
			}{xys, errs})
			if err != nil {
				return fmt.Errorf("plot: Points: %w", err)
			}
			eb.LineStyle.Color = Color(k)
			eb.LineStyle.Width = vg.Points(1.2)
			eb.CapWidth = vg.Points(8)
			p.Add(eb)
		}
	}
	if math.IsInf(lo, 1) {
		return fmt.Errorf("plot: Points: %w (no finite value)", ErrNoData)
	}
	// The y range follows the data (a zero baseline would flatten the
	// differences the error bars are there to judge), with headroom for the
	// legend: about one text line per series.
	span := hi - lo
	if span == 0 {
		span = max(1, math.Abs(hi)) / 10
	}
	p.Y.Min, p.Y.Max = lo-span*0.06, hi+span*(0.11*float64(len(series))+0.08)
	p.Legend.Top = true
	p.Legend.Left = true
	p.X.Min, p.X.Max = -0.5, float64(len(categories))-0.5
	p.Y.Tick.Marker = niceTicks{}
	if counts {
		p.Y.Tick.Marker = IntTicks{}
	}
	p.NominalX(categories...)
	slantLong(p, categories)
	if nonFinite > 0 {
		p.X.Label.Text = fmt.Sprintf("%d value(s) not finite or not published, left out", nonFinite)
	}
	return Save(p, categoryWidth(len(categories), 60), categoryHeight(categories), path)
}

// HistSeries is one set of observations of a histogram.
type HistSeries struct {
	Name   string
	Values []float64
}

// Histogram writes the counts of each series' values in the bins
// [edges[i], edges[i+1]) (the last bin closed) to path as a grouped bar
// chart, one bar per series in each bin, so that series drawn from the same
// data show as equal bars side by side rather than hiding each other.
// format prints a bin edge ("%.2f"); ylabel names what is counted. Values
// outside the edges or not finite are counted in the x-axis label.
func Histogram(path, title, xlabel, ylabel, format string, edges []float64, series []HistSeries) error {
	if len(edges) < 2 || len(series) == 0 {
		return fmt.Errorf("plot: Histogram: %w", ErrNoData)
	}
	cats := make([]string, len(edges)-1)
	for i := range cats {
		cats[i] = fmt.Sprintf(format+"–"+format, edges[i], edges[i+1])
	}
	bs := make([]BarSeries, len(series))
	outside := 0
	for k, s := range series {
		bs[k] = BarSeries{Name: s.Name, Values: make([]float64, len(cats))}
		for _, v := range s.Values {
			i := binOf(edges, v)
			if i < 0 {
				outside++
				continue
			}
			bs[k].Values[i]++
		}
	}
	if outside > 0 {
		xlabel += fmt.Sprintf(" (%d value(s) outside the bins)", outside)
	}
	return bars(path, "Histogram", title, xlabel, ylabel, cats, bs, true, 32)
}

// binOf returns the bin of v among the bins [edges[i], edges[i+1]) (the
// last one closed), or -1 for a value outside them or NaN.
func binOf(edges []float64, v float64) int {
	last := len(edges) - 1
	if math.IsNaN(v) || v < edges[0] || v > edges[last] {
		return -1
	}
	i := sort.SearchFloat64s(edges, v) // the first edge >= v
	if i < last && edges[i] == v {
		return i // v opens bin i
	}
	return max(i-1, 0)
}

// BoxGroup is one box of a box plot.
type BoxGroup struct {
	Name   string
	Values []float64
}

// Boxes writes a horizontal box plot to path, one row per group in the
// given order: the box spans the quartiles with a line at the median, the
// whiskers reach the 5th and 95th percentiles (seaborn's whis=[5, 95]; all
// percentiles interpolate linearly, as numpy.percentile) and small marks
// show the minimum and maximum. The height grows with the groups. NaN
// values are dropped; a group without values is drawn empty.
func Boxes(path, title, xlabel string, groups []BoxGroup) error {
	if len(groups) == 0 {
		return fmt.Errorf("plot: Boxes: %w", ErrNoData)
	}
	bp := &boxes{}
	names := make([]string, len(groups))
	for i, g := range groups {
		names[i] = g.Name
		v := make([]float64, 0, len(g.Values))
		for _, x := range g.Values {
			if !math.IsNaN(x) {
				v = append(v, x)
			}
		}
		sort.Float64s(v)
		bp.stats = append(bp.stats, boxStats(v))
	}
	if bp.empty() {
		return fmt.Errorf("plot: Boxes: %w (no value)", ErrNoData)
	}
	p := New(title, xlabel, "")
	p.Add(plotter.NewGrid())
	p.Add(bp)
	slices.Reverse(names) // the first group on top
	p.NominalY(names...)
	p.Y.Min, p.Y.Max = -0.7, float64(len(groups))-0.3
	lo, hi, _, _ := bp.DataRange()
	pad := (hi - lo) * 0.03
	p.X.Min, p.X.Max = lo-pad, hi+pad
	p.X.Tick.Marker = niceTicks{}
	h := vg.Length(max(float64(Height), float64(vg.Points(90+11*float64(len(groups))))))
	return Save(p, Width+2*vg.Inch, h, path)
}

// boxStats returns the 0th, 5th, 25th, 50th, 75th, 95th and 100th
// percentiles of sorted v (NaN for an empty v).
func boxStats(v []float64) [7]float64 {
	var s [7]float64
	for i, q := range []float64{0, 0.05, 0.25, 0.5, 0.75, 0.95, 1} {
		s[i] = percentile(v, q)
	}
	return s
}

// percentile interpolates linearly between the closest ranks, as
// numpy.percentile does by default.
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := q * float64(len(sorted)-1)
	i := int(math.Floor(h))
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-float64(i))*(sorted[i+1]-sorted[i])
}

// boxes is a gplot.Plotter of horizontal boxes at y = 0, 1, ...
type boxes struct{ stats [][7]float64 }

func (b *boxes) empty() bool {
	for _, s := range b.stats {
		if !math.IsNaN(s[0]) {
			return false
		}
	}
	return true
}

func (b *boxes) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for _, s := range b.stats {
		if !math.IsNaN(s[0]) {
			xmin, xmax = min(xmin, s[0]), max(xmax, s[6])
		}
	}
	return xmin, xmax, 0, float64(len(b.stats) - 1)
}

func (b *boxes) Plot(c draw.Canvas, plt *gplot.Plot) {
	tx, ty := plt.Transforms(&c)
	half := vg.Points(4)
	box := draw.LineStyle{Color: Color(0), Width: vg.Points(1)}
	med := draw.LineStyle{Color: Color(5), Width: vg.Points(1.5)}
	for i, s := range b.stats {
		if math.IsNaN(s[0]) {
			continue
		}
		y := ty(float64(len(b.stats) - 1 - i)) // the first group on top
		line := func(st draw.LineStyle, x0, y0, x1, y1 vg.Length) {
			c.StrokeLine2(st, x0, y0, x1, y1)
		}
		q1, m, q3 := tx(s[2]), tx(s[3]), tx(s[4])
		c.FillPolygon(withAlpha(Color(0), 70), []vg.Point{{X: q1, Y: y - half}, {X: q3, Y: y - half}, {X: q3, Y: y + half}, {X: q1, Y: y + half}})
		line(box, q1, y-half, q3, y-half)
		line(box, q1, y+half, q3, y+half)
		line(box, q1, y-half, q1, y+half)
		line(box, q3, y-half, q3, y+half)
		line(med, m, y-half, m, y+half)
		lo, hi := tx(s[1]), tx(s[5])
		line(box, lo, y, q1, y)
		line(box, q3, y, hi, y)
		line(box, lo, y-half/2, lo, y+half/2)
		line(box, hi, y-half/2, hi, y+half/2)
		mark := draw.GlyphStyle{Color: Color(7), Radius: vg.Points(1.5), Shape: draw.CrossGlyph{}}
		c.DrawGlyph(mark, vg.Point{X: tx(s[0]), Y: y})
		c.DrawGlyph(mark, vg.Point{X: tx(s[6]), Y: y})
	}
}

// Panel is one histogram of a panel figure.
type Panel struct {
	Title  string
	Values []float64
}

// HistogramPanels writes one histogram (bins equal-width bins) per panel,
// cols to a row, under title, to path; every panel has its own x range and
// the x label xlabel. NaN values are dropped; a panel without values says
// so.
func HistogramPanels(path, title, xlabel string, panels []Panel, cols, bins int) error {
	if len(panels) == 0 || cols < 1 {
		return fmt.Errorf("plot: HistogramPanels: %w", ErrNoData)
	}
	rows := (len(panels) + cols - 1) / cols
	plots := make([][]*gplot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*gplot.Plot, cols)
	}
	for i, pn := range panels {
		p := New(pn.Title, xlabel, "jobs")
		p.X.Tick.Marker = niceTicks{}
		p.Y.Tick.Marker = IntTicks{}
		var v plotter.Values
		for _, x := range pn.Values {
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				v = append(v, x)
			}
		}
		if len(v) == 0 {
			p.X.Label.Text = "no value"
		} else {
			h, err := plotter.NewHist(v, bins)
			if err != nil {
				return fmt.Errorf("plot: HistogramPanels: %s: %w", pn.Title, err)
			}
			h.FillColor = Color(0)
			h.LineStyle.Width = 0
			p.Add(h)
			p.Y.Min = 0
		}
		plots[i/cols][i%cols] = p
	}
	for r := range plots {
		for c := range plots[r] {
			if plots[r][c] == nil {
				plots[r][c] = gplot.New() // an empty tile
				plots[r][c].HideAxes()
			}
		}
	}
	w, h := vg.Length(cols)*3.4*vg.Inch, vg.Length(rows)*2.4*vg.Inch+0.4*vg.Inch
	return saveTiles(plots, title, w, h, path)
}

// Counts writes a count plot to path, as seaborn's countplot draws one: for
// every integer from the smallest to the largest value of any series, one
// bar per series counting how often it holds that value. Values that are
// not integers are counted in the x-axis label.
func Counts(path, title, xlabel, ylabel string, series []HistSeries) error {
	lo, hi := math.MaxInt, math.MinInt
	for _, s := range series {
		for _, v := range s.Values {
			if v == math.Trunc(v) && math.Abs(v) < 1e9 {
				lo, hi = min(lo, int(v)), max(hi, int(v))
			}
		}
	}
	if lo > hi {
		return fmt.Errorf("plot: Counts: %w", ErrNoData)
	}
	cats := make([]string, hi-lo+1)
	for i := range cats {
		cats[i] = strconv.Itoa(lo + i)
	}
	bs := make([]BarSeries, len(series))
	other := 0
	for k, s := range series {
		bs[k] = BarSeries{Name: s.Name, Values: make([]float64, len(cats))}
		for _, v := range s.Values {
			if v != math.Trunc(v) || math.Abs(v) >= 1e9 {
				other++
				continue
			}
			bs[k].Values[int(v)-lo]++
		}
	}
	if other > 0 {
		xlabel += fmt.Sprintf(" (%d value(s) not integers, left out)", other)
	}
	return bars(path, "Counts", title, xlabel, ylabel, cats, bs, true, 10+7*float64(len(series)))
}

// niceTicks labels about six ticks at steps of 1, 2, 2.5 or 5 times a power
// of ten, with as many decimals as the step needs (gonum's default labels
// only two or three on a short range).
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []gplot.Tick {
	if !(hi > lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return gplot.DefaultTicks{}.Ticks(lo, hi)
	}
	raw := (hi - lo) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if step = m * mag; step >= raw {
			break
		}
	}
	dec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	if s := step / math.Pow(10, math.Floor(math.Log10(step)+1e-9)); s == 2.5 {
		dec++
	}
	var t []gplot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		t = append(t, gplot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', dec, 64)})
	}
	return t
}
