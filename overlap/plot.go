package overlap

import (
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Plot returns the propensity histogram of one domain (Source or Target)
// with the band's edges marked by dashed vertical lines. It panics if
// domain is not Source or Target; a Result without propensities (an empty
// domain) gives an empty plot titled with the note.
func (r *Result) Plot(domain int, name string) *plot.Plot {
	if domain != Source && domain != Target {
		panic("overlap: domain must be Source or Target")
	}
	p := plot.New()
	role, counts, n, in := "source", r.SourceHist, r.NSource, r.NSourceInBand
	fill := color.RGBA{R: 70, G: 110, B: 180, A: 255}
	if domain == Target {
		role, counts, n, in = "target", r.TargetHist, r.NTarget, r.NTargetInBand
		fill = color.RGBA{R: 215, G: 120, B: 40, A: 255}
	}
	p.X.Label.Text = "propensity P(target | x)"
	p.Y.Label.Text = "jobs"
	p.X.Min, p.X.Max = 0, 1
	if r.Propensity == nil {
		p.Title.Text = fmt.Sprintf("%s (%s): no propensities, empty domain", name, role)
		return p
	}
	p.Title.Text = fmt.Sprintf("%s (%s): %d of %d jobs in band %v", name, role, in, n, r.Band)
	h := &plotter.Histogram{FillColor: fill, LineStyle: plotter.DefaultLineStyle}
	top := 0.0
	for k, c := range counts {
		h.Bins = append(h.Bins, plotter.HistogramBin{Min: r.HistEdges[k], Max: r.HistEdges[k+1], Weight: float64(c)})
		top = max(top, float64(c))
	}
	if len(counts) > 0 {
		h.Width = r.HistEdges[1] - r.HistEdges[0]
	}
	p.Add(h)
	if top == 0 {
		top = 1
	}
	for _, x := range []float64{r.Band.Lo, r.Band.Hi} {
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: top * 1.05}})
		if err != nil { // cannot happen: the points are finite
			continue
		}
		l.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
		p.Add(l)
	}
	p.Y.Min = 0
	return p
}

// WritePNG writes the Plot of one domain as a width×height PNG.
func (r *Result) WritePNG(w io.Writer, domain int, name string, width, height vg.Length) error {
	wt, err := r.Plot(domain, name).WriterTo(width, height, "png")
	if err != nil {
		return fmt.Errorf("overlap: rendering histogram: %w", err)
	}
	_, err = wt.WriteTo(w)
	return err
}
