package stats

import (
	"math"
	"slices"
)

// PowerLaw is the curve y = A·x^B.
type PowerLaw struct {
	A, B float64
	// R2 is the ordinary coefficient of determination of log y on log x
	// for the returned A and B (unweighted, also after a robust fit, so a
	// robust fit never raises R2 by down-weighting points).
	R2 float64
	// Robust reports that the Huber IRLS fallback produced A and B.
	Robust bool
}

// At returns A·x^B.
func (p PowerLaw) At(x float64) float64 { return p.A * math.Pow(x, p.B) }

const (
	// powerLawRobustR2 is the log-space R² below which FitPowerLaw refits
	// robustly: the H1 threshold of a clean power law in the sweep study.
	powerLawRobustR2 = 0.98
	// powerLawOutlierZ is the robust z-score |r|/σ̂ (σ̂ = MAD/0.6745 of the
	// OLS residuals) above which a point counts as an outlier; 3.5 is the
	// cut-off of Iglewicz and Hoaglin (1993).
	powerLawOutlierZ = 3.5
	// powerLawHuberK is Huber's tuning constant, giving 95% efficiency
	// at the normal distribution (Huber 1981; statsmodels' HuberT default).
	powerLawHuberK = 1.345

	// powerLawMinRobust is the fewest points for which a robust refit is
	// tried: with fewer, the MAD scale is not meaningful.
	powerLawMinRobust = 5
	// powerLawResidualFloor is the smallest log residual that can count as
	// an outlier, so that an exact power law (residuals at rounding level
	// and MAD ≈ 0) is not refitted because of rounding noise.
	powerLawResidualFloor = 1e-8
	// powerLawIRLSTol is the relative change of (log A, B) at which IRLS
	// stops; powerLawIRLSMaxIter bounds it (Huber IRLS converges in tens
	// of iterations on curves of a few hundred points).
	powerLawIRLSTol     = 1e-12
	powerLawIRLSMaxIter = 500
	// curveMADNormal turns a median absolute deviation into a consistent
	// estimate of the normal σ: Φ⁻¹(3/4).
	curveMADNormal = 0.6744897501960817
)

// FitPowerLaw fits y = A·x^B by ordinary least squares of log y on log x
// and reports R² in log space.
//
// Robust fallback rule: when there are at least 5 points and either the
// OLS R² is below powerLawRobustR2 or some OLS residual r has
// |r| > powerLawOutlierZ·σ̂ (σ̂ = median|r|/0.6745, and |r| > 1e-8), the
// line is refitted by Huber M-estimation (k = powerLawHuberK) with
// iteratively reweighted least squares, the scale re-estimated each
// iteration as median|r|/0.6745 (Huber's proposal with a MAD scale about
// zero, as statsmodels' RLM does by default); Robust is then true.
//
// FitPowerLaw panics if len(x) != len(y). It returns a *CurveError
// wrapping ErrEmpty for fewer than 3 points, ErrNaN
// for a NaN or Inf, ErrCurveNonPositive for x or y ≤ 0 and
// ErrCurveDegenerate when all x are equal. It does not modify x or y.
func FitPowerLaw(x, y []float64) (PowerLaw, error) {
	const fn = "FitPowerLaw"
	if len(x) != len(y) {
		panic("stats: slice length mismatch")
	}
	if len(x) < 3 {
		return PowerLaw{}, curveErr(fn, -1, ErrEmpty)
	}
	if i := curveCheckFinite(x, y); i >= 0 {
		return PowerLaw{}, curveErr(fn, i, ErrNaN)
	}
	lx := make([]float64, len(x))
	ly := make([]float64, len(y))
	for i := range x {
		if x[i] <= 0 || y[i] <= 0 {
			return PowerLaw{}, curveErr(fn, i, ErrCurveNonPositive)
		}
		lx[i] = math.Log(x[i])
		ly[i] = math.Log(y[i])
	}
	a, b, ok := curveOLS(lx, ly, nil)
	if !ok {
		return PowerLaw{}, curveErr(fn, -1, ErrCurveDegenerate)
	}
	r2 := curveR2(lx, ly, a, b)
	fit := PowerLaw{A: math.Exp(a), B: b, R2: r2}
	if len(x) < powerLawMinRobust {
		return fit, nil
	}
	res := make([]float64, len(x))
	powerLawResiduals(res, lx, ly, a, b)
	scratch := make([]float64, len(x))
	s := powerLawMADScale(res, scratch)
	outlier := false
	for _, r := range res {
		if math.Abs(r) > powerLawOutlierZ*s && math.Abs(r) > powerLawResidualFloor {
			outlier = true
			break
		}
	}
	if r2 >= powerLawRobustR2 && !outlier {
		return fit, nil
	}
	ra, rb, ok := powerLawHuber(lx, ly, a, b, res, scratch)
	if !ok {
		return fit, nil
	}
	return PowerLaw{A: math.Exp(ra), B: rb, R2: curveR2(lx, ly, ra, rb), Robust: true}, nil
}

func powerLawResiduals(dst, lx, ly []float64, a, b float64) {
	for i := range lx {
		dst[i] = ly[i] - (a + b*lx[i])
	}
}

// powerLawMADScale returns median|r|/Φ⁻¹(3/4); abs is scratch of len(r).
func powerLawMADScale(r, abs []float64) float64 {
	for i, v := range r {
		abs[i] = math.Abs(v)
	}
	n := len(abs)
	if n%2 == 1 {
		return powerLawSelect(abs, n/2) / curveMADNormal
	}
	hi := powerLawSelect(abs, n/2)
	// After selection every element left of n/2 is ≤ hi; the lower
	// middle is their maximum.
	lo := slices.Max(abs[:n/2])
	return (lo + hi) / 2 / curveMADNormal
}

// powerLawSelect partially orders a (no NaN) so that a[k] is its k-th
// smallest element, with a[:k] ≤ a[k] ≤ a[k+1:], and returns a[k]
// (Hoare's selection with a median-of-three pivot: O(n) expected).
func powerLawSelect(a []float64, k int) float64 {
	lo, hi := 0, len(a)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if a[mid] < a[lo] {
			a[mid], a[lo] = a[lo], a[mid]
		}
		if a[hi] < a[lo] {
			a[hi], a[lo] = a[lo], a[hi]
		}
		if a[hi] < a[mid] {
			a[hi], a[mid] = a[mid], a[hi]
		}
		pivot := a[mid]
		i, j := lo, hi
		for i <= j {
			for a[i] < pivot {
				i++
			}
			for a[j] > pivot {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return a[k]
		}
	}
	return a[k]
}

// powerLawHuber runs Huber IRLS from the OLS line (a, b); res and
// scratch are scratch space. ok is false when a weighted fit is
// degenerate.
func powerLawHuber(lx, ly []float64, a, b float64, res, scratch []float64) (float64, float64, bool) {
	w := make([]float64, len(lx))
	for range powerLawIRLSMaxIter {
		powerLawResiduals(res, lx, ly, a, b)
		s := powerLawMADScale(res, scratch)
		if s == 0 {
			// More than half the points lie exactly on the line: that
			// line is the Huber solution.
			return a, b, true
		}
		for i, r := range res {
			u := math.Abs(r) / s
			if u <= powerLawHuberK {
				w[i] = 1
			} else {
				w[i] = powerLawHuberK / u
			}
		}
		na, nb, ok := curveOLS(lx, ly, w)
		if !ok {
			return 0, 0, false
		}
		done := math.Abs(na-a) <= powerLawIRLSTol*(1+math.Abs(a)) && math.Abs(nb-b) <= powerLawIRLSTol*(1+math.Abs(b))
		a, b = na, nb
		if done {
			break
		}
	}
	return a, b, true
}

// Slope returns the ordinary least-squares slope of y on x over the points
// with lo ≤ x[i] ≤ hi (a NaN x is never inside the window).
//
// Slope panics if len(x) != len(y) or if lo > hi or either bound is NaN.
// It returns a *CurveError wrapping ErrEmpty when fewer than two
// points fall inside the window, ErrNaN when a y inside it is
// NaN or Inf (or an x is ±Inf under an infinite bound), and
// ErrCurveDegenerate when all x inside it are equal. It
// does not modify x or y.
func Slope(x, y []float64, lo, hi float64) (float64, error) {
	const fn = "Slope"
	if len(x) != len(y) {
		panic("stats: slice length mismatch")
	}
	if !(lo <= hi) {
		panic("stats: Slope window lo > hi or NaN")
	}
	var n int
	var mx, my float64
	for i, xi := range x {
		if xi < lo || xi > hi || math.IsNaN(xi) {
			continue
		}
		if math.IsNaN(y[i]) || math.IsInf(y[i], 0) || math.IsInf(xi, 0) {
			return math.NaN(), curveErr(fn, i, ErrNaN)
		}
		n++
		mx += xi
		my += y[i]
	}
	if n < 2 {
		return math.NaN(), curveErr(fn, -1, ErrEmpty)
	}
	mx /= float64(n)
	my /= float64(n)
	var sxx, sxy float64
	for i, xi := range x {
		if xi < lo || xi > hi || math.IsNaN(xi) {
			continue
		}
		dx := xi - mx
		sxx += dx * dx
		sxy += dx * (y[i] - my)
	}
	if sxx == 0 {
		return math.NaN(), curveErr(fn, -1, ErrCurveDegenerate)
	}
	return sxy / sxx, nil
}

// BurnIn returns the first index i with y[i] ≤ threshold, or -1 when there
// is none (the sweep study uses threshold 1.0 for a loss curve). A NaN
// never satisfies the test. BurnIn does not modify y.
func BurnIn(y []float64, threshold float64) int {
	for i, v := range y {
		if v <= threshold {
			return i
		}
	}
	return -1
}
