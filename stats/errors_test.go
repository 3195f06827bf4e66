package stats

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/crosscluster/crosscluster/internal/errtest"
)

// noRows is a matrix with zero rows, which mat.NewDense cannot make.
type noRows struct{}

func (noRows) Dims() (int, int)                { return 0, 2 }
func (noRows) At(int, int) float64             { panic("no rows") }
func (m noRows) T() mat.Matrix                 { return mat.Transpose{Matrix: m} }
func err2[T any](_ T, err error) error         { return err }
func err3[T, U any](_ T, _ U, err error) error { return err }

// TestErrors provokes each error the documentation of stats promises, with
// bad data through the exported functions, and checks that errors.Is
// names its sentinel, errors.As finds a *CurveError where one is promised
// (with the function and the offending index), and the message carries
// "stats: " once, at its start, with the place it names. The test is in
// package stats only so that it can keep naming the curve sentinels while
// they are being merged into ErrEmpty and ErrNaN.
func TestErrors(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	x3 := []float64{1, 2, 3}
	x6 := []float64{1, 2, 3, 4, 5, 6}
	y6 := []float64{6, 4, 3, 2.5, 2.2, 2}
	withNaN := func(s []float64, i int, v float64) []float64 {
		s = append([]float64(nil), s...)
		s[i] = v
		return s
	}
	logit := func(X mat.Matrix, y []int, cfg LogisticConfig) error {
		_, err := LogisticRegression(X, y, cfg)
		return err
	}
	X := mat.NewDense(4, 1, []float64{0, 1, 2, 3})
	tests := []struct {
		name  string
		err   error
		is    error
		curve string // the Func of the *CurveError, "" when none is promised
		index int    // its Index
		place []string
	}{
		{name: "KS2Samp empty first sample", err: err2(KS2Samp(nil, x3, TwoSided, KSAuto)), is: ErrEmpty, place: []string{"KS2Samp", "first sample"}},
		{name: "KS2Samp second sample all NaN", err: err2(KS2Samp(x3, []float64{nan, nan}, TwoSided, KSExact)), is: ErrEmpty, place: []string{"KS2Samp", "second sample", "n=2"}},
		{name: "AUC empty", err: err2(AUC(nil, nil, nil)), is: ErrEmpty, place: []string{"AUC"}},
		{name: "AUC NaN score", err: err2(AUC([]float64{0.1, nan}, []bool{false, true}, nil)), is: ErrNaN, place: []string{"AUC", "score 1"}},
		{name: "AUC negative weight", err: err2(AUC(x3, []bool{false, true, true}, []float64{1, 1, -1})), is: ErrWeight, place: []string{"AUC", "weight 2"}},
		{name: "AUC Inf weight", err: err2(AUC(x3, []bool{false, true, true}, []float64{inf, 1, 1})), is: ErrWeight, place: []string{"AUC", "weight 0"}},
		{name: "AUC one class", err: err2(AUC(x3, []bool{true, true, true}, nil)), is: ErrOneClass, place: []string{"AUC"}},
		{name: "AUC class of zero weight", err: err2(AUC(x3, []bool{false, true, true}, []float64{0, 1, 1})), is: ErrOneClass, place: []string{"AUC", "negative weight 0"}},
		{name: "LogisticRegression no rows", err: logit(noRows{}, nil, LogisticConfig{}), is: ErrEmpty, place: []string{"LogisticRegression"}},
		{name: "LogisticRegression NaN in X", err: logit(mat.NewDense(4, 1, []float64{0, 1, nan, 3}), []int{0, 1, 0, 1}, LogisticConfig{}), is: ErrNaN, place: []string{"LogisticRegression", "row 2, column 0"}},
		{name: "LogisticRegression one class", err: logit(X, []int{1, 1, 1, 1}, LogisticConfig{}), is: ErrOneClass, place: []string{"LogisticRegression"}},
		{name: "LogisticRegression bad weight", err: logit(X, []int{0, 1, 0, 1}, LogisticConfig{SampleWeight: []float64{1, nan, 1, 1}}), is: ErrWeight, place: []string{"LogisticRegression", "weight 1"}},
		{name: "LogisticRegression label 2", err: logit(X, []int{0, 1, 2, 1}, LogisticConfig{}), place: []string{"LogisticRegression", "y[2]"}},
		{name: "FitStandardizer Inf", err: err2(FitStandardizer(mat.NewDense(2, 2, []float64{1, 2, 3, inf}))), is: ErrNaN, place: []string{"FitStandardizer", "row 1, column 1"}},
		{name: "FitStandardizer column of NaN", err: err2(FitStandardizer(mat.NewDense(2, 2, []float64{1, nan, 3, nan}))), is: ErrEmpty, place: []string{"FitStandardizer", "column 1"}},

		{name: "Pearson one point", err: err3(Pearson([]float64{1}, []float64{1})), is: ErrEmpty, curve: "Pearson", index: -1},
		{name: "Pearson NaN", err: err3(Pearson(x3, withNaN(x3, 1, nan))), is: ErrNaN, curve: "Pearson", index: 1},
		{name: "Pearson constant", err: err3(Pearson(x3, []float64{2, 2, 2})), is: ErrCurveDegenerate, curve: "Pearson", index: -1},
		{name: "Spearman two points", err: err3(Spearman(x3[:2], x3[:2])), is: ErrEmpty, curve: "Spearman", index: -1},
		{name: "Spearman Inf", err: err3(Spearman(withNaN(x3, 2, inf), x3)), is: ErrNaN, curve: "Spearman", index: 2},
		{name: "Spearman constant", err: err3(Spearman([]float64{5, 5, 5}, x3)), is: ErrCurveDegenerate, curve: "Spearman", index: -1},
		{name: "FitPowerLaw two points", err: err2(FitPowerLaw(x3[:2], x3[:2])), is: ErrEmpty, curve: "FitPowerLaw", index: -1},
		{name: "FitPowerLaw NaN", err: err2(FitPowerLaw(x3, withNaN(x3, 0, nan))), is: ErrNaN, curve: "FitPowerLaw", index: 0},
		{name: "FitPowerLaw zero", err: err2(FitPowerLaw(x3, withNaN(x3, 1, 0))), is: ErrCurveNonPositive, curve: "FitPowerLaw", index: 1},
		{name: "FitPowerLaw equal x", err: err2(FitPowerLaw([]float64{2, 2, 2}, x3)), is: ErrCurveDegenerate, curve: "FitPowerLaw", index: -1},
		{name: "FitExponential three points", err: err2(FitExponential(x3, x3)), is: ErrEmpty, curve: "FitExponential", index: -1},
		{name: "FitExponential Inf", err: err2(FitExponential(x6, withNaN(y6, 4, -inf))), is: ErrNaN, curve: "FitExponential", index: 4},
		{name: "FitExponential equal x", err: err2(FitExponential([]float64{1, 1, 1, 1}, []float64{1, 2, 3, 4})), is: ErrCurveDegenerate, curve: "FitExponential", index: -1},
		{name: "KneeAIC five points", err: err2(KneeAIC(x6[:5], y6[:5], 0)), is: ErrEmpty, curve: "KneeAIC", index: -1},
		{name: "KneeAIC NaN", err: err2(KneeAIC(x6, withNaN(y6, 3, nan), 0)), is: ErrNaN, curve: "KneeAIC", index: 3},
		{name: "KneeAIC negative", err: err2(KneeAIC(x6, withNaN(y6, 5, -1), 0)), is: ErrCurveNonPositive, curve: "KneeAIC", index: 5},
		{name: "KneeAIC x not increasing", err: err2(KneeAIC(withNaN(x6, 2, 2), y6, 0)), is: ErrCurveDegenerate, curve: "KneeAIC", index: 2},
		{name: "Slope one point in window", err: err2(Slope(x3, x3, 2, 2)), is: ErrEmpty, curve: "Slope", index: -1},
		{name: "Slope NaN in window", err: err2(Slope(x3, withNaN(x3, 1, nan), 1, 3)), is: ErrNaN, curve: "Slope", index: 1},
		{name: "Slope equal x", err: err2(Slope([]float64{2, 2, 2}, x3, 1, 3)), is: ErrCurveDegenerate, curve: "Slope", index: -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil {
				t.Fatal("no error")
			}
			if tc.is != nil && !errors.Is(tc.err, tc.is) {
				t.Errorf("errors.Is(%q, %q) is false", tc.err, tc.is)
			}
			var ce *CurveError
			switch {
			case tc.curve == "" && errors.As(tc.err, &ce):
				t.Errorf("%q is a *CurveError; none is documented", tc.err)
			case tc.curve != "" && !errors.As(tc.err, &ce):
				t.Errorf("%q is not a *CurveError", tc.err)
			case tc.curve != "" && (ce.Func != tc.curve || ce.Index != tc.index):
				t.Errorf("CurveError{Func: %q, Index: %d}, want {%q, %d}", ce.Func, ce.Index, tc.curve, tc.index)
			}
			place := tc.place
			if tc.curve != "" {
				place = append(place, tc.curve)
			}
			errtest.Check(t, tc.err, "stats: ", place...)
		})
	}
}
