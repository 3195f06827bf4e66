package rank

import "math"

// AUCSorted is the unweighted AUC (stats.AUC) of scores already split by
// class and sorted in increasing order: neg holds the negatives' scores,
// pos the positives'. It equals stats.AUC on the pooled scores to the last
// bit (both count pairs exactly) without sorting, for callers that need
// the sorted scores anyway, for per-class quantiles. It does not check the
// order and does not modify its inputs; scores must not be NaN. It returns
// NaN when either class is empty.
func AUCSorted(neg, pos []float64) float64 {
	nNeg, nPos := len(neg), len(pos)
	if nNeg == 0 || nPos == 0 {
		return math.NaN()
	}
	// Each positive beats the negatives below it and ties half of those
	// equal to it. The counts are integers below 2^53, so the sum is exact.
	var area float64
	j := 0
	for i := 0; i < nPos; {
		v := pos[i]
		g := i
		for i < nPos && pos[i] == v {
			i++
		}
		for j < nNeg && neg[j] < v {
			j++
		}
		below := j
		for j < nNeg && neg[j] == v {
			j++
		}
		area += float64(i-g) * (float64(below) + 0.5*float64(j-below))
	}
	return area / (float64(nPos) * float64(nNeg))
}
