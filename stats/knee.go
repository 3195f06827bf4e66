package stats

import "math"

const (
	// DefaultKneeAICDelta is the ΔAIC that KneeAIC uses when given
	// minDelta ≤ 0: a difference of 2 or more is the customary threshold
	// of substantial support for the better model (Burnham and Anderson
	// 2002, §2.6).
	DefaultKneeAICDelta = 2.0
	// kneeAICMinPoints is the shortest tail KneeAIC fits: the exponential
	// has three parameters, so at least three residual degrees of freedom
	// are kept.
	kneeAICMinPoints = 6
)

// KneeAIC returns the first index i such that, on the tail x[i:], y[i:],
// the power law y = A·x^B (2 parameters, fitted by log–log OLS) beats the
// exponential y = A·exp(−B·x) + C (3 parameters, FitExponential) by
// AIC_exp − AIC_pow ≥ minDelta, where AIC = m·ln(RSS/m) + 2k with the RSS
// of each model measured in y over the m tail points. A tail is ruled out
// without a full exponential fit when the rate fitted on the previous
// tail already brings AIC_exp within minDelta: that RSS bounds the best
// exponential's from above, so the decision is the same. It is the epoch
// from which a training curve is better described as a power law. It
// returns -1 and a nil error when no tail of at least kneeAICMinPoints
// points qualifies. minDelta ≤ 0 means DefaultKneeAICDelta.
//
// KneeAIC panics if len(x) != len(y) or minDelta is NaN. It returns a
// *CurveError wrapping ErrEmpty for fewer than kneeAICMinPoints
// points, ErrNaN for NaN or Inf, ErrCurveNonPositive for x or
// y ≤ 0 and ErrCurveDegenerate when x is not strictly increasing. It does
// not modify x or y.
func KneeAIC(x, y []float64, minDelta float64) (int, error) {
	const fn = "KneeAIC"
	if len(x) != len(y) {
		panic("stats: slice length mismatch")
	}
	if math.IsNaN(minDelta) {
		panic("stats: KneeAIC minDelta is NaN")
	}
	if minDelta <= 0 {
		minDelta = DefaultKneeAICDelta
	}
	n := len(x)
	if n < kneeAICMinPoints {
		return -1, curveErr(fn, -1, ErrEmpty)
	}
	if i := curveCheckFinite(x, y); i >= 0 {
		return -1, curveErr(fn, i, ErrNaN)
	}
	lx := make([]float64, n)
	ly := make([]float64, n)
	for i := range x {
		if x[i] <= 0 || y[i] <= 0 {
			return -1, curveErr(fn, i, ErrCurveNonPositive)
		}
		if i > 0 && !(x[i] > x[i-1]) {
			return -1, curveErr(fn, i, ErrCurveDegenerate)
		}
		lx[i] = math.Log(x[i])
		ly[i] = math.Log(y[i])
	}
	z := make([]float64, n)
	prevRate := math.NaN()
	for i := 0; n-i >= kneeAICMinPoints; i++ {
		tx, ty := x[i:], y[i:]
		m := float64(len(tx))
		a, b, _ := curveOLS(lx[i:], ly[i:], nil)
		var rssPow, ss float64
		for j := range tx {
			r := ty[j] - math.Exp(a)*math.Pow(tx[j], b)
			rssPow += r * r
			ss += ty[j] * ty[j]
		}
		// A residual sum at rounding level is treated as rounding: it
		// keeps ln(RSS) finite for an exactly fitting model.
		floor := ss * 0x1p-104
		aicPow := m*math.Log(math.Max(rssPow, floor)/m) + 2*2
		aicExp := func(rss float64) float64 { return m*math.Log(math.Max(rss, floor)/m) + 2*3 }
		// Any rate bounds the best exponential's RSS from above, so if
		// the previous tail's rate already makes the exponential
		// competitive, this tail is no knee and needs no full fit.
		if !math.IsNaN(prevRate) {
			if rss, ok := expRSS(tx, ty, z[:len(tx)], prevRate); ok && aicExp(rss)-aicPow < minDelta {
				continue
			}
		}
		e, rssExp, ok := expFit(tx, ty, z[:len(tx)])
		if !ok {
			continue
		}
		prevRate = e.B
		if aicExp(rssExp)-aicPow >= minDelta {
			return i, nil
		}
	}
	return -1, nil
}
