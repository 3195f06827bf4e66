package stats

import (
	"math"

	"github.com/crosscluster/crosscluster/internal/balance"
)

// SMD returns the standardised mean difference of x and y with the pooled
// standard deviation, (mean(x) - mean(y)) / sqrt((var(x) + var(y))/2), the
// balance diagnostic of Austin (2009), with sample variances (n-1
// denominators). NaNs are ignored. It returns NaN when either sample has
// fewer than two values, 0 when both means are equal, and ±Inf when the
// pooled variance is zero but the means differ. Inputs are not modified.
func SMD(x, y []float64) float64 {
	mx, vx, nx := meanVar(x)
	my, vy, ny := meanVar(y)
	if nx < 2 || ny < 2 {
		return math.NaN()
	}
	return balance.SMD(mx, vx, my, vy)
}

// VarianceRatio returns var(x)/var(y) with sample variances (n-1
// denominators), NaNs ignored. It returns NaN when either sample has fewer
// than two values or both variances are zero, and +Inf when only var(y) is
// zero. Inputs are not modified.
func VarianceRatio(x, y []float64) float64 {
	_, vx, nx := meanVar(x)
	_, vy, ny := meanVar(y)
	if nx < 2 || ny < 2 {
		return math.NaN()
	}
	return vx / vy
}

// meanVar returns the mean, the sample variance (corrected two-pass) and
// the count of the non-NaN values of x.
func meanVar(x []float64) (mean, variance float64, n int) {
	var s float64
	for _, v := range x {
		if !math.IsNaN(v) {
			s += v
			n++
		}
	}
	if n == 0 {
		return math.NaN(), math.NaN(), 0
	}
	mean = s / float64(n)
	var c, sq float64
	for _, v := range x {
		if !math.IsNaN(v) {
			d := v - mean
			c += d
			sq += d * d
		}
	}
	if n < 2 {
		return mean, math.NaN(), n
	}
	fn := float64(n)
	return mean, (sq - c*c/fn) / (fn - 1), n
}

// KishESS returns Kish's effective sample size of the weights w,
// (Σw)² / Σw². It returns 0 for empty w or all-zero weights and NaN if a
// weight is NaN. Negative weights are used as given. w is not modified.
func KishESS(w []float64) float64 {
	var s, s2 float64
	for _, v := range w {
		s += v
		s2 += v * v
	}
	return balance.Kish(s, s2)
}
