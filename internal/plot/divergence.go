package plot

import (
	"fmt"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Curve is one series of a line figure, Y at steps 0, 1, 2, ...
type Curve struct {
	Name string
	Y    []float64
}

// Divergence writes per-step divergence curves (one per pair of runs) on a
// log y axis to path (PNG or SVG, 8×5 in), with the tolerance as a dashed
// black line when tol > 0. Steps where a pair agrees exactly (0) or that
// are NaN cannot sit on a log axis: they are left out and counted in the x
// label. No positive value at all is an error wrapping ErrNoData.
func Divergence(path, title, xlabel, ylabel string, curves []Curve, tol float64) error {
	p := New(title, xlabel, ylabel)
	p.Y.Scale = gplot.LogScale{}
	p.Y.Tick.Marker = gplot.LogTicks{Prec: 1}
	zero, nan, shown := 0, 0, 0
	top := 0.0
	last := 0
	for i, c := range curves {
		var pts plotter.XYs
		for k, v := range c.Y {
			switch {
			case math.IsNaN(v):
				nan++
			case v <= 0:
				zero++
			case !math.IsInf(v, 0):
				pts = append(pts, plotter.XY{X: float64(k), Y: v})
				top = max(top, v)
			}
		}
		last = max(last, len(c.Y)-1)
		if len(pts) == 0 {
			continue
		}
		shown += len(pts)
		l, err := plotter.NewLine(pts)
		if err != nil {
			return fmt.Errorf("plot: Divergence: %w", err)
		}
		l.Color = Color(i)
		l.Width = vg.Points(1.2)
		p.Add(l)
		p.Legend.Add(c.Name, l)
	}
	if shown == 0 {
		return fmt.Errorf("plot: Divergence: %w (no positive divergence)", ErrNoData)
	}
	if tol > 0 && !math.IsInf(tol, 0) {
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: tol}, {X: float64(max(last, 1)), Y: tol}})
		if err != nil {
			return fmt.Errorf("plot: Divergence: %w", err)
		}
		l.Color = Color(7)
		l.Width = vg.Points(1.5)
		l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("tolerance %.0e", tol), l)
	}
	if zero+nan > 0 {
		p.X.Label.Text += fmt.Sprintf("; %d step(s) with divergence 0 and %d NaN not shown (log axis)", zero, nan)
	}
	// Room above the data and the tolerance line for the legend: the log
	// axis gets a factor 10⁴ (four decades) of headroom.
	p.Y.Max = max(top, tol) * 1e4
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(10)
	p.Legend.YOffs = -vg.Points(5)
	return Save(p, 8*vg.Inch, 5*vg.Inch, path)
}
