package stats

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Pearson returns Pearson's product-moment correlation r of x and y and
// its two-sided p-value for H0: ρ = 0 under bivariate normality, as
// scipy.stats.pearsonr computes them: r from the centred vectors,
// clipped to [−1, 1], and p = 2·P(R ≥ |r|) where (R+1)/2 follows
// Beta(n/2 − 1, n/2 − 1). For n = 2, r is ±1 and p is 1, as in SciPy.
//
// Pearson panics if len(x) != len(y). It returns NaN values and a
// *CurveError wrapping ErrEmpty for fewer than 2 points,
// ErrNaN for NaN or Inf (SciPy would return NaN), and
// ErrCurveDegenerate when x or y is constant (SciPy warns and returns
// NaN). It does not modify x or y.
func Pearson(x, y []float64) (r, p float64, err error) {
	const fn = "Pearson"
	if len(x) != len(y) {
		panic("stats: slice length mismatch")
	}
	n := len(x)
	if n < 2 {
		return math.NaN(), math.NaN(), curveErr(fn, -1, ErrEmpty)
	}
	if i := curveCheckFinite(x, y); i >= 0 {
		return math.NaN(), math.NaN(), curveErr(fn, i, ErrNaN)
	}
	r, ok := corrPearsonR(x, y)
	if !ok {
		return math.NaN(), math.NaN(), curveErr(fn, -1, ErrCurveDegenerate)
	}
	if n == 2 {
		return r, 1, nil
	}
	ab := float64(n)/2 - 1
	p = 2 * distuv.Beta{Alpha: ab, Beta: ab}.Survival((math.Abs(r)+1)/2)
	return r, math.Min(p, 1), nil
}

// corrPearsonR is the clipped correlation of x and y; ok is false when
// either is constant. Each input is scaled by a power of two (exact) so
// that values near the float64 limits do not overflow the sums.
func corrPearsonR(x, y []float64) (float64, bool) {
	n := float64(len(x))
	fx, fy := corrPow2Scale(x), corrPow2Scale(y)
	var mx, my float64
	for i := range x {
		mx += x[i] * fx
		my += y[i] * fy
	}
	mx /= n
	my /= n
	var sxx, syy, sxy float64
	for i := range x {
		dx, dy := x[i]*fx-mx, y[i]*fy-my
		sxx += dx * dx
		syy += dy * dy
		sxy += dx * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN(), false
	}
	r := sxy / (math.Sqrt(sxx) * math.Sqrt(syy))
	return math.Max(-1, math.Min(1, r)), true
}

// corrPow2Scale returns 2^−e with 2^(e−1) ≤ max|a| < 2^e, or 1 for a zero
// vector, so that max|a|·scale lies in [1/2, 1) (for normal max|a|).
func corrPow2Scale(a []float64) float64 {
	var m float64
	for _, v := range a {
		m = math.Max(m, math.Abs(v))
	}
	if m == 0 {
		return 1
	}
	_, e := math.Frexp(m)
	// For a subnormal maximum 2^−e would overflow; 2^1021 still brings
	// it to a normal range.
	return math.Ldexp(1, min(-e, 1021))
}

// Spearman returns Spearman's rank correlation ρ of x and y and its
// two-sided p-value, as scipy.stats.spearmanr computes them: ρ is the
// Pearson correlation of the ranks (ties get their average rank), and
// p = 2·P(T ≥ |t|) for t = ρ·√((n−2)/((1+ρ)(1−ρ))) under Student's t with
// n − 2 degrees of freedom (p = 0 when |ρ| = 1).
//
// Spearman panics if len(x) != len(y). It returns NaN values and a
// *CurveError wrapping ErrEmpty for fewer than 3 points,
// ErrNaN for NaN or Inf, and ErrCurveDegenerate when x or y is
// constant. It does not modify x or y.
func Spearman(x, y []float64) (rho, p float64, err error) {
	const fn = "Spearman"
	if len(x) != len(y) {
		panic("stats: slice length mismatch")
	}
	n := len(x)
	if n < 3 {
		return math.NaN(), math.NaN(), curveErr(fn, -1, ErrEmpty)
	}
	if i := curveCheckFinite(x, y); i >= 0 {
		return math.NaN(), math.NaN(), curveErr(fn, i, ErrNaN)
	}
	rho, ok := corrPearsonR(corrRank(x), corrRank(y))
	if !ok {
		return math.NaN(), math.NaN(), curveErr(fn, -1, ErrCurveDegenerate)
	}
	df := float64(n - 2)
	if math.Abs(rho) == 1 {
		return rho, 0, nil
	}
	t := rho * math.Sqrt(df/((rho+1)*(1-rho)))
	p = 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t))
	return rho, math.Min(p, 1), nil
}

// corrRank returns the 1-based ranks of x with ties given their average
// rank (scipy.stats.rankdata's "average" method).
func corrRank(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case x[a] < x[b]:
			return -1
		case x[a] > x[b]:
			return 1
		}
		return 0
	})
	ranks := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && x[idx[j]] == x[idx[i]] {
			j++
		}
		avg := float64(i+j+1) / 2 // mean of ranks i+1 … j
		for k := i; k < j; k++ {
			ranks[idx[k]] = avg
		}
		i = j
	}
	return ranks
}
