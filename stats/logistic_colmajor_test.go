package stats

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gonum.org/v1/gonum/mat"
)

// transposeDense returns X's data column-major: a cols × rows *mat.Dense
// whose transpose is X.
func transposeDense(X *mat.Dense) *mat.Dense {
	r, c := X.Dims()
	t := mat.NewDense(c, r, nil)
	t.Copy(X.T())
	return t
}

// TestColumnMajor: column-major data passed as the transpose of a raw
// matrix give the same standardiser, fit and probabilities, to the last
// bit, as the row-major matrix, and the same errors.
func TestColumnMajor(t *testing.T) {
	X, y := logisticBenchData(3*logisticChunk + 77)
	cm := transposeDense(X).T()

	s1, err := FitStandardizer(X)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := FitStandardizer(cm)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(s1, s2); d != "" {
		t.Errorf("standardiser (-rows +columns):\n%s", d)
	}

	for _, cfg := range []LogisticConfig{{}, {ClassWeight: ClassWeightBalanced, C: 0.1}} {
		r1, err := LogisticRegression(X, y, cfg)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := LogisticRegression(cm, y, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(r1, r2); d != "" {
			t.Errorf("%+v: fit (-rows +columns):\n%s", cfg, d)
		}
		if d := cmp.Diff(r1.PredictProba(nil, X), r2.PredictProba(nil, cm)); d != "" {
			t.Errorf("%+v: probabilities (-rows +columns):\n%s", cfg, d)
		}
	}

	// The first non-finite value in row order is reported either way.
	bad := mat.DenseCopyOf(X)
	bad.Set(900, 4, math.Inf(1))
	bad.Set(901, 1, math.NaN())
	bad.Set(2000, 0, math.Inf(-1))
	badCM := transposeDense(bad).T()
	_, e1 := LogisticRegression(bad, y, LogisticConfig{})
	_, e2 := LogisticRegression(badCM, y, LogisticConfig{})
	if !errors.Is(e2, ErrNaN) || e1 == nil || e1.Error() != e2.Error() {
		t.Errorf("logistic errors: rows %v, columns %v", e1, e2)
	}
	_, e1 = FitStandardizer(bad)
	_, e2 = FitStandardizer(badCM)
	if !errors.Is(e2, ErrNaN) || e1 == nil || e1.Error() != e2.Error() {
		t.Errorf("standardiser errors: rows %v, columns %v", e1, e2)
	}
}

// TestLogisticProba: the probabilities LogisticConfig.Proba receives from
// the solver's last pass are PredictProba's at the returned coefficients,
// bit for bit, in both layouts, with weights, and on separable data.
func TestLogisticProba(t *testing.T) {
	X, y := logisticBenchData(70000)
	n, p := X.Dims()
	cm := mat.NewDense(p, n, nil)
	cm.Copy(X.T())
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
		cfg  LogisticConfig
	}{
		{"rows", X, y, LogisticConfig{}},
		{"columns", cm.T(), y, LogisticConfig{}},
		{"balanced", X, y, LogisticConfig{ClassWeight: ClassWeightBalanced, C: 0.01}},
		{"separable", sep, ySep, LogisticConfig{}},
		{"separable C=1e12", sep, ySep, LogisticConfig{C: 1e12}},
		{"one iteration", X, y, LogisticConfig{MaxIter: 1}},
	} {
		rows, _ := c.X.Dims()
		c.cfg.Proba = make([]float64, rows)
		res, err := LogisticRegression(c.X, c.y, c.cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := res.PredictProba(nil, c.X)
		for i := range want {
			if c.cfg.Proba[i] != want[i] {
				t.Fatalf("%s: row %d: Proba %v, PredictProba %v", c.name, i, c.cfg.Proba[i], want[i])
			}
		}
	}
}
