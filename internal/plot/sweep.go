package plot

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// SweepCurve is one run's curve for SweepCurves: a metric (usually the
// validation loss) at each step (epoch) it was logged.
type SweepCurve struct {
	Name        string // run name (slug), shown for the best run
	Group       string // variant: one colour per group
	Step, Value []float64
}

// Sweep figure size: wide enough for a few hundred curves.
const (
	SweepWidth  = 8 * vg.Inch
	SweepHeight = 5 * vg.Inch
)

// ErrNoData is wrapped by the error of a figure with nothing to draw.
var ErrNoData = errors.New("nothing to draw")

// SweepCurves writes a figure of a sweep's curves to path (PNG or SVG):
// every run thin and translucent in its group's colour, each group's median
// at every step thick (over the runs that logged that step; for an even
// count, the geometric mean of the middle two, their midpoint on the log
// axis), and the run
// with the lowest value overall in black with its name, on log–log axes.
// Points that a log axis cannot show (zero, negative, NaN, ±Inf) are left
// out and counted under the x axis; curves in groups keep their order of
// first appearance. A sweep with no point to show is an error wrapping
// ErrNoData, never a panic.
func SweepCurves(path, title, ylabel string, curves []SweepCurve) error {
	var groups []string
	byGroup := map[string][]int{}
	dropped, shown := 0, 0
	bestRun, bestVal := -1, math.Inf(1)
	clean := make([]plotter.XYs, len(curves))
	for i, c := range curves {
		if len(c.Step) != len(c.Value) {
			panic("plot: SweepCurve with steps and values of different lengths")
		}
		for k := range c.Step {
			x, y := c.Step[k], c.Value[k]
			if !(x > 0) || !(y > 0) || math.IsInf(x, 0) || math.IsInf(y, 0) {
				dropped++
				continue
			}
			clean[i] = append(clean[i], plotter.XY{X: x, Y: y})
			if y < bestVal {
				bestRun, bestVal = i, y
			}
		}
		if len(clean[i]) == 0 {
			continue
		}
		shown++
		if _, ok := byGroup[c.Group]; !ok {
			groups = append(groups, c.Group)
		}
		byGroup[c.Group] = append(byGroup[c.Group], i)
	}
	if shown == 0 {
		return fmt.Errorf("plot: SweepCurves: %s: %w: no run has a positive, finite value for a log scale (%d points left out)", path, ErrNoData, dropped)
	}
	xlabel := "epoch (log scale)"
	if dropped > 0 {
		xlabel += fmt.Sprintf(" — %d points ≤ 0 or not finite left out", dropped)
	}
	p := New(title, xlabel, ylabel+" (log scale)")
	p.X.Scale, p.Y.Scale = gplot.LogScale{}, gplot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = ticks125{}, ticks125{}
	for gi, g := range groups {
		col := withAlpha(Color(gi), 45)
		for _, i := range byGroup[g] {
			l, err := plotter.NewLine(clean[i])
			if err != nil {
				return fmt.Errorf("plot: SweepCurves: %s: %w", path, err)
			}
			l.Color, l.Width = col, vg.Points(0.6)
			p.Add(l)
		}
	}
	for gi, g := range groups {
		med := medianCurve(clean, byGroup[g])
		if len(med) < 2 {
			continue
		}
		l, err := plotter.NewLine(med)
		if err != nil {
			return fmt.Errorf("plot: SweepCurves: %s: %w", path, err)
		}
		l.Color, l.Width = Color(gi), vg.Points(2.2)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s median (%d runs)", g, len(byGroup[g])), l)
	}
	best, err := plotter.NewLine(clean[bestRun])
	if err != nil {
		return fmt.Errorf("plot: SweepCurves: %s: %w", path, err)
	}
	best.Color, best.Width = color.Black, vg.Points(1.4)
	best.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
	p.Add(best)
	name := curves[bestRun].Name
	if name == "" {
		name = "run " + strconv.Itoa(bestRun)
	}
	p.Legend.Add(fmt.Sprintf("best: %s (%.4g)", name, bestVal), best)
	// Loss curves fall from the top left: the top right is empty.
	p.Legend.Top = true
	p.Legend.Padding = vg.Points(2)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	return Save(p, SweepWidth, SweepHeight, path)
}

func withAlpha(c color.Color, a uint8) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: a}
}

// medianCurve is, at every step any of the curves logged, the median of the
// curves that logged it.
func medianCurve(curves []plotter.XYs, idx []int) plotter.XYs {
	at := map[float64][]float64{}
	for _, i := range idx {
		for _, pt := range curves[i] {
			at[pt.X] = append(at[pt.X], pt.Y)
		}
	}
	steps := make([]float64, 0, len(at))
	for x := range at {
		steps = append(steps, x)
	}
	sort.Float64s(steps)
	out := make(plotter.XYs, 0, len(steps))
	for _, x := range steps {
		ys := at[x]
		slices.Sort(ys)
		m := ys[len(ys)/2]
		if len(ys)%2 == 0 {
			m = math.Sqrt(ys[len(ys)/2-1] * ys[len(ys)/2]) // the middle of the two on a log axis
		}
		out = append(out, plotter.XY{X: x, Y: m})
	}
	return out
}

// ticks125 labels a log axis at 1, 2 and 5 times each power of ten, with
// unlabelled minor ticks at the other integer multiples, so that an axis
// spanning less than a decade still has labels.
type ticks125 struct{}

func (ticks125) Ticks(lo, hi float64) []gplot.Tick {
	var out []gplot.Tick
	if !(lo > 0) || !(hi > lo) || math.IsInf(hi, 0) {
		return out
	}
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		dec := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * dec
			if v < lo || v > hi {
				continue
			}
			t := gplot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			out = append(out, t)
		}
	}
	return out
}
