package stats

import (
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gonum.org/v1/gonum/mat"
)

// stdTol (relative): means and population standard deviations of 50 values. Both
// sides sum sequentially in float64 (NumPy reduces axis 0 row by row), so
// they agree to a few ulps.
const stdTol = 1e-13

// stdFloats decodes a JSON list in which null stands for NaN.
type stdFloats []float64

func (f *stdFloats) UnmarshalJSON(b []byte) error {
	var raw []*float64
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*f = make([]float64, len(raw))
	for i, p := range raw {
		if p == nil {
			(*f)[i] = math.NaN()
		} else {
			(*f)[i] = *p
		}
	}
	return nil
}

type stdGolden struct {
	X           []stdFloats `json:"X"`
	Mean        stdFloats   `json:"mean"`
	Scale       stdFloats   `json:"scale"`
	Transformed []stdFloats `json:"transformed"`
	Median      []struct {
		X        []float64 `json:"x"`
		Median   float64   `json:"median"`
		Q        []float64 `json:"q"`
		Quantile []float64 `json:"quantile"`
	} `json:"median"`
}

func stdDense(rows []stdFloats) *mat.Dense {
	d := mat.NewDense(len(rows), len(rows[0]), nil)
	for i, r := range rows {
		d.SetRow(i, r)
	}
	return d
}

// Golden values in testdata/standard_cases.json: scikit-learn 1.2.1
// StandardScaler and NumPy 1.24.2 median/quantile, written by
// /usr/bin/python3 stats/testdata/gen_core.py. Column 3 is constant
// (scale 1), column 1 has a tiny spread, columns 0 and 2 hold NaNs.
func TestStandardizerGolden(t *testing.T) {
	var g stdGolden
	ksLoadJSON(t, "standard_cases.json", &g)
	X := stdDense(g.X)
	before := mat.DenseCopyOf(X)
	s, err := FitStandardizer(X)
	if err != nil {
		t.Fatal(err)
	}
	opt := []cmp.Option{cmpopts.EquateApprox(stdTol, 0), cmpopts.EquateNaNs()}
	if d := cmp.Diff([]float64(g.Mean), s.Mean, opt...); d != "" {
		t.Errorf("mean (-sklearn +got):\n%s", d)
	}
	if d := cmp.Diff([]float64(g.Scale), s.Scale, opt...); d != "" {
		t.Errorf("scale (-sklearn +got):\n%s", d)
	}
	got := s.Transform(nil, X)
	want := stdDense(g.Transformed)
	if d := cmp.Diff(want.RawMatrix().Data, got.RawMatrix().Data, cmpopts.EquateApprox(stdTol, stdTol), cmpopts.EquateNaNs()); d != "" {
		t.Errorf("transform (-sklearn +got):\n%s", d)
	}
	// NaN != NaN makes mat.Equal useless here; compare bit patterns.
	for i, v := range before.RawMatrix().Data {
		if math.Float64bits(v) != math.Float64bits(X.RawMatrix().Data[i]) {
			t.Fatal("FitStandardizer/Transform modified X")
		}
	}
}

func TestStandardizerErrors(t *testing.T) {
	if _, err := FitStandardizer(mat.NewDense(1, 2, []float64{1, math.Inf(1)})); !errors.Is(err, ErrNaN) {
		t.Errorf("Inf: %v", err)
	}
	if _, err := FitStandardizer(mat.NewDense(2, 2, []float64{1, math.NaN(), 2, math.NaN()})); !errors.Is(err, ErrEmpty) {
		t.Errorf("all-NaN column: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("column mismatch did not panic")
		}
	}()
	s := &Standardizer{Mean: []float64{0}, Scale: []float64{1}}
	s.Transform(nil, mat.NewDense(1, 2, nil))
}
