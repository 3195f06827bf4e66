package plot_test

import (
	"bytes"
	"errors"
	"io/fs"
	"math"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/crosscluster/crosscluster/internal/errtest"
	"github.com/crosscluster/crosscluster/internal/plot"
	"github.com/crosscluster/crosscluster/overlap"
)

// TestErrors provokes each error the documentation of plot promises: a
// figure with nothing to draw wraps ErrNoData, a bad argument or an
// unwritable path is an error; every message says "plot: " once, at its
// start, and names the figure's file where it has one.
func TestErrors(t *testing.T) {
	dir := t.TempDir()
	file := func(name string) string { return filepath.Join(dir, name) }
	nan := math.NaN()
	tests := []struct {
		name  string
		err   error
		is    error
		place []string
	}{
		{"Bars: no categories", plot.Bars(file("bars.svg"), "t", "y", nil, []plot.BarSeries{{Name: "a"}}, false), plot.ErrNoData, []string{"Bars"}},
		{"Bars: values per category", plot.Bars(file("bars.svg"), "t", "y", []string{"x", "y"}, []plot.BarSeries{{Name: "a", Values: []float64{1}}}, false), nil, []string{"Bars", `series "a"`}},
		{"Divergence: nothing positive", plot.Divergence(file("div.svg"), "t", "step", "d", []plot.Curve{{Name: "a-b", Y: []float64{0, nan, 0}}}, 1e-9), plot.ErrNoData, []string{"Divergence"}},
		{"HoldCodes: no holds", plot.HoldCodes(file("holds.svg"), "t", nil), plot.ErrNoData, []string{"HoldCodes"}},
		{"Training: no epoch", plot.Training(file("train.svg"), "t", nil, 0, "F1"), plot.ErrNoData, []string{"Training"}},
		{"SweepCurves: nothing on a log axis", plot.SweepCurves(file("sweep.svg"), "t", "loss", []plot.SweepCurve{{Name: "r", Step: []float64{0, 1}, Value: []float64{1, -1}}}), plot.ErrNoData, []string{"SweepCurves", "sweep.svg", "2 points left out"}},
		{"Propensity: unknown domain", plot.Propensity(file("p.svg"), &overlap.Result{}, 7, "x"), nil, []string{"Propensity", "domain"}},
		{"Save: unknown format", plot.Save(plot.New("t", "x", "y"), vg.Inch, vg.Inch, file("fig.gif")), nil, []string{"fig.gif", `"gif"`}},
		{"Save: no such directory", plot.Save(plot.New("t", "x", "y"), vg.Inch, vg.Inch, file("none/fig.png")), fs.ErrNotExist, []string{"none"}},
		{"Render: unknown format", plot.Render(new(bytes.Buffer), plot.New("t", "x", "y"), vg.Inch, vg.Inch, "jpeg"), nil, []string{"Render", `"jpeg"`}},
		{"a figure into no such directory", plot.HoldCodes(file("none/holds.png"), "t", map[int]int{26: 3}), fs.ErrNotExist, []string{"none"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.is != nil && !errors.Is(tc.err, tc.is) {
				t.Errorf("errors.Is(%v, %v) is false", tc.err, tc.is)
			}
			errtest.Check(t, tc.err, "plot: ", tc.place...)
		})
	}
}
