package plot

import (
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/crosscluster/crosscluster/internal/plottest"
)

// sweepCurves are four groups of power-law curves with noise-free shapes,
// some shorter (pruned runs), one with a zero, a negative value, a NaN and
// an Inf that a log axis cannot show.
func sweepCurves() []SweepCurve {
	var cs []SweepCurve
	for g, name := range []string{"base", "bn_off", "narrow", "adamw"} {
		for s := range 6 {
			c := SweepCurve{Name: name + "-s" + string(rune('0'+s)), Group: name}
			n := 200
			if s == 5 {
				n = 40 // stopped early
			}
			for k := 1; k <= n; k++ {
				e := float64(k) / 4
				c.Step = append(c.Step, e)
				c.Value = append(c.Value, (1+0.1*float64(g)+0.03*float64(s))*math.Pow(e, -0.4)*0.6)
			}
			cs = append(cs, c)
		}
	}
	cs[0].Value[3], cs[0].Value[4], cs[0].Value[5], cs[0].Value[6] = 0, -1, math.NaN(), math.Inf(1)
	return cs
}

func TestSweepCurves(t *testing.T) {
	path := filepath.Join(t.TempDir(), "curves.png")
	if err := SweepCurves(path, "validation loss, test sweep", "validation cross-entropy", sweepCurves()); err != nil {
		t.Fatal(err)
	}
	plottest.Check(t, path, 800, 500)
}

// TestSweepCurvesNothingToDraw: a sweep whose values a log axis cannot
// show is an error, not a panic (issue 12: "Values must be greater than 0
// for a log scale").
func TestSweepCurvesNothingToDraw(t *testing.T) {
	path := filepath.Join(t.TempDir(), "curves.png")
	err := SweepCurves(path, "t", "loss", []SweepCurve{{Group: "a", Step: []float64{0, 1}, Value: []float64{0, -2}}})
	if !errors.Is(err, ErrNoData) {
		t.Errorf("error %v, want ErrNoData", err)
	}
	if err := SweepCurves(path, "t", "loss", nil); !errors.Is(err, ErrNoData) {
		t.Errorf("no curves: %v, want ErrNoData", err)
	}
}
