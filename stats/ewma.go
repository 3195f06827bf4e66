package stats

import "math"

// EWMA writes into dst the exponentially weighted moving average of x with
// smoothing factor alpha and returns dst, with the semantics of pandas'
// Series.ewm(alpha=alpha, adjust=adjust, ignore_na=ignoreNA).mean() (and
// min_periods=0).
//
// With adjust, y_t = Σ w_i x_{t−i} / Σ w_i with w_i = (1−alpha)^i over the
// observations so far; without it, y_t = (1−alpha)·y_{t−1} + alpha·x_t.
// NaN values in x are missing observations: dst holds NaN until the first
// observation and the last average at a missing position afterwards. When
// ignoreNA is false, weights follow absolute positions, so a gap ages the
// earlier observations; when it is true, weights count observations only.
// Like pandas, an observation equal to the current average leaves it
// exactly unchanged.
//
// If dst is nil a new slice is allocated; otherwise len(dst) must equal
// len(x), and dst may be x itself. EWMA panics if the lengths differ or
// alpha is not in (0, 1]. It does not modify x unless dst aliases it.
func EWMA(dst, x []float64, alpha float64, adjust, ignoreNA bool) []float64 {
	if !(alpha > 0 && alpha <= 1) {
		panic("stats: EWMA alpha out of (0, 1]")
	}
	if dst == nil {
		dst = make([]float64, len(x))
	}
	if len(dst) != len(x) {
		panic("stats: slice length mismatch")
	}
	if len(x) == 0 {
		return dst
	}
	decay := 1 - alpha
	newWt := alpha
	if adjust {
		newWt = 1
	}
	avg := x[0]
	oldWt := 1.0
	dst[0] = avg
	for i := 1; i < len(x); i++ {
		cur := x[i]
		obs := !math.IsNaN(cur)
		switch {
		case !math.IsNaN(avg):
			if obs || !ignoreNA {
				oldWt *= decay
				if obs {
					if avg != cur {
						avg = (oldWt*avg + newWt*cur) / (oldWt + newWt)
					}
					if adjust {
						oldWt += newWt
					} else {
						oldWt = 1
					}
				}
			}
		case obs:
			avg = cur
		}
		dst[i] = avg
	}
	return dst
}
