package stats

import (
	"fmt"

	"github.com/crosscluster/crosscluster/internal/rank"
	"github.com/crosscluster/crosscluster/internal/staterr"
)

// Sentinel errors of package stats. Functions wrap them with the place and
// reason ("stats: KS2Samp: first sample (n=0 before dropping NaN): too few
// values"); test with errors.Is. The curve-analysis functions wrap them in
// a *CurveError.
var (
	// ErrEmpty: an input has fewer usable (non-NaN) values than the
	// function needs: none for KS2Samp, AUC and LogisticRegression, two or
	// three points for the curve fits and correlations.
	ErrEmpty = staterr.ErrEmpty
	// ErrOneClass: labels contain a single class where two are needed.
	ErrOneClass = staterr.ErrOneClass
	// ErrNaN: an input contains NaN or ±Inf where a finite number is
	// required.
	ErrNaN = staterr.ErrNaN
	// ErrWeight: a weight is negative, NaN or ±Inf.
	ErrWeight = staterr.ErrWeight
)

// Alternative is the alternative hypothesis of a test, with SciPy's meanings.
type Alternative int

const (
	// TwoSided: the distributions differ, F ≠ G; the statistic is max |F_n - G_m|.
	TwoSided Alternative = iota
	// Less: F(x) < G(x) for some x; the statistic is max(G_m - F_n).
	Less
	// Greater: F(x) > G(x) for some x; the statistic is max(F_n - G_m).
	Greater
)

func (a Alternative) String() string {
	switch a {
	case TwoSided:
		return "two-sided"
	case Less:
		return "less"
	case Greater:
		return "greater"
	}
	return fmt.Sprintf("Alternative(%d)", int(a))
}

// KSMethod selects how KS2Samp computes its p-value.
type KSMethod int

const (
	// KSAuto uses KSExact when max(n1, n2) ≤ 10000 and KSAsymp otherwise.
	KSAuto KSMethod = iota
	// KSExact computes the exact null distribution, falling back to KSAsymp
	// where the exact computation is impossible or overflows (as SciPy does).
	KSExact
	// KSAsymp uses the asymptotic distributions.
	KSAsymp
)

func (m KSMethod) String() string {
	switch m {
	case KSAuto:
		return "auto"
	case KSExact:
		return "exact"
	case KSAsymp:
		return "asymp"
	}
	return fmt.Sprintf("KSMethod(%d)", int(m))
}

// KSResult is the outcome of KS2Samp.
type KSResult struct {
	// Statistic is the KS statistic D; PValue its p-value under the null.
	Statistic, PValue float64
	// Location is the observation (from x or y) at which the empirical
	// distribution functions are farthest apart in the tested direction.
	Location float64
	// Sign is +1 if x's empirical distribution function exceeds y's at
	// Location and -1 otherwise (SciPy's statistic_sign).
	Sign int
	// Method is the method actually used for PValue (KSExact or KSAsymp).
	Method KSMethod
}

// KS2Samp performs the two-sample Kolmogorov–Smirnov test of x against y, as
// SciPy's scipy.stats.ks_2samp (1.10) does, and gives the same statistic,
// location and sign, and p-values to within SciPy's own test tolerances.
//
// NaNs are dropped from both samples first (SciPy would propagate them); ±Inf
// are ordinary values. The inputs are not modified. If either sample has no
// values left, KS2Samp returns an error wrapping ErrEmpty.
//
// The statistic is computed from integer counts: D = h/lcm(n1, n2) exactly
// as a rational for KSExact (SciPy rounds d·lcm to h), and as SciPy's
// floating-point difference of the two empirical CDFs for KSAsymp.
//
// Exact p-values: two-sided with n1 = n2 by the alternating sum of paths
// outside the square; two-sided with n1 ≠ n2 by the inside method of Hodges
// (1958) as rewritten by Viehmann (2021, arXiv:2102.08037) to compute the
// complement directly; one-sided by counting paths outside the diagonal
// (Hodges 1958), falling back to the asymptotic formula when that
// overflows. Asymptotic p-values: two-sided by KolmogorovSF with the effective
// sample size round(n1·n2/(n1+n2)); one-sided by Hodges' formula (5.3).
//
// KS2Samp panics if alt or method is not one of the defined constants.
func KS2Samp(x, y []float64, alt Alternative, method KSMethod) (KSResult, error) {
	if alt < TwoSided || alt > Greater {
		panic("stats: unknown Alternative")
	}
	if method < KSAuto || method > KSAsymp {
		panic("stats: unknown KSMethod")
	}
	xs := rank.SortedKeys(x)
	if len(xs) == 0 {
		return KSResult{}, fmt.Errorf("stats: KS2Samp: first sample (n=%d before dropping NaN): %w", len(x), ErrEmpty)
	}
	ys := rank.SortedKeys(y)
	if len(ys) == 0 {
		return KSResult{}, fmt.Errorf("stats: KS2Samp: second sample (n=%d before dropping NaN): %w", len(y), ErrEmpty)
	}
	return ksResult(rank.TwoSample(xs, ys, rank.Alternative(alt), rank.Method(method))), nil
}

// ksResult converts internal/rank's result, which KS2Samp computes.
func ksResult(r rank.Result) KSResult {
	return KSResult{Statistic: r.Statistic, PValue: r.PValue, Location: r.Location, Sign: r.Sign, Method: KSMethod(r.Method)}
}
