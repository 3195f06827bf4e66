// Package stats provides the numerics the other crosscluster packages share,
// matching SciPy, NumPy and scikit-learn to stated tolerances.
//
// # Two-sample tests and distributions
//
// KS2Samp is SciPy's ks_2samp: the statistic from integer counts, its
// location and sign, exact p-values (Hodges 1958; Viehmann 2021) and
// asymptotic ones. KolmogorovSF, SmirnovSF and KolmogorovLimitSF are SciPy's
// kstwo.sf, smirnov and kstwobign.sf (Simard and L'Ecuyer 2011; van
// Mulbregt 2018).
//
// # Classification and balance
//
// AUC is scikit-learn's roc_auc_score with optional sample weights.
// LogisticRegression solves scikit-learn's L2 logistic objective to its
// exact optimum by Newton's method. Standardizer is StandardScaler; Median
// and Quantile are NumPy's median and default quantile. SMD, VarianceRatio
// and KishESS are covariate-balance diagnostics.
//
// # Curves, correlation and spectra
//
// Pearson and Spearman with p-values, power-law and exponential fits, the
// AIC knee and Kneedle, EWMA, Welch's power spectrum, Hutchinson/Hutch++
// trace estimators and power iteration serve training-curve analysis.
//
// # Conventions
//
// Slices in, scalars out; nil weights mean uniform. A caller's mistake (a
// length mismatch, an unknown enum value) panics with a constant message; a
// problem with the data (empty input, one class, NaN where a number is
// needed) is returned as an error wrapping a sentinel such as ErrEmpty,
// ErrOneClass or ErrNaN. Every function documents its NaN handling, and no
// function modifies its inputs. Where a function deliberately differs from
// its peer it says so: KS2Samp drops NaNs (SciPy propagates them) and never
// returns a NaN p-value (SciPy does for n1 = n2 = 1 with method "asymp").
package stats
