package stats

import (
	"math"
	"slices"

	"github.com/crosscluster/crosscluster/internal/rank"
)

// Median returns the median of x as numpy.median does: the middle value of
// the sorted sample, or the mean of the two middle values. It returns NaN
// if x is empty or contains a NaN (NumPy propagates NaN). x is not modified.
func Median(x []float64) float64 {
	n := len(x)
	if n == 0 {
		return math.NaN()
	}
	for _, v := range x {
		if math.IsNaN(v) {
			return math.NaN()
		}
	}
	s := slices.Clone(x)
	rank.Floats(s)
	return medianSorted(s)
}

// medianSorted is Median on sorted, NaN-free, non-empty data; like NumPy it
// averages the two middle values as (a+b)/2.
func medianSorted(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Quantile returns the q-quantile of x by linear interpolation between
// order statistics, NumPy's default method ("linear", Hyndman and Fan's
// type 7): with sorted values v and h = (n-1)·q, v[⌊h⌋] + (h-⌊h⌋)·(v[⌊h⌋+1]-v[⌊h⌋]).
// It returns NaN if x is empty or contains a NaN. x is not modified.
// Quantile panics if q is outside [0, 1] or NaN.
func Quantile(x []float64, q float64) float64 {
	if !(q >= 0 && q <= 1) {
		panic("stats: Quantile: q outside [0, 1]")
	}
	if len(x) == 0 {
		return math.NaN()
	}
	for _, v := range x {
		if math.IsNaN(v) {
			return math.NaN()
		}
	}
	s := slices.Clone(x)
	rank.Floats(s)
	return rank.QuantileSorted(s, q)
}
