package rank

import (
	"fmt"
	"math"
	"testing"
)

// smirnovPeakRTol: the peak summation and SciPy's full series are two
// float64 evaluations of the same sum. Each term of either has a relative
// error of a few hundred ulp at n = 10^6 (powers with exponents up to n,
// log-space anchors whose absolute error is a few ulp of n·x), and the
// skipped tail is below 2^-56 of the sum; the largest difference seen on this
// grid is 2.7e-13.
const smirnovPeakRTol = 1e-12

// TestSmirnovPeakMatchesSeries checks the outward summation against the
// full Smirnov series over the whole range where it is used, from the
// lower edge of the log-concavity condition to the underflow cut-off.
func TestSmirnovPeakMatchesSeries(t *testing.T) {
	ns := []int{200, 201, 1000, 4999, 100000, 250000, 1000000}
	used := 0
	for _, n := range ns {
		fs := []float64{0, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 1}
		if n == 1000000 {
			// The full series costs about 0.5 s per value here.
			fs = []float64{0, 0.5}
			if testing.Short() {
				continue
			}
		}
		fn := float64(n)
		// Smallest x with (nx-1)² ≥ 2n, then up to the underflow cut-off.
		xMin := (math.Sqrt(2*fn) + 1) / fn
		xMax := math.Min(math.Sqrt(-minLog/(2*fn)), 0.5)
		for _, f := range fs {
			x := xMin + f*(xMax-xMin)
			t.Run(fmt.Sprintf("n=%d/x=%.6g", n, x), func(t *testing.T) {
				if !smirnovPeakApplies(n, x) {
					t.Fatalf("peak summation should apply")
				}
				nx := fn * x
				vmax := int(math.Floor(fn - nx))
				if _, ok := smirnovPeakSum(n, nx, math.FMA(fn, x, -nx), vmax); ok {
					used++
				}
				got, _ := smirnovSum(n, x, true)
				want, _ := smirnovSum(n, x, false)
				if want < 0x1p-1000 {
					return // subnormal range: both lose relative precision
				}
				if rel := math.Abs(got-want) / want; rel > smirnovPeakRTol {
					t.Errorf("SmirnovSF peak sum %.17g, full series %.17g (rel %.2g)", got, want, rel)
				}
			})
		}
	}
	if used == 0 {
		t.Fatal("the peak summation was never used")
	}
}

func TestSmirnovPeakApplies(t *testing.T) {
	tests := []struct {
		n    int
		x    float64
		want bool
	}{
		{100, 0.3, false},        // n below smPeakMinN
		{1000, 0.03, false},      // n·x² = 0.9 < 1
		{1000, 0.045, false},     // (nx-1)² = 1936 < 2n
		{1000, 0.05, true},       // (nx-1)² = 2401, n·x² = 2.5
		{100000, 0.001, false},   // n·x² = 0.1
		{100000, 0.01, true},     // n·x² = 10
		{1000000, 0.0014, false}, // (nx-1)² = 1.957e6 < 2n
		{1000000, 0.0015, true},  // (nx-1)² = 2.247e6
		{2000000, 0.01, false},   // beyond smirnovMaxComputeN (SciPy's approximation)
	}
	for _, tt := range tests {
		if got := smirnovPeakApplies(tt.n, tt.x); got != tt.want {
			t.Errorf("smirnovPeakApplies(%d, %g) = %v, want %v", tt.n, tt.x, got, tt.want)
		}
	}
}

// BenchmarkSmirnovPeak times SmirnovSF by the peak summation on the
// p-values of overlap's benchmark shapes (n = 250,000 and 128,423, the
// effective sizes of two KS tests there, at their statistics).
func BenchmarkSmirnovPeak(b *testing.B) {
	for _, c := range []struct {
		n int
		x float64
	}{{250000, 0.03046}, {128423, 0.012973058326803188}} {
		b.Run(fmt.Sprintf("n=%d", c.n), func(b *testing.B) {
			for b.Loop() {
				smirnovSum(c.n, c.x, true)
			}
		})
	}
}
