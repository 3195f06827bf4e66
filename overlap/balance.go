package overlap

import "math"

// smdVR returns stats.SMD(x, y) and stats.VarianceRatio(x, y), bit for bit,
// for NaN-free x and y (Fit's columns are finite or imputed). The stats
// functions each compute both samples' means and variances, so calling
// both costs eight passes over the data; this costs four.
func smdVR(x, y []float64) (smd, vr float64) {
	mx, vx := meanVarFinite(x)
	my, vy := meanVarFinite(y)
	return smdVRFrom(mx, vx, len(x), my, vy, len(y))
}

// smdVRFrom is smdVR from each sample's mean, sample variance and length.
func smdVRFrom(mx, vx float64, nx int, my, vy float64, ny int) (smd, vr float64) {
	if nx < 2 || ny < 2 {
		return math.NaN(), math.NaN()
	}
	if d := mx - my; d != 0 {
		smd = d / math.Sqrt((vx+vy)/2)
	}
	return smd, vx / vy
}

// meanVarFinite is stats' corrected two-pass mean and sample variance, in
// the same order of operations, for NaN-free x with at least two values
// (otherwise the variance is meaningless and smdVR does not use it).
func meanVarFinite(x []float64) (mean, variance float64) {
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
