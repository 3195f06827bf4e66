package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/crosscluster/crosscluster/internal/logit"
)

// ClassWeight selects per-class weights for LogisticRegression.
type ClassWeight int

const (
	// ClassWeightNone weighs both classes 1.
	ClassWeightNone ClassWeight = iota
	// ClassWeightBalanced weighs class c by n/(2·n_c), scikit-learn's
	// class_weight="balanced" (n_c counts rows, not sample weights).
	ClassWeightBalanced
)

// LogisticConfig configures LogisticRegression. The zero value is
// scikit-learn's default LogisticRegression() (C = 1, intercept, no
// weights) solved to the exact optimum.
type LogisticConfig struct {
	// C is the inverse L2 strength; 0 means 1 (scikit-learn's default).
	C float64
	// SampleWeight has one non-negative weight per row; nil is uniform.
	SampleWeight []float64
	// ClassWeight multiplies the sample weights per class.
	ClassWeight ClassWeight
	// NoIntercept fits without an intercept (fit_intercept=False).
	NoIntercept bool
	// MaxIter bounds the Newton iterations; 0 means 100.
	MaxIter int
	// Tol is the relative gradient-norm tolerance: the fit has converged
	// when ‖∇‖₂ ≤ Tol·max(1, ‖∇ at 0‖₂), or when the Newton step from the
	// current coefficients is below 1e-10 relative to them (the step is
	// then the distance to the optimum, and the current coefficients,
	// whose gradient is known, are returned). 0 means 1e-12.
	Tol float64
}

// LogisticResult is a fitted binary logistic regression.
type LogisticResult struct {
	// Coef has one coefficient per column of X; Intercept is 0 with NoIntercept.
	Coef      []float64
	Intercept float64
	// Iterations is the number of Newton iterations taken.
	Iterations int
	// GradNorm is ‖∇‖₂ of the objective at the returned coefficients.
	GradNorm float64
	// Converged reports whether a stopping criterion was met before MaxIter.
	Converged bool
	// Separable reports that the weighted training rows are perfectly
	// separated by the fitted hyperplane; the optimum exists only through
	// the L2 penalty and grows with C. Note explains it.
	Separable bool
	// Note is a human-readable remark on the fit, or empty.
	Note string
}

// LogisticRegression fits a binary L2-penalised logistic regression of y on
// the columns of X, minimising scikit-learn's objective
//
//	C · Σ_i w_i · logloss(y_i, σ(x_i·β + b)) + ½‖β‖²
//
// (the intercept b is not penalised; w_i is the sample weight times the
// class weight) to the exact optimum by Newton's method (iteratively
// reweighted least squares) with a Cholesky solve of the Hessian and a
// step-halving line search. scikit-learn's lbfgs stops near this optimum
// (its ftol of 64·eps ends it early); with tol=1e-12 it agrees to about 1e-4.
//
// Rows are processed in fixed chunks on up to GOMAXPROCS goroutines with a
// reduction in chunk order, so results are identical on every run. Large
// problems start from the optimum of a subsample, and near the optimum
// steps reuse the last Hessian, so a fit takes three to five passes over
// the data, most without the Hessian.
//
// X is read without a copy when it is a *mat.Dense (or another
// mat.RawMatrixer), or when it is the transpose of one: column-major data,
// as rows × features, are passed as m.T() of a features × rows matrix m.
// Both layouts give identical results.
//
// y must hold 0 or 1. LogisticRegression returns an error wrapping
// ErrEmpty for zero rows, ErrOneClass when only one class has positive
// weight, ErrNaN for NaN/Inf in X (naming row and column) and ErrWeight for
// a bad weight; a y value other than 0 or 1 is an error naming the row.
// Separable data terminate with Separable set and a Note. It panics if
// len(y) or len(cfg.SampleWeight) differs from the number of rows, if C is
// negative, NaN or infinite, or if ClassWeight is unknown.
func LogisticRegression(X mat.Matrix, y []int, cfg LogisticConfig) (*LogisticResult, error) {
	r, _ := X.Dims()
	if len(y) != r {
		panic("stats: LogisticRegression: len(y) differs from rows of X")
	}
	if cfg.SampleWeight != nil && len(cfg.SampleWeight) != r {
		panic("stats: LogisticRegression: len(SampleWeight) differs from rows of X")
	}
	if cfg.C < 0 || math.IsNaN(cfg.C) || math.IsInf(cfg.C, 1) {
		panic("stats: LogisticRegression: C negative, NaN or infinite")
	}
	if cfg.ClassWeight != ClassWeightNone && cfg.ClassWeight != ClassWeightBalanced {
		panic("stats: LogisticRegression: unknown ClassWeight")
	}
	res, err := logit.Fit(X, y, logit.Config{C: cfg.C, SampleWeight: cfg.SampleWeight, Balanced: cfg.ClassWeight == ClassWeightBalanced,
		NoIntercept: cfg.NoIntercept, MaxIter: cfg.MaxIter, Tol: cfg.Tol}, nil)
	if err != nil {
		return nil, fmt.Errorf("stats: LogisticRegression: %w", err)
	}
	return (*LogisticResult)(res), nil
}

// PredictProba writes P(y=1|x) for each row of X into dst and returns it;
// a nil dst is allocated. Raw and transposed raw matrices (column-major
// data, see LogisticRegression) are read directly, large ones on all
// cores. The sigmoid is internal/vmath's (AVX2 where available, within a
// few ulps of package math and the same function for every row, so rows
// with equal η get equal probabilities). It panics if X's column count
// differs from len(r.Coef) or dst's length from X's rows.
func (r *LogisticResult) PredictProba(dst []float64, X mat.Matrix) []float64 {
	n, c := X.Dims()
	if c != len(r.Coef) {
		panic("stats: PredictProba: column count mismatch")
	}
	if dst != nil && len(dst) != n {
		panic("stats: PredictProba: dst length mismatch")
	}
	return (*logit.Result)(r).PredictProba(dst, X)
}
