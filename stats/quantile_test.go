package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestMedianQuantileGolden(t *testing.T) {
	var g stdGolden
	ksLoadJSON(t, "standard_cases.json", &g)
	for _, c := range g.Median {
		x0 := slices.Clone(c.X)
		// NumPy's median and linear quantile are computed from the same two
		// order statistics; only the last rounding can differ.
		if got := Median(c.X); got != c.Median {
			t.Errorf("Median(%v) = %.17g, NumPy %.17g", c.X, got, c.Median)
		}
		for k, q := range c.Q {
			if got := Quantile(c.X, q); got != c.Quantile[k] {
				t.Errorf("Quantile(n=%d, %v) = %.17g, NumPy %.17g", len(c.X), q, got, c.Quantile[k])
			}
		}
		if !slices.Equal(x0, c.X) {
			t.Error("input modified")
		}
	}
}

func TestMedianEdges(t *testing.T) {
	if !math.IsNaN(Median(nil)) || !math.IsNaN(Median([]float64{1, math.NaN()})) {
		t.Error("empty or NaN input must give NaN")
	}
	if !math.IsNaN(Quantile(nil, 0.3)) {
		t.Error("empty Quantile must be NaN")
	}
	// Large input exercises the radix sort.
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float64, 10001)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	x[17] = math.Inf(-1)
	x[18] = math.Copysign(0, -1)
	s := slices.Clone(x)
	slices.Sort(s)
	if got, want := Median(x), s[5000]; got != want {
		t.Errorf("Median = %v, want %v", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("q > 1 did not panic")
		}
	}()
	Quantile(x, 1.5)
}
