package stats

import (
	"math"
	"math/rand/v2"
)

// Hutchinson estimates the trace of the n×n linear operator A, given by
// matvec(dst, v) which sets dst = A·v, with Hutchinson's estimator
// (Hutchinson 1990): the mean of vᵀA·v over samples independent
// Rademacher vectors v (entries ±1 with probability 1/2) drawn from rng.
// It is unbiased, with variance 2(‖A‖_F² − Σ a_ii²)/samples for symmetric A.
//
// Hutchinson panics if matvec or rng is nil or n or samples is not
// positive. It calls matvec exactly samples times; matvec must not keep v.
// A NaN or Inf product propagates to the estimate.
func Hutchinson(matvec func(dst, v []float64), n, samples int, rng *rand.Rand) float64 {
	traceCheck(matvec, n, samples, rng)
	v := make([]float64, n)
	av := make([]float64, n)
	var sum float64
	for range samples {
		traceRademacher(v, rng)
		matvec(av, v)
		sum += traceDot(v, av)
	}
	return sum / float64(samples)
}

// HutchPP estimates the trace of the n×n linear operator A with the
// Hutch++ estimator of Meyer, Musco, Musco and Woodruff (2021), using
// exactly samples calls of matvec: with k = ⌊samples/3⌋ (at most n)
// Rademacher vectors S, Q is an orthonormal basis of A·S; the estimate is
// tr(QᵀAQ) plus Hutchinson's estimate on the deflated operator
// (I−QQᵀ)A(I−QQᵀ) from the remaining samples − 2k Rademacher vectors. For
// an operator whose spectrum decays, its error is far below Hutchinson's
// for the same number of matrix–vector products.
//
// HutchPP panics if matvec or rng is nil, n is not positive or samples
// is less than 3. matvec must not keep v. A NaN or Inf product makes
// the estimate NaN or Inf, as it does for Hutchinson.
func HutchPP(matvec func(dst, v []float64), n, samples int, rng *rand.Rand) float64 {
	traceCheck(matvec, n, samples, rng)
	if samples < 3 {
		panic("stats: HutchPP needs at least 3 samples")
	}
	k := min(samples/3, n)
	g := samples - 2*k
	// Q: orthonormal basis of A·S, built column by column.
	q := make([][]float64, 0, k)
	v := make([]float64, n)
	for range k {
		traceRademacher(v, rng)
		col := make([]float64, n)
		matvec(col, v)
		if traceOrthonormalize(col, q) {
			q = append(q, col)
		}
	}
	av := make([]float64, n)
	var tr float64
	for _, col := range q {
		matvec(av, col)
		tr += traceDot(col, av)
	}
	// Spend the products a rank-deficient A·S did not need on the
	// residual part, so matvec is always called samples times.
	g += k - len(q)
	if g == 0 {
		return tr
	}
	// With P = I − QQᵀ symmetric and idempotent, (Pg)ᵀ P A P g =
	// (Pg)ᵀ A (Pg): one projection per sample suffices, and one
	// modified Gram–Schmidt pass against the already orthonormal Q.
	var sum float64
	for range g {
		traceRademacher(v, rng)
		traceProject(v, q, 1)
		matvec(av, v)
		sum += traceDot(v, av)
	}
	return tr + sum/float64(g)
}

// PowerIteration returns the dominant (largest-magnitude) eigenvalue λ of
// the n×n linear operator A, given by matvec(dst, v) setting dst = A·v,
// and a unit eigenvector, by power iteration from a random Gaussian start
// drawn from rng (von Mises 1929). λ is the Rayleigh quotient vᵀA·v; the
// iteration stops when the residual ‖A·v − λv‖ ≤ tol·|λ|. It is meant for
// symmetric operators such as Hessians, where it converges at the rate
// |λ₂/λ₁| per step.
//
// PowerIteration panics if matvec or rng is nil, n or maxIter is not
// positive, or tol is negative or NaN. A zero operator gives λ = 0. It
// returns the last estimate with a *CurveError wrapping
// ErrCurveNoConvergence when maxIter products do not meet tol, and
// ErrNaN when matvec produces NaN or Inf.
func PowerIteration(matvec func(dst, v []float64), n, maxIter int, tol float64, rng *rand.Rand) (float64, []float64, error) {
	const fn = "PowerIteration"
	traceCheck(matvec, n, maxIter, rng)
	if !(tol >= 0) {
		panic("stats: PowerIteration tol negative or NaN")
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	traceScale(v, 1/math.Sqrt(traceDot(v, v)))
	w := make([]float64, n)
	lambda := math.NaN()
	for range maxIter {
		matvec(w, v)
		lambda = traceDot(v, w)
		norm := math.Sqrt(traceDot(w, w))
		if math.IsNaN(norm) || math.IsInf(norm, 0) {
			return math.NaN(), v, curveErr(fn, -1, ErrNaN)
		}
		if norm == 0 {
			return 0, v, nil
		}
		var res float64
		for i := range w {
			d := w[i] - lambda*v[i]
			res += d * d
		}
		converged := math.Sqrt(res) <= tol*math.Abs(lambda)
		if converged {
			return lambda, v, nil
		}
		for i := range v {
			v[i] = w[i] / norm
		}
	}
	return lambda, v, curveErr(fn, -1, ErrCurveNoConvergence)
}

// traceRankTol is the fraction of a column of A·S that must survive
// projection off the earlier columns for it to count as a new direction:
// well above the ~1e-16·k rounding left by two Gram–Schmidt passes.
const traceRankTol = 1e-12

func traceCheck(matvec func(dst, v []float64), n, count int, rng *rand.Rand) {
	if matvec == nil {
		panic("stats: nil matvec")
	}
	if rng == nil {
		panic("stats: nil *rand.Rand")
	}
	if n <= 0 {
		panic("stats: operator size not positive")
	}
	if count <= 0 {
		panic("stats: sample or iteration count not positive")
	}
}

// traceRademacher fills v with independent ±1 entries, 64 per draw.
func traceRademacher(v []float64, rng *rand.Rand) {
	var bits uint64
	for i := range v {
		if i%64 == 0 {
			bits = rng.Uint64()
		}
		if bits&1 == 1 {
			v[i] = 1
		} else {
			v[i] = -1
		}
		bits >>= 1
	}
}

func traceDot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func traceScale(a []float64, f float64) {
	for i := range a {
		a[i] *= f
	}
}

// traceProject sets v = (I − QQᵀ)v by modified Gram–Schmidt, repeated
// passes times (two passes reorthogonalise a column that is being added
// to Q).
func traceProject(v []float64, q [][]float64, passes int) {
	for range passes {
		for _, c := range q {
			d := traceDot(c, v)
			for i := range v {
				v[i] -= d * c[i]
			}
		}
	}
}

// traceOrthonormalize projects col off q and normalises it; it returns
// false when col lies in span(q) to rounding (A·S rank-deficient).
func traceOrthonormalize(col []float64, q [][]float64) bool {
	before := math.Sqrt(traceDot(col, col))
	if before == 0 {
		return false
	}
	traceProject(col, q, 2)
	after := math.Sqrt(traceDot(col, col))
	if after <= traceRankTol*before {
		// A NaN column fails this test and is kept, so that the NaN
		// reaches the estimate.
		return false
	}
	traceScale(col, 1/after)
	return true
}
