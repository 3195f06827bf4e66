package stats

import (
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestErrorsIs: every documented data error of the package matches its
// sentinel under errors.Is (and the deprecated names ErrEmpty and
// ErrNaN, which are the same values as ErrEmpty and ErrNaN),
// curve errors are *CurveError under errors.As, and each message carries
// the package prefix once.
func TestErrorsIs(t *testing.T) {
	nan := math.NaN()
	one := mat.NewDense(3, 1, []float64{1, 2, 3})
	second := func(_ any, err error) error { return err }
	third := func(_, _ any, err error) error { return err }
	tests := []struct {
		name  string
		err   error
		want  []error
		curve bool
	}{
		{"KS2Samp empty", second(KS2Samp(nil, []float64{1}, TwoSided, KSAuto)), []error{ErrEmpty}, false},
		{"KS2Samp all NaN", second(KS2Samp([]float64{1}, []float64{nan}, TwoSided, KSAuto)), []error{ErrEmpty}, false},
		{"AUC empty", second(AUC(nil, nil, nil)), []error{ErrEmpty}, false},
		{"AUC one class", second(AUC([]float64{1, 2}, []bool{true, true}, nil)), []error{ErrOneClass}, false},
		{"AUC NaN score", second(AUC([]float64{1, nan}, []bool{true, false}, nil)), []error{ErrNaN}, false},
		{"AUC bad weight", second(AUC([]float64{1, 2}, []bool{true, false}, []float64{1, -1})), []error{ErrWeight}, false},
		{"LogisticRegression no rows", second(LogisticRegression(mat.NewDense(1, 1, nil).Slice(0, 0, 0, 1), nil, LogisticConfig{})), []error{ErrEmpty}, false},
		{"LogisticRegression one class", second(LogisticRegression(one, []int{1, 1, 1}, LogisticConfig{})), []error{ErrOneClass}, false},
		{"LogisticRegression NaN", second(LogisticRegression(mat.NewDense(2, 1, []float64{1, nan}), []int{0, 1}, LogisticConfig{})), []error{ErrNaN}, false},
		{"LogisticRegression weight", second(LogisticRegression(one, []int{0, 1, 0}, LogisticConfig{SampleWeight: []float64{1, nan, 1}})), []error{ErrWeight}, false},
		{"FitStandardizer NaN column", second(FitStandardizer(mat.NewDense(2, 1, []float64{nan, nan}))), []error{ErrEmpty}, false},
		{"FitStandardizer Inf", second(FitStandardizer(mat.NewDense(2, 1, []float64{1, math.Inf(1)}))), []error{ErrNaN}, false},
		{"Pearson short", third(Pearson([]float64{1}, []float64{2})), []error{ErrEmpty}, true},
		{"Spearman NaN", third(Spearman([]float64{1, nan, 3}, []float64{1, 2, 3})), []error{ErrNaN}, true},
		{"FitPowerLaw non-positive", second(FitPowerLaw([]float64{1, 2, 3}, []float64{1, 0, 1})), []error{ErrCurveNonPositive}, true},
		{"FitExponential degenerate", second(FitExponential([]float64{1, 1, 1, 1, 1}, []float64{1, 2, 3, 4, 5})), []error{ErrCurveDegenerate}, true},
		{"KneeAIC short", second(KneeAIC([]float64{1}, []float64{1}, 2)), []error{ErrEmpty}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !errors.Is(tc.err, w) {
					t.Errorf("%v: errors.Is(err, %v) is false", tc.err, w)
				}
			}
			var ce *CurveError
			if errors.As(tc.err, &ce) != tc.curve {
				t.Errorf("%v: errors.As(*CurveError) = %v, want %v", tc.err, !tc.curve, tc.curve)
			}
			if n := strings.Count(tc.err.Error(), "stats:"); n != 1 {
				t.Errorf("%q: %d package prefixes, want 1", tc.err, n)
			}
		})
	}
}
