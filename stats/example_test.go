package stats_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/crosscluster/crosscluster/stats"
)

// Two samples from SciPy's TestKSTwoSamples.testTwoVsFour. SciPy 1.10.1's
// ks_2samp gives D = 0.5, p = 0.93333 (two-sided), D = 0.5, p = 0.53333
// (greater), D = 0.25, p = 0.8 (less), with the same locations and signs.
func ExampleKS2Samp() {
	x := []float64{1.01, 2.01}
	y := []float64{1, 2, 3, 4}
	for _, alt := range []stats.Alternative{stats.TwoSided, stats.Greater, stats.Less} {
		r, err := stats.KS2Samp(x, y, alt, stats.KSAuto)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-9v D=%.4f p=%.4f at %.2f sign %+d (%v)\n", alt, r.Statistic, r.PValue, r.Location, r.Sign, r.Method)
	}
	// Output:
	// two-sided D=0.5000 p=0.9333 at 2.01 sign +1 (exact)
	// greater   D=0.5000 p=0.5333 at 2.01 sign +1 (exact)
	// less      D=0.2500 p=0.8000 at 1.00 sign -1 (exact)
}

// Tail probabilities of the Kolmogorov–Smirnov statistics. SciPy 1.10.1:
// kstwo.sf(0.3, 20) = 0.0430671, smirnov(20, 0.3) = 0.0215336,
// kstwobign.sf(1.36) = 0.0494859.
func ExampleKolmogorovSF() {
	fmt.Printf("%.5f\n", stats.KolmogorovSF(20, 0.3))
	fmt.Printf("%.5f\n", stats.SmirnovSF(20, 0.3))
	fmt.Printf("%.5f\n", stats.KolmogorovLimitSF(1.36))
	// Output:
	// 0.04307
	// 0.02153
	// 0.04949
}

// Ties count one half; weights multiply pairs (scikit-learn 1.2.1
// roc_auc_score gives 0.75 and 0.851852 for these inputs).
func ExampleAUC() {
	scores := []float64{0.1, 0.4, 0.35, 0.8, 0.4}
	positive := []bool{false, false, true, true, true}
	auc, _ := stats.AUC(scores, positive, nil)
	fmt.Printf("%.4f\n", auc)
	wauc, _ := stats.AUC(scores, positive, []float64{1, 2, 0.5, 3, 1})
	fmt.Printf("%.4f\n", wauc)
	_, err := stats.AUC(scores, []bool{true, true, true, true, true}, nil)
	fmt.Println(err)
	// Output:
	// 0.7500
	// 0.8519
	// stats: AUC: positive weight 5, negative weight 0: only one class present
}

// An L2 logistic fit solved to the exact optimum, then its probabilities.
// scikit-learn 1.2.1 LogisticRegression(C=1, tol=1e-12) stops at coef
// 0.632209, intercept -0.001655, probabilities 0.3466 and 0.6526.
func ExampleLogisticRegression() {
	X := mat.NewDense(8, 1, []float64{-2, -1.5, -1, -0.2, 0.3, 1, 1.4, 2})
	y := []int{0, 0, 1, 0, 1, 0, 1, 1}
	res, err := stats.LogisticRegression(X, y, stats.LogisticConfig{C: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("coef %.6f intercept %.6f converged %v after %d Newton steps\n",
		res.Coef[0], res.Intercept, res.Converged, res.Iterations)
	p := res.PredictProba(nil, mat.NewDense(2, 1, []float64{-1, 1}))
	fmt.Printf("P(y=1|x=-1) = %.4f, P(y=1|x=1) = %.4f\n", p[0], p[1])
	// Output:
	// coef 0.632210 intercept -0.001649 converged true after 4 Newton steps
	// P(y=1|x=-1) = 0.3466, P(y=1|x=1) = 0.6526
}

// Standardise columns as scikit-learn's StandardScaler does; a constant
// column keeps scale 1.
func ExampleFitStandardizer() {
	X := mat.NewDense(4, 2, []float64{1, 5, 2, 5, 3, 5, 4, 5})
	s, err := stats.FitStandardizer(X)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("mean", s.Mean, "scale", fmt.Sprintf("[%.4f %.0f]", s.Scale[0], s.Scale[1]))
	Z := s.Transform(nil, X)
	fmt.Printf("%.4f\n", mat.Col(nil, 0, Z))
	// Output:
	// mean [2.5 5] scale [1.1180 1]
	// [-1.3416 -0.4472 0.4472 1.3416]
}

// NumPy-compatible median and default (linear) quantile.
func ExampleQuantile() {
	x := []float64{7, 1, 3, 9}
	fmt.Println(stats.Median(x), stats.Quantile(x, 0.25), stats.Quantile(x, 0.9))
	// Output:
	// 5 2.5 8.4
}

// Balance diagnostics between two groups and the effective sample size of
// weights.
func ExampleSMD() {
	treated := []float64{1, 2, 3, 4}
	control := []float64{2, 4, 6, 8}
	fmt.Printf("SMD %.4f, variance ratio %.2f, Kish ESS %.3f\n",
		stats.SMD(treated, control), stats.VarianceRatio(treated, control),
		stats.KishESS([]float64{1, 2, 3}))
	// Output:
	// SMD -1.2247, variance ratio 0.25, Kish ESS 2.571
}
