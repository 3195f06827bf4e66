package overlap

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// AUCInterval is a ROC AUC with its DeLong standard error and a normal 95%
// interval, clipped to [0, 1].
type AUCInterval struct {
	AUC, SE float64
	Lo, Hi  float64
}

// Errors of DeLong.
var (
	// ErrOneClass: scores of one class only (an AUC needs both), or fewer
	// than two of a class (its variance needs two).
	ErrOneClass = errors.New("overlap: one class only")
	// errScores: the scores and labels differ in length, or a score is NaN.
	errScores = errors.New("overlap: invalid scores")
)

// DeLong returns the AUC of scores for the positives against the negatives
// with DeLong, DeLong and Clarke-Pearson's (1988) variance, computed by
// Sun and Xu's (2014) O(n log n) algorithm from midranks: with Tz the
// midranks of all scores, Tx those within the positives and Ty within the
// negatives, the structural components are V10_i = (Tz_i − Tx_i)/n for
// each of the m positives and V01_j = 1 − (Tz_j − Ty_j)/m for each of the n
// negatives; AUC is the mean of V10 and its variance S10/m + S01/n, S the
// sample variances (ties count a half, as in the Mann-Whitney statistic).
// ±Inf scores are ordinary values. Lengths that differ and NaN scores are
// errors wrapping errScores; a class with fewer than two scores (no
// variance) wraps ErrOneClass.
func delong(scores []float64, positive []bool) (AUCInterval, error) {
	if len(scores) != len(positive) {
		return AUCInterval{}, fmt.Errorf("%w: DeLong: %d scores, %d labels", errScores, len(scores), len(positive))
	}
	var x, y []float64
	for i, s := range scores {
		if math.IsNaN(s) {
			return AUCInterval{}, fmt.Errorf("%w: DeLong: score %d is NaN", errScores, i)
		}
		if positive[i] {
			x = append(x, s)
		} else {
			y = append(y, s)
		}
	}
	m, n := len(x), len(y)
	if m == 0 || n == 0 {
		return AUCInterval{}, fmt.Errorf("%w: DeLong: %d positives, %d negatives", ErrOneClass, m, n)
	}
	if m < 2 || n < 2 {
		return AUCInterval{}, fmt.Errorf("%w: DeLong: %d positives, %d negatives; the variance needs two of each", ErrOneClass, m, n)
	}
	z := slices.Concat(x, y)
	tz := midranks(z)
	tx := midranks(x)
	ty := midranks(y)
	v10 := make([]float64, m)
	for i := range x {
		v10[i] = (tz[i] - tx[i]) / float64(n)
	}
	v01 := make([]float64, n)
	for j := range y {
		v01[j] = 1 - (tz[m+j]-ty[j])/float64(m)
	}
	auc := mean(v10)
	se := math.Sqrt(sampleVar(v10)/float64(m) + sampleVar(v01)/float64(n))
	const z975 = 1.959963984540054
	return AUCInterval{AUC: auc, SE: se, Lo: max(0, auc-z975*se), Hi: min(1, auc+z975*se)}, nil
}

// midranks returns the 1-based ranks of v, ties sharing their mean rank.
func midranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case v[a] < v[b]:
			return -1
		case v[a] > v[b]:
			return 1
		}
		return 0
	})
	r := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && v[idx[j]] == v[idx[i]] {
			j++
		}
		mid := float64(i+j+1) / 2 // mean of ranks i+1 .. j
		for k := i; k < j; k++ {
			r[idx[k]] = mid
		}
		i = j
	}
	return r
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// sampleVar is the variance with n−1 in the denominator.
func sampleVar(v []float64) float64 {
	mu := mean(v)
	s := 0.0
	for _, x := range v {
		s += (x - mu) * (x - mu)
	}
	return s / float64(len(v)-1)
}

// AUCInterval returns the DeLong standard error and 95% interval of the
// domain classifier's in-sample AUC, from the fitted propensities (target
// jobs are the positives). It sorts the propensities, O(n log n), so Fit
// leaves it to the caller; the reports call it.
func (r *Result) AUCInterval() (AUCInterval, error) {
	if r.Propensity == nil || r.y == nil {
		return AUCInterval{}, fmt.Errorf("%w: no fitted propensities", ErrEmptyDomain)
	}
	pos := make([]bool, len(r.y))
	for i, v := range r.y {
		pos[i] = v == Target
	}
	return delong(r.Propensity, pos)
}
