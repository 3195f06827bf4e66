package stats

import (
	"math"
	"testing"
)

// balanceTol: hand-computed rational values, a few float64 roundings.
const balanceTol = 1e-14

func TestBalance(t *testing.T) {
	x := []float64{1, 2, 3, 4, math.NaN()}
	y := []float64{2, 4, 6, 8}
	// mean 2.5 vs 5; sample variances 5/3 and 20/3; pooled sqrt(25/6).
	if got, want := SMD(x, y), -2.5/math.Sqrt(25.0/6); math.Abs(got-want) > balanceTol {
		t.Errorf("SMD = %v, want %v", got, want)
	}
	if got, want := VarianceRatio(x, y), 0.25; math.Abs(got-want) > balanceTol {
		t.Errorf("VarianceRatio = %v, want %v", got, want)
	}
	if got := SMD([]float64{1}, y); !math.IsNaN(got) {
		t.Errorf("SMD with one value = %v, want NaN", got)
	}
	if got := SMD([]float64{3, 3}, []float64{3, 3}); got != 0 {
		t.Errorf("SMD of equal constants = %v", got)
	}
	if got := SMD([]float64{3, 3}, []float64{4, 4}); !math.IsInf(got, -1) {
		t.Errorf("SMD of distinct constants = %v, want -Inf", got)
	}
	if got := KishESS([]float64{1, 1, 1, 1}); got != 4 {
		t.Errorf("KishESS uniform = %v", got)
	}
	if got, want := KishESS([]float64{1, 2, 3}), 36.0/14; math.Abs(got-want) > balanceTol {
		t.Errorf("KishESS = %v, want %v", got, want)
	}
	if KishESS(nil) != 0 {
		t.Error("KishESS(nil) != 0")
	}
}
