package plot

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
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

// densityBins is the number of propensity bins of Densities.
const densityBins = 50

// dashed is the line style of reference lines: band edges, thresholds.
var dashed = draw.LineStyle{Color: Color(7), Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}

// Densities writes both domains' propensity densities on the same axes to
// path (PNG or SVG, Width × Height): each domain's histogram of
// P(target | x) over 50 bins on [0, 1], scaled to unit area, as a step
// line over a light fill, the band shaded grey with its edges dashed, and
// a legend naming each domain with its job count and share in band, in
// headroom above the curves. A result without propensities (an empty
// domain) is an error wrapping ErrNoData.
func Densities(path string, r *overlap.Result, sourceName, targetName string) error {
	if r.Propensity == nil {
		return fmt.Errorf("plot: Densities: %w (no propensities)", ErrNoData)
	}
	p := New(fmt.Sprintf("propensity densities, AUC %.3f; band %v shaded", r.AUC, r.Band), "propensity P(target | x)", "density")
	p.X.Min, p.X.Max = 0, 1
	p.Y.Min = 0
	type dom struct {
		name       string
		props      []float64
		n, in, col int
	}
	doms := []dom{
		{sourceName + " (source)", r.Propensities(overlap.Source), r.NSource, r.NSourceInBand, 0},
		{targetName + " (target)", r.Propensities(overlap.Target), r.NTarget, r.NTargetInBand, 1},
	}
	top := 0.0
	var lines []*plotter.Line
	for _, d := range doms {
		counts := make([]float64, densityBins)
		for _, v := range d.props {
			counts[max(0, min(int(v*densityBins), densityBins-1))]++
		}
		xy := make(plotter.XYs, 0, densityBins+1)
		for k, c := range counts {
			dens := c / float64(max(1, len(d.props))) * densityBins
			xy = append(xy, plotter.XY{X: float64(k) / densityBins, Y: dens})
			top = max(top, dens)
		}
		xy = append(xy, plotter.XY{X: 1, Y: xy[len(xy)-1].Y})
		l, err := plotter.NewLine(xy)
		if err != nil {
			return fmt.Errorf("plot: Densities: %w", err)
		}
		l.StepStyle = plotter.PostStep
		l.LineStyle = draw.LineStyle{Color: Color(d.col), Width: vg.Points(1.8)}
		c := Palette[d.col]
		l.FillColor = color.NRGBA{R: c.R, G: c.G, B: c.B, A: 56}
		lines = append(lines, l)
	}
	top = max(top, 1e-9)
	// Headroom for the legend: the curves stay below 72% of the height.
	p.Y.Max = top / 0.72
	// The band's shading and edges stop below the legend.
	bandTop := top * 1.08
	band, err := plotter.NewPolygon(plotter.XYs{{X: r.Band.Lo, Y: 0}, {X: r.Band.Hi, Y: 0}, {X: r.Band.Hi, Y: bandTop}, {X: r.Band.Lo, Y: bandTop}})
	if err != nil {
		return fmt.Errorf("plot: Densities: %w", err)
	}
	band.Color = color.RGBA{236, 236, 236, 255}
	band.LineStyle.Width = 0
	p.Add(band)
	for _, x := range []float64{r.Band.Lo, r.Band.Hi} {
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: bandTop}})
		if err != nil {
			return fmt.Errorf("plot: Densities: %w", err)
		}
		l.LineStyle = dashed
		p.Add(l)
	}
	for k, l := range lines {
		p.Add(l)
		d := doms[k]
		p.Legend.Add(fmt.Sprintf("%s: %d jobs, %d in band", d.name, d.n, d.in), l)
	}
	p.Legend.Top = true
	return Save(p, Width, Height, path)
}

// Balance writes a balance ("love") plot to path (PNG or SVG, Width ×
// Height): per feature, one row, the absolute standardised mean
// difference |SMD| of the target against the source on all jobs (open
// circles) and on the jobs in the band (filled), joined by a grey line,
// with the conventional 0.1 threshold dashed. A feature without an in-band
// comparison shows its all-jobs value only and says so in its label. A
// result without features is an error wrapping ErrNoData.
func Balance(path string, r *overlap.Result) error {
	d := len(r.KS)
	if d == 0 {
		return fmt.Errorf("plot: Balance: %w (no features)", ErrNoData)
	}
	p := New(fmt.Sprintf("covariate balance: |SMD| of each feature, all jobs and in band %v", r.Band), "|standardised mean difference|, target vs source", "")
	var all, in plotter.XYs
	var ticks []gplot.Tick
	hi := 0.1
	for j, f := range r.KS {
		y := float64(d - 1 - j)
		label := f.Name
		a, b := math.Abs(f.SMD), math.Abs(f.SMDInBand)
		if !math.IsNaN(a) {
			all = append(all, plotter.XY{X: a, Y: y})
			hi = max(hi, a)
		}
		if math.IsNaN(b) {
			label += " (no in-band jobs)"
		} else {
			in = append(in, plotter.XY{X: b, Y: y})
			hi = max(hi, b)
		}
		if !math.IsNaN(a) && !math.IsNaN(b) {
			l, err := plotter.NewLine(plotter.XYs{{X: a, Y: y}, {X: b, Y: y}})
			if err != nil {
				return fmt.Errorf("plot: Balance: %w", err)
			}
			l.LineStyle = draw.LineStyle{Color: color.Gray{Y: 170}, Width: vg.Points(1)}
			p.Add(l)
		}
		ticks = append(ticks, gplot.Tick{Value: y, Label: label})
	}
	p.Y.Tick.Marker = gplot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = 0, hi*1.1
	// One row and a half of headroom for the legend.
	p.Y.Min, p.Y.Max = -0.6, float64(d-1)+1.6
	ref, err := plotter.NewLine(plotter.XYs{{X: 0.1, Y: p.Y.Min}, {X: 0.1, Y: float64(d-1) + 0.5}})
	if err != nil {
		return fmt.Errorf("plot: Balance: %w", err)
	}
	ref.LineStyle = dashed
	p.Add(ref)
	p.Legend.Add("0.1 (a common balance threshold)", ref)
	for k, pts := range []plotter.XYs{all, in} {
		if len(pts) == 0 {
			continue
		}
		s, err := plotter.NewScatter(pts)
		if err != nil {
			return fmt.Errorf("plot: Balance: %w", err)
		}
		s.GlyphStyle = draw.GlyphStyle{Color: Color(k), Radius: vg.Points(4), Shape: draw.RingGlyph{}}
		name := fmt.Sprintf("all jobs (%d source, %d target)", r.NSource, r.NTarget)
		if k == 1 {
			s.GlyphStyle.Shape = draw.CircleGlyph{}
			name = fmt.Sprintf("in band (%d source, %d target)", r.NSourceInBand, r.NTargetInBand)
		}
		p.Add(s)
		p.Legend.Add(name, s)
	}
	p.Legend.Top = true
	return Save(p, Width, Height, path)
}

// bandWidths are the widths of the bands centred on ½ over which BandWidth
// draws coverage: 0.02 to 1 in steps of 0.02.
func bandWidths() []overlap.Band {
	var bands []overlap.Band
	for k := 1; k <= 50; k++ {
		w := float64(k) / 50
		bands = append(bands, overlap.Band{Lo: max(0, 0.5-w/2), Hi: min(1, 0.5+w/2)})
	}
	return bands
}

// BandWidth writes coverage against band width to path (PNG or SVG, Width
// × Height): the share of each domain's jobs in the bands centred on ½ of
// width 0.02 to 1, as two lines, with the bands of sweep (a band sweep,
// Result.Sweep) marked and labelled on them at their width hi − lo, and
// the fit's own band width dotted. A result without propensities is an
// error wrapping ErrNoData.
func BandWidth(path string, r *overlap.Result, sweep []overlap.SweepRow, sourceName, targetName string) error {
	rows, err := r.Sweep(bandWidths()...)
	if err != nil {
		return fmt.Errorf("plot: BandWidth: %w (%v)", ErrNoData, err)
	}
	p := New("coverage against band width (bands centred on 0.5)", "band width hi − lo", "share of the domain's jobs in band")
	p.X.Min, p.X.Max = 0, 1
	p.Y.Min, p.Y.Max = 0, 1.3 // headroom for the legend
	p.Y.Tick.Marker = gplot.ConstantTicks([]gplot.Tick{{Value: 0, Label: "0"}, {Value: 0.25, Label: "0.25"}, {Value: 0.5, Label: "0.5"}, {Value: 0.75, Label: "0.75"}, {Value: 1, Label: "1"}})
	width := r.Band.Hi - r.Band.Lo
	mark, err := plotter.NewLine(plotter.XYs{{X: width, Y: 0}, {X: width, Y: 1}})
	if err != nil {
		return fmt.Errorf("plot: BandWidth: %w", err)
	}
	mark.LineStyle = draw.LineStyle{Color: Color(7), Width: vg.Points(1), Dashes: []vg.Length{vg.Points(1.5), vg.Points(2.5)}}
	p.Add(mark)
	for k, d := range []struct {
		name string
		n    int
		cov  func(overlap.SweepRow) float64
	}{
		{sourceName + " (source)", r.NSource, func(s overlap.SweepRow) float64 { return s.SourceCoverage }},
		{targetName + " (target)", r.NTarget, func(s overlap.SweepRow) float64 { return s.Coverage }},
	} {
		xy := plotter.XYs{{X: 0, Y: 0}}
		for _, s := range rows {
			xy = append(xy, plotter.XY{X: s.Band.Hi - s.Band.Lo, Y: d.cov(s)})
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return fmt.Errorf("plot: BandWidth: %w", err)
		}
		l.LineStyle = draw.LineStyle{Color: Color(k), Width: vg.Points(2)}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s, %d jobs", d.name, d.n), l)
		var pts plotter.XYs
		for _, s := range sweep {
			pts = append(pts, plotter.XY{X: s.Band.Hi - s.Band.Lo, Y: d.cov(s)})
		}
		if len(pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return fmt.Errorf("plot: BandWidth: %w", err)
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: Color(k), Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}
		p.Add(sc)
	}
	// Upright labels hanging below the lower of each band's two points,
	// where neither curve passes: bands of similar width would overlap
	// side by side, and above the points the legend sits.
	var pts plotter.XYs
	var labels []string
	for _, s := range sweep {
		pts = append(pts, plotter.XY{X: s.Band.Hi - s.Band.Lo, Y: min(s.Coverage, s.SourceCoverage)})
		labels = append(labels, s.Band.String())
	}
	if len(pts) > 0 {
		lab, err := plotter.NewLabels(plotter.XYLabels{XYs: pts, Labels: labels})
		if err != nil {
			return fmt.Errorf("plot: BandWidth: %w", err)
		}
		lab.Offset = vg.Point{X: vg.Points(9), Y: vg.Points(-8)}
		for i := range lab.TextStyle {
			lab.TextStyle[i].Rotation = math.Pi / 2
			lab.TextStyle[i].XAlign, lab.TextStyle[i].YAlign = text.XRight, text.YCenter
		}
		p.Add(lab)
	}
	p.Legend.Add(fmt.Sprintf("fit's band %v", r.Band), mark)
	p.Legend.Top, p.Legend.Left = true, true
	return Save(p, Width, Height, path)
}
