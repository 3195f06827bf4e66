package main

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"

	"github.com/crosscluster/crosscluster/sweep"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

var variantColors = map[string]color.NRGBA{
	"base":   {R: 31, G: 119, B: 180, A: 255},
	"bn_off": {R: 255, G: 127, B: 14, A: 255},
	"narrow": {R: 44, G: 160, B: 44, A: 255},
	"adamw":  {R: 214, G: 39, B: 40, A: 255},
}

// plotCurves draws every run's validation loss against epochs on log–log
// axes, one colour per variant, thin lines; the per-variant median is drawn
// thick.
func plotCurves(path, name string, runs []sweep.Run, results map[string]*sweep.Result) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("validation loss, %s (%d runs)", name, len(runs))
	p.X.Label.Text = "epoch"
	p.Y.Label.Text = "validation cross-entropy"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, ticks125{}
	byVariant := map[string][][]float64{}
	var xs []float64
	for _, r := range runs {
		res := results[r.ID]
		if res == nil {
			continue
		}
		x, y := res.Series["val_loss"].Step, res.Series["val_loss"].Value
		if len(x) == 0 || len(x) != len(y) {
			continue
		}
		xs = x
		pts := make(plotter.XYs, len(x))
		for i := range x {
			pts[i].X, pts[i].Y = x[i], max(y[i], 1e-6)
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		c := variantColors[r.Variant]
		c.A = 40
		l.Color = c
		l.Width = vg.Points(0.5)
		p.Add(l)
		byVariant[r.Variant] = append(byVariant[r.Variant], y)
	}
	names := make([]string, 0, len(byVariant))
	for v := range byVariant {
		names = append(names, v)
	}
	sort.Strings(names)
	for _, v := range names {
		ys := byVariant[v]
		med := make(plotter.XYs, len(xs))
		col := make([]float64, len(ys))
		for i := range xs {
			for k, y := range ys {
				if i < len(y) {
					col[k] = y[i]
				}
			}
			sort.Float64s(col)
			med[i].X, med[i].Y = xs[i], max(col[len(col)/2], 1e-6)
		}
		l, err := plotter.NewLine(med)
		if err != nil {
			return err
		}
		l.Color = variantColors[v]
		l.Width = vg.Points(2)
		p.Add(l)
		p.Legend.Add(v+" (median)", l)
	}
	p.Legend.Top = true
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}

// ticks125 labels a log axis at 1, 2 and 5 times each power of ten, with
// unlabelled minor ticks at the other integer multiples, so that an axis
// spanning less than a decade still has labels.
type ticks125 struct{}

func (ticks125) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	if lo <= 0 || hi <= lo {
		return out
	}
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		dec := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * dec
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			out = append(out, t)
		}
	}
	return out
}
