package plot

import (
	"fmt"
	"math"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
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
