package stats

import "math"

// Exponential is the curve y = A·exp(−B·x) + C. B > 0 with A > 0 is a
// decaying curve such as a training loss approaching C.
type Exponential struct {
	A, B, C float64
	// R2 is the coefficient of determination in linear y space.
	R2 float64
}

// At returns A·exp(−B·x) + C.
func (e Exponential) At(x float64) float64 { return e.A*math.Exp(-e.B*x) + e.C }

const (
	// expRateMin and expRateMax bound |B|·span (span = max x − min x)
	// searched by FitExponential: below 1e-4 the curve is a straight line
	// to rounding over the data, above 50 it is a step at the first point.
	expRateMin = 1e-4
	expRateMax = 50
	// expGrid is the number of log-spaced rates tried per sign before the
	// golden-section refinement; 24 points (0.25 decades apart) bracket
	// the single minimum of a well-posed exponential fit.
	expGrid = 24
	// expGoldenIter refines log|B| by golden section from a bracket of
	// width ≈ 1.1 to ≈ 3e-10, below the √ε at which the flat profile RSS
	// stops telling rates apart.
	expGoldenIter = 48
)

// FitExponential fits y = A·exp(−B·x) + C by least squares in y.
//
// For a fixed rate B the model is linear in A and C, so FitExponential
// minimises the profile residual sum of squares over B alone (variable
// projection, Golub and Pereyra 1973): a log-spaced grid of |B|·span in
// [1e-4, 50] for both signs of B, then golden-section search around the
// best grid point. The result is the global least-squares fit within that
// rate range and agrees with scipy.optimize.curve_fit started near the
// optimum.
//
// FitExponential panics if len(x) != len(y). It returns a *CurveError
// wrapping ErrEmpty for fewer than 4 points, ErrNaN for
// a NaN or Inf and ErrCurveDegenerate when all x are equal. A fit whose
// A·exp(−B·x) overflows for the smallest x returns A = ±Inf. It does not
// modify x or y.
func FitExponential(x, y []float64) (Exponential, error) {
	const fn = "FitExponential"
	if len(x) != len(y) {
		panic("stats: slice length mismatch")
	}
	if len(x) < 4 {
		return Exponential{}, curveErr(fn, -1, ErrEmpty)
	}
	if i := curveCheckFinite(x, y); i >= 0 {
		return Exponential{}, curveErr(fn, i, ErrNaN)
	}
	e, _, ok := expFit(x, y, make([]float64, len(x)))
	if !ok {
		return Exponential{}, curveErr(fn, -1, ErrCurveDegenerate)
	}
	return e, nil
}

// expRSS returns the residual sum of squares of the best
// A·exp(−rate·x) + C for a fixed rate, computed with exp(−rate·(x−x[0]))
// so that it stays in range for a rate fitted on a longer span; z is
// scratch of len(x).
func expRSS(x, y, z []float64, rate float64) (float64, bool) {
	for i, v := range x {
		z[i] = math.Exp(-rate * (v - x[0]))
	}
	c, ap, ok := curveOLS(z, y, nil)
	if !ok {
		return 0, false
	}
	var rss float64
	for i := range y {
		r := y[i] - (c + ap*z[i])
		rss += r * r
	}
	return rss, !math.IsNaN(rss) && !math.IsInf(rss, 0)
}

// expFit is FitExponential on validated data; z is scratch of len(x).
// It returns the fit and its residual sum of squares.
func expFit(x, y, z []float64) (Exponential, float64, bool) {
	xmin, xmax := x[0], x[0]
	for _, v := range x {
		xmin = math.Min(xmin, v)
		xmax = math.Max(xmax, v)
	}
	span := xmax - xmin
	if span == 0 {
		return Exponential{}, 0, false
	}
	// profile returns the RSS, A' and C at rate u/span, with the model
	// written as A'·exp(−u·(x−xmin)/span) + C to keep exp in range.
	profile := func(u float64) (rss, ap, c float64) {
		for i, v := range x {
			z[i] = math.Exp(-u * (v - xmin) / span)
		}
		c, ap, ok := curveOLS(z, y, nil)
		if !ok {
			return math.Inf(1), 0, 0
		}
		for i := range y {
			r := y[i] - (c + ap*z[i])
			rss += r * r
		}
		return rss, ap, c
	}
	lo, hi := math.Log(expRateMin), math.Log(expRateMax)
	step := (hi - lo) / (expGrid - 1)
	bestRSS, bestSign, bestK := math.Inf(1), 1.0, 0
	for _, sign := range [2]float64{1, -1} {
		for k := range expGrid {
			rss, _, _ := profile(sign * math.Exp(lo+float64(k)*step))
			if rss < bestRSS {
				bestRSS, bestSign, bestK = rss, sign, k
			}
		}
	}
	if math.IsInf(bestRSS, 1) {
		return Exponential{}, 0, false
	}
	// Golden section on t = log|u| in the bracket around the best grid
	// point.
	a := lo + float64(max(bestK-1, 0))*step
	b := lo + float64(min(bestK+1, expGrid-1))*step
	f := func(t float64) float64 { r, _, _ := profile(bestSign * math.Exp(t)); return r }
	const invPhi = 0.6180339887498949
	c := b - invPhi*(b-a)
	d := a + invPhi*(b-a)
	fc, fd := f(c), f(d)
	for range expGoldenIter {
		if fc < fd {
			b, d, fd = d, c, fc
			c = b - invPhi*(b-a)
			fc = f(c)
		} else {
			a, c, fc = c, d, fd
			d = a + invPhi*(b-a)
			fd = f(d)
		}
	}
	t := d
	if fc < fd {
		t = c
	}
	u := bestSign * math.Exp(t)
	rss, ap, cc := profile(u)
	if rss > bestRSS {
		u = bestSign * math.Exp(lo+float64(bestK)*step)
		rss, ap, cc = profile(u)
	}
	rate := u / span
	var my float64
	for _, v := range y {
		my += v
	}
	my /= float64(len(y))
	var sst float64
	for _, v := range y {
		sst += (v - my) * (v - my)
	}
	r2 := 0.0
	switch {
	case sst > 0:
		r2 = 1 - rss/sst
	case rss == 0:
		r2 = 1
	}
	return Exponential{A: ap * math.Exp(rate*xmin), B: rate, C: cc, R2: r2}, rss, true
}
