package overlap

import (
	"math"

	"github.com/crosscluster/crosscluster/internal/balance"
)

// smdVR returns stats.SMD(x, y) and stats.VarianceRatio(x, y), bit for bit,
// for NaN-free x and y (Fit's columns are finite or imputed). The stats
// functions each compute both samples' means and variances, so calling
// both costs eight passes over the data; this costs four.
func smdVR(x, y []float64) (smd, vr float64) {
	if len(x) < 2 || len(y) < 2 {
		return math.NaN(), math.NaN()
	}
	mx, vx := balance.MeanVar(x)
	my, vy := balance.MeanVar(y)
	return smdVRFrom(mx, vx, len(x), my, vy, len(y))
}

// smdVRFrom is smdVR from each sample's mean, sample variance and length.
func smdVRFrom(mx, vx float64, nx int, my, vy float64, ny int) (smd, vr float64) {
	if nx < 2 || ny < 2 {
		return math.NaN(), math.NaN()
	}
	return balance.SMD(mx, vx, my, vy), vx / vy
}
