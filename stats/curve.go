package stats

import (
	"errors"
	"fmt"
	"math"
)

// Sentinel errors of the curve-analysis functions (power law, exponential,
// knee, slope, correlation). They are
// wrapped in a *CurveError naming the function and, where one exists, the
// offending index, so callers test them with errors.Is. Too few points is
// ErrEmpty and a NaN or ±Inf is ErrNaN, as for the other functions.
var (
	// ErrCurveNonPositive: a value ≤ 0 where a logarithm is taken.
	ErrCurveNonPositive = errors.New("non-positive value")
	// ErrCurveDegenerate: the data cannot determine the fit, for example
	// all x equal, or a constant input to a correlation.
	ErrCurveDegenerate = errors.New("degenerate data")
)

// CurveError reports a data problem found by a curve-analysis function.
type CurveError struct {
	Func  string // the exported function, e.g. "FitPowerLaw"
	Index int    // offending index into the input, or -1 when none applies
	Err   error  // ErrEmpty, ErrNaN or one of the ErrCurve* sentinels
}

func (e *CurveError) Error() string {
	if e.Index >= 0 {
		return fmt.Sprintf("stats: %s: index %d: %v", e.Func, e.Index, e.Err)
	}
	return fmt.Sprintf("stats: %s: %v", e.Func, e.Err)
}

// Unwrap returns the sentinel.
func (e *CurveError) Unwrap() error { return e.Err }

func curveErr(fn string, idx int, err error) error {
	return &CurveError{Func: fn, Index: idx, Err: err}
}

// curveCheckFinite returns the index of the first non-finite value in
// x or y, or -1.
func curveCheckFinite(x, y []float64) int {
	for i := range x {
		if math.IsNaN(x[i]) || math.IsInf(x[i], 0) || math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			return i
		}
	}
	return -1
}

// curveOLS fits y = a + b·x by ordinary least squares with optional
// weights w (nil means uniform), using centred sums for accuracy. ok is
// false when the weighted x variance is zero.
func curveOLS(x, y, w []float64) (a, b float64, ok bool) {
	var sw, mx, my float64
	for i := range x {
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		sw += wi
		mx += wi * x[i]
		my += wi * y[i]
	}
	if sw == 0 {
		return 0, 0, false
	}
	mx /= sw
	my /= sw
	var sxx, sxy float64
	for i := range x {
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		dx := x[i] - mx
		sxx += wi * dx * dx
		sxy += wi * dx * (y[i] - my)
	}
	if sxx == 0 {
		return 0, 0, false
	}
	b = sxy / sxx
	return my - b*mx, b, true
}

// curveR2 is the coefficient of determination 1 − Σ(y−ŷ)²/Σ(y−ȳ)² of the
// line a + b·x. A constant y gives 1 when the line fits it exactly and 0
// otherwise.
func curveR2(x, y []float64, a, b float64) float64 {
	var my float64
	for _, v := range y {
		my += v
	}
	my /= float64(len(y))
	var ssr, sst float64
	for i := range x {
		r := y[i] - (a + b*x[i])
		ssr += r * r
		d := y[i] - my
		sst += d * d
	}
	if sst == 0 {
		if ssr == 0 {
			return 1
		}
		return 0
	}
	return 1 - ssr/sst
}
