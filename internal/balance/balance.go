// Package balance holds the balance formulas that stats (SMD,
// VarianceRatio, KishESS) and overlap's single-pass comparisons share, so
// that both give the same bits from the same moments.
package balance

import "math"

// SMD is the standardised mean difference of two samples from their means
// and sample variances, (mx - my) / sqrt((vx + vy)/2), with 0 when the
// means are equal (Austin 2009).
func SMD(mx, vx, my, vy float64) float64 {
	d := mx - my
	if d == 0 {
		return 0
	}
	return d / math.Sqrt((vx+vy)/2)
}

// Kish is Kish's effective sample size from the sum and the sum of
// squares of the weights, s² / s2, with 0 for all-zero weights.
func Kish(s, s2 float64) float64 {
	if s2 == 0 {
		return 0
	}
	return s * s / s2
}

// MeanVar is the mean and the sample variance (corrected two-pass: the
// squared deviations less the square of their sum over n, over n-1) of
// NaN-free x with at least two values.
func MeanVar(x []float64) (mean, variance float64) {
	var s float64
	for _, v := range x {
		s += v
	}
	fn := float64(len(x))
	mean = s / fn
	var c, sq float64
	for _, v := range x {
		d := v - mean
		c += d
		sq += d * d
	}
	return mean, (sq - c*c/fn) / (fn - 1)
}
