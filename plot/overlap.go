package plot

import (
	"errors"
	"fmt"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/crosscluster/crosscluster/overlap"
)

// Propensity writes the propensity histogram of one domain of an overlap
// result (overlap.Source or overlap.Target) to path (PNG or SVG, Width ×
// Height): the jobs per propensity bin in the domain's colour, the band's
// edges as dashed lines, and the title "<name> (source): k of N jobs in band
// [lo,hi]". A result without propensities (an empty domain) gives a figure
// that says so. A domain other than Source or Target is an error.
func Propensity(path string, r *overlap.Result, domain int, name string) error {
	role, counts, n, in, col := "source", r.SourceHist, r.NSource, r.NSourceInBand, Color(0)
	switch domain {
	case overlap.Source:
	case overlap.Target:
		role, counts, n, in, col = "target", r.TargetHist, r.NTarget, r.NTargetInBand, Color(1)
	default:
		return errors.New("plot: Propensity: domain must be overlap.Source or overlap.Target")
	}
	title := fmt.Sprintf("%s (%s): %d of %d jobs in band %v", name, role, in, n, r.Band)
	if r.Propensity == nil {
		title = fmt.Sprintf("%s (%s): no propensities, empty domain", name, role)
	}
	p := New(title, "propensity P(target | x)", "jobs")
	p.X.Min, p.X.Max = 0, 1
	p.Y.Min = 0
	p.Y.Tick.Marker = IntTicks{}
	if r.Propensity == nil || len(counts) == 0 {
		return Save(p, Width, Height, path)
	}
	h := &plotter.Histogram{FillColor: col, LineStyle: plotter.DefaultLineStyle}
	top := 0.0
	for k, c := range counts {
		h.Bins = append(h.Bins, plotter.HistogramBin{Min: r.HistEdges[k], Max: r.HistEdges[k+1], Weight: float64(c)})
		top = max(top, float64(c))
	}
	h.Width = r.HistEdges[1] - r.HistEdges[0]
	p.Add(h)
	top = max(top, 1)
	for _, x := range []float64{r.Band.Lo, r.Band.Hi} {
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: top * 1.05}})
		if err != nil {
			return fmt.Errorf("plot: Propensity: %w", err)
		}
		l.LineStyle = draw.LineStyle{Color: Color(7), Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
		p.Add(l)
	}
	return Save(p, Width, Height, path)
}
