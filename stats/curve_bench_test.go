package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The sizes match the peer timings of `gen_curves.py --bench` (NumPy,
// SciPy, pandas) so the two can be compared side by side.

func curveBenchLoss(n int) (x, y []float64) {
	rng := rand.New(rand.NewPCG(42, 42))
	x = make([]float64, n)
	y = make([]float64, n)
	for i := range x {
		x[i] = float64(i+1) / 4
		y[i] = 2.5 * math.Pow(x[i], -0.45) * math.Exp(0.02*rng.NormFloat64())
	}
	return x, y
}

func BenchmarkFitPowerLaw(b *testing.B) {
	for _, n := range []int{200, 10000} {
		x, y := curveBenchLoss(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := FitPowerLaw(x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkFitExponential(b *testing.B) {
	for _, n := range []int{200, 10000} {
		x, y := curveBenchLoss(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := FitExponential(x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkKneeAIC(b *testing.B) {
	for _, n := range []int{50, 200} {
		// An exponential curve is the worst case: no tail switches to a
		// power law, so every tail is fitted.
		rng := rand.New(rand.NewPCG(42, 42))
		x := make([]float64, n)
		y := make([]float64, n)
		for i := range x {
			x[i] = float64(i+1) / 4
			y[i] = 2*math.Exp(-0.1*x[i]) + 0.5 + 0.001*rng.NormFloat64()
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := KneeAIC(x, y, 2); err != nil {
					b.Fatal(err)
				}
			}
		})
		// The same scan with a full exponential fit on every tail, to
		// measure what the fixed-rate shortcut saves.
		b.Run(fmt.Sprintf("fullscan/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				kneeAICBrute(x, y, 2)
			}
		})
	}
}

func BenchmarkSpearman(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		x, y := curveBenchLoss(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := Spearman(x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPearson(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		x, y := curveBenchLoss(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := Pearson(x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
