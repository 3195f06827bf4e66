package plot

import (
	"fmt"
	"math"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
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
	if len(categories) == 0 || len(series) == 0 {
		return fmt.Errorf("plot: Bars: %w", ErrNoData)
	}
	p := New(title, "", ylabel)
	width := vg.Length(max(float64(Width), float64(vg.Points(float64(160+60*len(categories))))))
	// Bars of one category sit side by side within 0.8 of the unit between
	// categories, positioned in data units so that error bars line up.
	step := 0.8 / float64(len(series))
	w := vg.Length(step * 0.9 * float64(width-vg.Inch) / float64(len(categories)+1))
	nonFinite := 0
	top := 0.0
	for k, s := range series {
		if len(s.Values) != len(categories) || (s.Err != nil && len(s.Err) != len(categories)) {
			return fmt.Errorf("plot: Bars: series %q has %d values for %d categories", s.Name, len(s.Values), len(categories))
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
			return fmt.Errorf("plot: Bars: %w", err)
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
					return fmt.Errorf("plot: Bars: %w", err)
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
	p.NominalX(categories...)
	long := false
	for _, c := range categories {
		long = long || len(c) > 6
	}
	if long {
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign = -1
		p.X.Tick.Label.YAlign = -0.5
	}
	if nonFinite > 0 {
		p.X.Label.Text = fmt.Sprintf("%d value(s) not finite, drawn as 0", nonFinite)
	}
	return Save(p, width, Height, path)
}
