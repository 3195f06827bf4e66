package logit

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// sigmoid is the logistic function with package math, for drawing data.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// TestProba: the probabilities Fit leaves in proba from the solver's last
// pass are PredictProba's at the returned coefficients, bit for bit, in
// both layouts, with weights, and on separable data.
func TestProba(t *testing.T) {
	X, y := heavyTailData(70000, 6, 5)
	cm := mat.DenseCopyOf(X.T()) // column-major: features × rows
	sep := mat.NewDense(200, 2, nil)
	ySep := make([]int, 200)
	for i := range ySep {
		ySep[i] = i % 2
		sep.Set(i, 0, float64(2*ySep[i]-1)*(1+float64(i%7)))
		sep.Set(i, 1, float64(i%5))
	}
	for _, c := range []struct {
		name string
		X    mat.Matrix
		y    []int
		cfg  Config
	}{
		{"rows", X, y, Config{}},
		{"columns", cm.T(), y, Config{}},
		{"balanced", X, y, Config{Balanced: true, C: 0.01}},
		{"separable", sep, ySep, Config{}},
		{"separable C=1e12", sep, ySep, Config{C: 1e12}},
		{"one iteration", X, y, Config{MaxIter: 1}},
	} {
		rows, _ := c.X.Dims()
		proba := make([]float64, rows)
		res, err := Fit(c.X, c.y, c.cfg, proba)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := res.PredictProba(nil, c.X)
		for i := range want {
			if proba[i] != want[i] {
				t.Fatalf("%s: row %d: proba %v, PredictProba %v", c.name, i, proba[i], want[i])
			}
		}
	}
}
