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
	// equal to it. The counts are integers, and below + equal/2 (a
	// multiple of ½ under 2^53) is exact in float64.
	below, upTo := mergeCounts(neg, pos)
	return (float64(below) + 0.5*float64(upTo-below)) / (float64(nPos) * float64(nNeg))
}

// mergeCounts returns Σ_i #{j: neg[j] < pos[i]} and Σ_i #{j: neg[j] ≤
// pos[i]} for sorted neg and pos: two merges run side by side, each a
// step per element without a branch on the comparison (where the classes
// interleave, as overlapping propensities do, a branch would be
// mispredicted about every other step), so that each waits only on its
// own loads and the two overlap.
func mergeCounts(neg, pos []float64) (below, upTo int) {
	nNeg, nPos := len(neg), len(pos)
	i, j := 0, 0 // the strict merge: pos[i] against neg[j]
	k, l := 0, 0 // the non-strict one: pos[k] against neg[l]
	for i < nPos && j < nNeg && k < nPos && l < nNeg {
		lt := b2i(neg[j] < pos[i])
		le := b2i(neg[l] <= pos[k])
		// A negative below pos[i] moves j on; otherwise pos[i] has j
		// negatives below it and i moves on.
		below += (1 - lt) * j
		j += lt
		i += 1 - lt
		upTo += (1 - le) * l
		l += le
		k += 1 - le
	}
	for i < nPos && j < nNeg {
		lt := b2i(neg[j] < pos[i])
		below += (1 - lt) * j
		j += lt
		i += 1 - lt
	}
	below += (nPos - i) * j // the rest: every negative is below them
	for k < nPos && l < nNeg {
		le := b2i(neg[l] <= pos[k])
		upTo += (1 - le) * l
		l += le
		k += 1 - le
	}
	upTo += (nPos - k) * l
	return below, upTo
}

// b2i is 1 for true and 0 for false, without a branch.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
