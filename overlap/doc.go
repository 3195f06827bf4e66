// Package overlap measures how far two clusters' workloads overlap, so that
// a cross-cluster claim can be restricted to the region both share.
//
// [Fit] trains an L2 logistic domain classifier source (y = 0) versus
// target (y = 1) on standardised features, as the scikit-learn seed script
// does (StandardScaler over the pooled rows, LogisticRegression with C = 1,
// predict_proba), and reports the classifier's ROC AUC, the propensity
// P(target | x) of every job, the share of each domain whose propensity lies
// in an inclusive [Band], and two-sample Kolmogorov–Smirnov statistics,
// standardised mean differences and variance ratios per feature on all jobs
// and on in-band jobs. An AUC near 0.5 and a coverage near 1 mean the
// domains overlap; transfer results should then be evaluated on the
// in-band jobs only ([Result.Mask], [Rows]).
//
// A Result renders as the Markdown block a reviewer asks for, as JSON, as a
// row of an experiment log ([Log]); package plot draws its propensity
// histograms (plot.Propensity), so that this package links no plotting
// library. [Result.Sweep] re-reads the
// fitted propensities for other bands without refitting.
//
// The numerics come from package stats: the logistic regression is solved
// to its exact optimum (Newton), so AUCs agree with scikit-learn's lbfgs to
// about 1e-3 (lbfgs stops early), and the KS p-values are SciPy's.
//
// Fit keeps one column-major copy of X and one of the standardised
// features (whose memory later serves as sorting scratch), sorts each
// feature once per domain for both KS tests and the propensities once per
// domain for the AUC and quantiles, and spreads every phase over all cores
// with reductions in a fixed order, so results do not depend on
// scheduling.
package overlap
