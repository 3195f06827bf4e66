package stats_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/crosscluster/crosscluster/stats"
)

// A validation-loss curve, one point per epoch: fit the power law, find
// the burn-in and the early slope.
func ExampleFitPowerLaw() {
	epochs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	loss := make([]float64, len(epochs))
	for i, e := range epochs {
		loss[i] = 2.4 * math.Pow(e, -0.5) * (1 + 0.01*math.Sin(e))
	}
	fit, err := stats.FitPowerLaw(epochs, loss)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("loss ≈ %.2f·epoch^%.3f, R² = %.4f, robust %v\n", fit.A, fit.B, fit.R2, fit.Robust)
	fmt.Println("burn-in index:", stats.BurnIn(loss, 1.0))
	s, _ := stats.Slope(epochs, loss, 5, 15)
	fmt.Printf("slope over epochs 5–15: %.4f\n", s)
	// NumPy 1.24.2 np.polyfit on the same data gives A = 2.4101,
	// B = -0.50166 and a window slope of -0.042456.

	// Output:
	// loss ≈ 2.41·epoch^-0.502, R² = 0.9997, robust false
	// burn-in index: 5
	// slope over epochs 5–15: -0.0425
}

func ExampleKneedle() {
	// Figure 2 of Satopää et al. (2011): the knee is at x = 0.22.
	x := make([]float64, 10)
	y := make([]float64, 10)
	for i := range x {
		x[i] = float64(i) / 9
		y[i] = -1/(x[i]+0.1) + 5
	}
	knee, ok := stats.Kneedle(x, y, stats.KneedleOptions{})
	fmt.Printf("knee at x = %.4f (%v)\n", knee, ok)
	// Output:
	// knee at x = 0.2222 (true)
}

func ExampleEWMA() {
	nan := math.NaN()
	x := []float64{1, nan, 3, 4}
	fmt.Printf("adjust:     %.4f\n", stats.EWMA(nil, x, 0.5, true, false))
	fmt.Printf("ignore_na:  %.4f\n", stats.EWMA(nil, x, 0.5, true, true))
	fmt.Printf("recursive:  %.4f\n", stats.EWMA(nil, x, 0.5, false, false))
	// pandas 1.5.3: pd.Series([1, nan, 3, 4]).ewm(alpha=0.5, adjust=...,
	// ignore_na=...).mean() prints the same values.

	// Output:
	// adjust:     [1.0000 1.0000 2.6000 3.4615]
	// ignore_na:  [1.0000 1.0000 2.3333 3.2857]
	// recursive:  [1.0000 1.0000 2.3333 3.1667]
}

func ExampleSpearman() {
	// H2 of a sweep: early slope against best validation loss per run.
	slope := []float64{-0.09, -0.07, -0.12, -0.05, -0.10, -0.03, -0.08, -0.06}
	best := []float64{0.41, 0.45, 0.38, 0.52, 0.43, 0.57, 0.40, 0.47}
	rho, p, err := stats.Spearman(slope, best)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("rho = %.4f, p = %.5f\n", rho, p)
	// scipy.stats.spearmanr (SciPy 1.10.1): 0.9048, 0.00201.

	// Output:
	// rho = 0.9048, p = 0.00201
}

func ExampleHutchPP() {
	// The trace of diag(1, 1/4, 1/9, …) from 30 matrix–vector products.
	const n = 200
	mv := func(dst, v []float64) {
		for i := range v {
			dst[i] = v[i] / float64((i+1)*(i+1))
		}
	}
	var exact float64
	for i := range n {
		exact += 1 / float64((i+1)*(i+1))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	est := stats.HutchPP(mv, n, 30, rng)
	fmt.Printf("exact %.3f, Hutch++ within 1%%: %v\n", exact, math.Abs(est-exact) < 0.01*exact)
	// Output:
	// exact 1.640, Hutch++ within 1%: true
}

func ExamplePowerIteration() {
	// Largest eigenvalue of [[2 1] [1 2]] is 3.
	mv := func(dst, v []float64) {
		dst[0] = 2*v[0] + v[1]
		dst[1] = v[0] + 2*v[1]
	}
	rng := rand.New(rand.NewPCG(1, 2))
	lambda, v, err := stats.PowerIteration(mv, 2, 200, 1e-10, rng)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("λ = %.6f, |v| components %.4f %.4f\n", lambda, math.Abs(v[0]), math.Abs(v[1]))
	// Output:
	// λ = 3.000000, |v| components 0.7071 0.7071
}
