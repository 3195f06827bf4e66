package plot

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// EpochPoint is one epoch of a training run for Training.
type EpochPoint struct {
	Epoch                int
	TrainLoss, ValidLoss float64
	ValidF1              float64 // NaN when not measured
}

// Training writes a training run's curves to path (PNG or SVG, Width ×
// Height): training and validation loss and validation F1 per epoch on one
// axis, and the epoch whose weights were kept as a dashed vertical line
// whose legend entry says which metric chose it (monitor, e.g. "highest
// validation F1"). The top of the axis is left free for the legend, so it
// never covers a curve. Non-finite values are left out. No epoch is an
// error wrapping ErrNoData.
func Training(path, title string, epochs []EpochPoint, best int, monitor string) error {
	if len(epochs) == 0 {
		return fmt.Errorf("plot: Training: %w (no epoch)", ErrNoData)
	}
	p := New(title, "epoch", "loss (BCE) and F1")
	p.X.Tick.Marker = IntTicks{}
	top := 0.0
	series := []struct {
		name string
		val  func(EpochPoint) float64
	}{
		{"training loss", func(e EpochPoint) float64 { return e.TrainLoss }},
		{"validation loss", func(e EpochPoint) float64 { return e.ValidLoss }},
		{"validation F1", func(e EpochPoint) float64 { return e.ValidF1 }},
	}
	for k, s := range series {
		var pts plotter.XYs
		for _, e := range epochs {
			if v := s.val(e); !math.IsNaN(v) && !math.IsInf(v, 0) {
				pts = append(pts, plotter.XY{X: float64(e.Epoch), Y: v})
				top = max(top, v)
			}
		}
		if len(pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return fmt.Errorf("plot: Training: %w", err)
		}
		l.Color = Color(k)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(s.name, l)
	}
	p.Y.Min = 0
	p.Y.Max = max(top, 1e-9) * 1.45
	if best > 0 {
		l, err := plotter.NewLine(plotter.XYs{{X: float64(best), Y: 0}, {X: float64(best), Y: max(top, 1e-9) * 1.05}})
		if err != nil {
			return fmt.Errorf("plot: Training: %w", err)
		}
		l.Color = Color(7)
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("kept: epoch %d (%s)", best, monitor), l)
	}
	p.Legend.Top = true
	return Save(p, Width, Height, path)
}

// RunCurve is one run's validation curve for ValidationCurves.
type RunCurve struct {
	Name         string    // run name (slug)
	Epoch, Value []float64 // the metric after each epoch
	Kept         int       // the epoch whose weights the run kept; 0 if none
}

// ValidationCurves writes a comparison of a search's validation curves to
// path (PNG or SVG, SweepWidth × Height): every run a thin translucent
// line in its own colour, the best run (index best into curves) thick and
// black with its name in the legend, and each run's kept epoch a dot on its
// curve. Non-finite values are left out. Nothing to draw is an error
// wrapping ErrNoData; best outside curves is a caller mistake and panics.
func ValidationCurves(path, title, ylabel string, curves []RunCurve, best int) error {
	if best < 0 || best >= len(curves) {
		panic("plot: ValidationCurves best run out of range")
	}
	p := New(title, "epoch", ylabel)
	p.X.Tick.Marker = IntTicks{}
	shown := 0
	lo, hi := math.Inf(1), math.Inf(-1)
	line := func(c RunCurve, col color.Color, width vg.Length, name string) error {
		if len(c.Epoch) != len(c.Value) {
			panic("plot: RunCurve with epochs and values of different lengths")
		}
		var pts, kept plotter.XYs
		for k := range c.Epoch {
			if v := c.Value[k]; !math.IsNaN(v) && !math.IsInf(v, 0) {
				pts = append(pts, plotter.XY{X: c.Epoch[k], Y: v})
				lo, hi = min(lo, v), max(hi, v)
				if int(c.Epoch[k]) == c.Kept {
					kept = append(kept, plotter.XY{X: c.Epoch[k], Y: v})
				}
			}
		}
		if len(pts) == 0 {
			return nil
		}
		shown++
		l, err := plotter.NewLine(pts)
		if err != nil {
			return fmt.Errorf("plot: ValidationCurves: %w", err)
		}
		l.Color, l.Width = col, width
		p.Add(l)
		if len(kept) > 0 {
			s, err := plotter.NewScatter(kept)
			if err != nil {
				return fmt.Errorf("plot: ValidationCurves: %w", err)
			}
			s.GlyphStyle.Color, s.GlyphStyle.Radius, s.GlyphStyle.Shape = col, width+vg.Points(1), draw.CircleGlyph{}
			p.Add(s)
		}
		if name != "" {
			p.Legend.Add(name, l)
		}
		return nil
	}
	for i, c := range curves {
		if i == best {
			continue
		}
		if err := line(c, withAlpha(Color(i), 110), vg.Points(0.8), ""); err != nil {
			return err
		}
	}
	others := shown
	if err := line(curves[best], Color(7), vg.Points(2.4), "best: "+curves[best].Name); err != nil {
		return err
	}
	if shown == 0 {
		return fmt.Errorf("plot: ValidationCurves: %w (no finite value)", ErrNoData)
	}
	if others > 0 {
		// A legend entry only: the line is never added to the plot.
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}})
		if err == nil {
			l.Color, l.Width = withAlpha(Color(0), 110), vg.Points(0.8)
			p.Legend.Add(fmt.Sprintf("%d other runs (dot: kept epoch)", others), l)
		}
	}
	// Room above the curves for the legend, so that it covers none.
	span := max(hi-lo, 1e-3*max(math.Abs(hi), 1))
	p.Y.Min, p.Y.Max = lo-0.05*span, hi+0.45*span
	p.Legend.Top = true
	return Save(p, SweepWidth, Height, path)
}
