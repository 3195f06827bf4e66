package experiment

import (
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// modelTol is the relative tolerance against scikit-learn: both sides
// average the same float64 durations or solve the same least-squares
// problem, so only summation order and solver rounding differ.
const modelTol = 1e-9

// fitHandTol is the absolute tolerance for hand-computed fits: sums of a few
// float64 terms, exact but for rounding.
const fitHandTol = 1e-12

func TestKNNHand(t *testing.T) {
	var s []sample
	for i := 1; i <= 10; i++ {
		s = append(s, sample{"p", float64(i), 10 * float64(i)})
	}
	s = append(s, sample{"q", 1, 7})
	m := fitKNN(s, 3)
	for _, tt := range []struct{ x, want float64 }{
		{5.2, 50},  // 5, 6, 4
		{100, 90},  // 8, 9, 10
		{-5, 20},   // 1, 2, 3
		{5.5, 50},  // tie between 5 and 6 goes to the smaller: 5, 6, then 4 vs 7 tie -> 4
		{9.75, 90}, // 10, 9, 8
	} {
		got, err := m.Predict("p", tt.x)
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("Predict(p, %g) = %g, want %g", tt.x, got, tt.want)
		}
	}
	if got, _ := m.Predict("q", 50); got != 7 {
		t.Errorf("fewer samples than k: got %g, want the mean 7", got)
	}
	if _, err := m.Predict("r", 1); !errors.Is(err, errUnknownPackage) {
		t.Errorf("unknown package: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("fitKNN(k=0) should panic")
		}
	}()
	fitKNN(s, 0)
}

func TestLinearHand(t *testing.T) {
	s := []sample{{"p", 1, 5}, {"p", 2, 8}, {"p", 4, 14}, {"o", 1, 3}, {"o", 3, 9}}
	l, err := fitLinear(s, true)
	if err != nil {
		t.Fatal(err)
	}
	a, b, ok := l.coefficients("p")
	if !ok || !cmp.Equal([]float64{2, 3}, []float64{a, b}, cmpopts.EquateApprox(0, fitHandTol)) {
		t.Errorf("p: got %g + %g x, want 2 + 3x", a, b)
	}
	l0, err := fitLinear(s, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := l0.Predict("o", 10); !cmp.Equal(30.0, got, cmpopts.EquateApprox(0, fitHandTol)) {
		t.Errorf("through the origin: Predict(o, 10) = %g, want 30", got)
	}
	if _, err := fitLinear([]sample{{"p", 1, 1}}, true); err == nil {
		t.Error("one sample should fail")
	}
	if _, err := fitLinear([]sample{{"p", 1, 1}, {"p", 1, 2}}, true); err == nil {
		t.Error("constant memory should fail")
	}
}

// TestModelsGolden compares with scikit-learn; testdata/models_golden.json
// comes from testdata/gen_models.py (versions recorded in the file).
func TestModelsGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/models_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Packages []struct {
			Name                      string
			Memory, Duration, Queries []float64
			KNN5                      []float64 `json:"knn5"`
			LinearOriginSlope         float64   `json:"linear_origin_slope"`
			LinearIntercept           float64   `json:"linear_intercept"`
			LinearSlope               float64   `json:"linear_slope"`
		}
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	var s []sample
	for _, p := range g.Packages {
		for i := range p.Memory {
			s = append(s, sample{p.Name, p.Memory[i], p.Duration[i]})
		}
	}
	knn := fitKNN(s, 5)
	l0, err := fitLinear(s, false)
	if err != nil {
		t.Fatal(err)
	}
	l1, err := fitLinear(s, true)
	if err != nil {
		t.Fatal(err)
	}
	opt := cmpopts.EquateApprox(modelTol, 0)
	for _, p := range g.Packages {
		got := make([]float64, len(p.Queries))
		for i, q := range p.Queries {
			got[i], _ = knn.Predict(p.Name, q)
		}
		if diff := cmp.Diff(p.KNN5, got, opt); diff != "" {
			t.Errorf("%s knnModel (-sklearn +ours):\n%s", p.Name, diff)
		}
		_, b0, _ := l0.coefficients(p.Name)
		a1, b1, _ := l1.coefficients(p.Name)
		if diff := cmp.Diff([]float64{p.LinearOriginSlope, p.LinearIntercept, p.LinearSlope}, []float64{b0, a1, b1}, opt); diff != "" {
			t.Errorf("%s linear (-sklearn +ours):\n%s", p.Name, diff)
		}
	}
}
