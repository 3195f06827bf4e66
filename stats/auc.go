package stats

import (
	"fmt"
	"math"

	"github.com/crosscluster/crosscluster/internal/rank"
)

// AUC returns the area under the ROC curve of scores for the labels
// positive, that is the probability that a random positive scores higher
// than a random negative, ties counting one half (the normalised
// Mann–Whitney U computed from average ranks). With weights, each pair
// counts with the product of its weights; the result equals scikit-learn's
// roc_auc_score(positive, scores, sample_weight=weights). nil weights are
// uniform.
//
// AUC returns an error wrapping ErrOneClass when only one class is present
// (or one class has zero total weight), ErrEmpty for empty input, ErrNaN when
// a score is NaN (±Inf scores are ordinary values) and ErrWeight for a
// negative, NaN or infinite weight. It panics if the lengths differ. The
// inputs are not modified.
func AUC(scores []float64, positive []bool, weights []float64) (float64, error) {
	if len(scores) != len(positive) {
		panic("stats: AUC: length mismatch between scores and labels")
	}
	if weights != nil && len(weights) != len(scores) {
		panic("stats: AUC: length mismatch between scores and weights")
	}
	n := len(scores)
	if n == 0 {
		return math.NaN(), fmt.Errorf("stats: AUC: %w", ErrEmpty)
	}
	var wPos, wNeg float64
	for i, s := range scores {
		if math.IsNaN(s) {
			return math.NaN(), fmt.Errorf("stats: AUC: score %d: %w", i, ErrNaN)
		}
		w := 1.0
		if weights != nil {
			w = weights[i]
			if !(w >= 0) || math.IsInf(w, 1) {
				return math.NaN(), fmt.Errorf("stats: AUC: weight %d is %v: %w", i, w, ErrWeight)
			}
		}
		if positive[i] {
			wPos += w
		} else {
			wNeg += w
		}
	}
	if wPos == 0 || wNeg == 0 {
		return math.NaN(), fmt.Errorf("stats: AUC: positive weight %v, negative weight %v: %w", wPos, wNeg, ErrOneClass)
	}
	// Sort order-preserving keys (with -0 folded into +0 so that the zeros
	// tie) carrying the label when unweighted, or the row index otherwise;
	// the unweighted walk then reads no memory out of order.
	keys := make([]uint64, n)
	pay := make([]int32, n)
	for i, v := range scores {
		keys[i] = rank.Key(v + 0)
		switch {
		case weights != nil:
			pay[i] = int32(i)
		case positive[i]:
			pay[i] = 1
		}
	}
	keys, pay = rank.KeysPayload(keys, pay)
	// Walk groups of tied scores from the lowest: each positive in a group
	// beats the negatives below it and ties half of those in its group.
	var area, negBelow float64
	for i := 0; i < n; {
		k := keys[i]
		var gPos, gNeg float64
		for ; i < n && keys[i] == k; i++ {
			w, pos := 1.0, pay[i] == 1
			if weights != nil {
				w, pos = weights[pay[i]], positive[pay[i]]
			}
			if pos {
				gPos += w
			} else {
				gNeg += w
			}
		}
		area += gPos * (negBelow + 0.5*gNeg)
		negBelow += gNeg
	}
	return area / (wPos * wNeg), nil
}
