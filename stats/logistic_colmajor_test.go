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
