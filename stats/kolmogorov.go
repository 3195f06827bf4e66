package stats

import "github.com/crosscluster/crosscluster/internal/rank"

// Distribution functions of the Kolmogorov–Smirnov statistics, following the
// algorithms SciPy uses (scipy.special.kolmogorov, scipy.special.smirnov and
// scipy.stats.kstwo, the last from scipy/stats/_ksstats.py). They are
// computed by internal/rank, which KS2Samp's p-values also come from.

// KolmogorovLimitSF returns the survival function of the limiting Kolmogorov
// distribution, P(sqrt(n)·D_n > x) as n → ∞ (SciPy's kstwobign.sf and
// scipy.special.kolmogorov). It returns 1 for x ≤ 0 and NaN for NaN.
//
// Two Jacobi theta series are used, switching at x = 0.82 (van Mulbregt 2018,
// arXiv:1803.00426), as SciPy does.
func KolmogorovLimitSF(x float64) float64 { return rank.KolmogorovLimitSF(x) }

// SmirnovSF returns the survival function of the one-sided one-sample
// Kolmogorov–Smirnov statistic, P(D_n^+ ≥ d), as SciPy's
// scipy.special.smirnov(n, d) computes it: the Smirnov (1944) /
// Birnbaum–Tingey (1951) sum
//
//	P(D_n^+ ≥ d) = d · Σ_{v=0}^{⌊n(1-d)⌋} C(n,v) (d+v/n)^(v-1) (1-d-v/n)^(n-v),
//
// or, for small d and few terms, the complementary alternating sum (van
// Mulbregt 2018, arXiv:1802.06966). Terms are formed with a scaled mantissa
// and exponent so that nothing underflows. Where the terms are provably
// log-concave in v (n ≥ 200, n·d² ≥ 1, (n·d-1)² ≥ 2n) the same sum is
// taken from its largest term outwards and stopped by a geometric tail
// bound, one exp and two log1p per term; it agrees with the full series to
// about 1e-13. For n > 10^6 the approximation exp(-(6nd+1)²/(18n)) is
// used, as SciPy does.
//
// SmirnovSF returns NaN when n < 1 or d is outside [0, 1] or NaN.
func SmirnovSF(n int, d float64) float64 { return rank.SmirnovSF(n, d) }

// KolmogorovSF returns the survival function of the two-sided one-sample
// Kolmogorov–Smirnov statistic D_n for sample size n, P(D_n > d), as SciPy's
// scipy.stats.kstwo.sf(d, n) computes it.
//
// The method is chosen as Simard and L'Ecuyer (2011) recommend, with SciPy's
// cut-offs: the Ruben–Gambino exact forms for d ≤ 1/n and d ≥ 1-1/n,
// 2·SmirnovSF(n, d) for d ≥ 0.5 and in the far tail, Durbin's matrix
// algorithm (1968) in the form of Marsaglia, Tsang and Wang (2003),
// Pomeranz's recursion (1974) for n ≤ 140, and the Pelz–Good (1976)
// asymptotic series for large n.
//
// KolmogorovSF returns NaN when n < 1 or d is NaN, 1 for d ≤ 0 and 0 for d ≥ 1.
func KolmogorovSF(n int, d float64) float64 { return rank.KolmogorovSF(n, d) }

// KolmogorovCDF returns P(D_n ≤ d), SciPy's kstwo.cdf(d, n); see KolmogorovSF.
func KolmogorovCDF(n int, d float64) float64 { return rank.KolmogorovCDF(n, d) }
