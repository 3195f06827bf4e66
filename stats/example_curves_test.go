package stats_test

import (
	"fmt"
	"math"

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
