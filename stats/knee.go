package stats

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

const (
	// DefaultKneeAICDelta is the ΔAIC that KneeAIC uses when given
	// minDelta ≤ 0: a difference of 2 or more is the customary threshold
	// of substantial support for the better model (Burnham and Anderson
	// 2002, §2.6).
	DefaultKneeAICDelta = 2.0
	// KneeAICMinPoints is the shortest tail KneeAIC fits: the exponential
	// has three parameters, so at least three residual degrees of freedom
	// are kept.
	KneeAICMinPoints = 6
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
// returns -1 and a nil error when no tail of at least KneeAICMinPoints
// points qualifies. minDelta ≤ 0 means DefaultKneeAICDelta.
//
// KneeAIC panics if len(x) != len(y) or minDelta is NaN. It returns a
// *CurveError wrapping ErrEmpty for fewer than KneeAICMinPoints
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
	if n < KneeAICMinPoints {
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
	for i := 0; n-i >= KneeAICMinPoints; i++ {
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

// KneeCurve is the shape Kneedle looks for.
type KneeCurve int

// KneeDirection is the trend of the curve Kneedle examines.
type KneeDirection int

// KneeInterp is how Kneedle smooths the curve before normalising it.
type KneeInterp int

// Kneedle curve shapes, directions and smoothing methods, with kneed's
// names: the zero values are kneed's defaults.
const (
	KneeConcave KneeCurve = iota // kneed curve="concave": a knee
	KneeConvex                   // kneed curve="convex": an elbow
)

const (
	KneeIncreasing KneeDirection = iota // kneed direction="increasing"
	KneeDecreasing                      // kneed direction="decreasing"
)

const (
	KneeInterp1D      KneeInterp = iota // kneed interp_method="interp1d": the data as given
	KneeInterpPolynom                   // kneed interp_method="polynomial": least-squares polynomial
)

// KneedleOptions are the parameters of Kneedle. The zero value is kneed's
// KneeLocator default: S = 1, concave, increasing, interp1d, offline.
type KneedleOptions struct {
	// S is the sensitivity: how many mean x steps (in normalised units) the
	// difference curve must fall below a local maximum. 0 means 1.
	S         float64
	Curve     KneeCurve
	Direction KneeDirection
	Interp    KneeInterp
	// PolynomialDegree is the degree for KneeInterpPolynom; 0 means 7.
	PolynomialDegree int
	// Online keeps scanning after the first knee and returns the last
	// one found, as kneed's online=True; offline returns the first.
	Online bool
}

// Kneedle returns the x value of the knee (or elbow) of the curve y(x) by
// the Kneedle algorithm of Satopää, Albrecht, Irwin and Raghavan (2011),
// "Finding a 'Kneedle' in a Haystack", with the conventions of the kneed
// Python package: normalise x and the smoothed y to [0, 1], turn the curve
// into a concave increasing one (flip for decreasing concave curves,
// reflect for convex ones), take the difference curve y_d = y_n − x_n,
// find its local maxima and minima (non-strict, ends included, as
// scipy.signal.argrelextrema with greater_equal/less_equal), and walk
// right from the first maximum: each maximum sets the threshold to its
// y_d minus S·mean(Δx_n), each minimum sets it to 0, and the knee is the
// latest maximum at the first point where y_d drops below the threshold
// (with Online, the last such point). ok is false when there is no knee
// (kneed returns None).
//
// Points are taken in the given order; x should be distinct and
// increasing as kneed expects. Kneedle panics if len(x) != len(y) or an
// option is out of range. It returns ok = false for fewer than 3 points,
// any NaN or Inf, or a constant x or y. It does not modify x or y.
func Kneedle(x, y []float64, opts KneedleOptions) (knee float64, ok bool) {
	if len(x) != len(y) {
		panic("stats: slice length mismatch")
	}
	if opts.Curve != KneeConcave && opts.Curve != KneeConvex {
		panic("stats: Kneedle invalid curve")
	}
	if opts.Direction != KneeIncreasing && opts.Direction != KneeDecreasing {
		panic("stats: Kneedle invalid direction")
	}
	if opts.Interp != KneeInterp1D && opts.Interp != KneeInterpPolynom {
		panic("stats: Kneedle invalid interpolation")
	}
	if opts.S < 0 || math.IsNaN(opts.S) || math.IsInf(opts.S, 0) {
		panic("stats: Kneedle sensitivity out of range")
	}
	if opts.PolynomialDegree < 0 {
		panic("stats: Kneedle negative polynomial degree")
	}
	n := len(x)
	if n < 3 || curveCheckFinite(x, y) >= 0 {
		return math.NaN(), false
	}
	s := opts.S
	if s == 0 {
		s = 1
	}
	ys := y
	if opts.Interp == KneeInterpPolynom {
		deg := opts.PolynomialDegree
		if deg == 0 {
			deg = 7
		}
		var fitted bool
		ys, fitted = kneePolyFit(x, y, deg)
		if !fitted {
			return math.NaN(), false
		}
	}
	xn, okx := kneeNormalize(x)
	yn, oky := kneeNormalize(ys)
	if !okx || !oky {
		return math.NaN(), false
	}
	// Make the curve concave increasing.
	switch {
	case opts.Direction == KneeDecreasing && opts.Curve == KneeConcave:
		kneeReverse(yn)
	case opts.Direction == KneeDecreasing && opts.Curve == KneeConvex:
		for i := range yn {
			yn[i] = 1 - yn[i]
		}
	case opts.Direction == KneeIncreasing && opts.Curve == KneeConvex:
		for i := range yn {
			yn[i] = 1 - yn[i]
		}
		kneeReverse(yn)
	}
	yd := make([]float64, n)
	for i := range yd {
		yd[i] = yn[i] - xn[i]
	}
	isMax := make([]bool, n)
	isMin := make([]bool, n)
	var maxima []int
	for i := range yd {
		prev, next := yd[max(i-1, 0)], yd[min(i+1, n-1)]
		isMax[i] = yd[i] >= prev && yd[i] >= next
		isMin[i] = yd[i] <= prev && yd[i] <= next
		if isMax[i] {
			maxima = append(maxima, i)
		}
	}
	if len(maxima) == 0 {
		return math.NaN(), false
	}
	var sumStep float64
	for i := 1; i < n; i++ {
		sumStep += xn[i] - xn[i-1]
	}
	drop := s * math.Abs(sumStep/float64(n-1))

	found := false
	var threshold float64
	thresholdIndex := -1
	for i := maxima[0]; i < n-1; i++ {
		if isMax[i] {
			threshold = yd[i] - drop
			thresholdIndex = i
		}
		if isMin[i] {
			threshold = 0
		}
		if yd[i+1] < threshold {
			k := thresholdIndex
			if (opts.Curve == KneeConvex) == (opts.Direction == KneeIncreasing) {
				// The curve was flipped left to right.
				k = n - 1 - thresholdIndex
			}
			knee, found = x[k], true
			if !opts.Online {
				return knee, true
			}
		}
	}
	if !found {
		return math.NaN(), false
	}
	return knee, true
}

func kneeNormalize(a []float64) ([]float64, bool) {
	lo, hi := a[0], a[0]
	for _, v := range a {
		lo = math.Min(lo, v)
		hi = math.Max(hi, v)
	}
	if hi == lo {
		return nil, false
	}
	out := make([]float64, len(a))
	for i, v := range a {
		out[i] = (v - lo) / (hi - lo)
	}
	return out, true
}

func kneeReverse(a []float64) {
	for i, j := 0, len(a)-1; i < j; i, j = i+1, j-1 {
		a[i], a[j] = a[j], a[i]
	}
}

// kneePolyFit evaluates at x the least-squares polynomial of degree deg
// through (x, y), solved as numpy.polyfit does: a Vandermonde matrix
// with columns scaled to unit norm, solved by QR.
func kneePolyFit(x, y []float64, deg int) ([]float64, bool) {
	n := len(x)
	cols := deg + 1
	if cols > n {
		// numpy warns (RankWarning) and returns a minimum-norm fit; an
		// interpolating polynomial then passes through the data.
		return append([]float64(nil), y...), true
	}
	v := mat.NewDense(n, cols, nil)
	for i, xi := range x {
		p := 1.0
		for j := cols - 1; j >= 0; j-- {
			v.Set(i, j, p)
			p *= xi
		}
	}
	scale := make([]float64, cols)
	for j := range cols {
		scale[j] = mat.Norm(v.ColView(j), 2)
		if scale[j] == 0 {
			return nil, false
		}
		for i := range n {
			v.Set(i, j, v.At(i, j)/scale[j])
		}
	}
	var qr mat.QR
	qr.Factorize(v)
	var c mat.VecDense
	if err := qr.SolveVecTo(&c, false, mat.NewVecDense(n, append([]float64(nil), y...))); err != nil {
		return nil, false
	}
	out := make([]float64, n)
	for i, xi := range x {
		var p float64
		for j := range cols {
			p = p*xi + c.AtVec(j)/scale[j]
		}
		out[i] = p
	}
	return out, true
}
