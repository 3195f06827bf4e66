package rank

import "math"

// QuantileSorted is NumPy's default (linear, type 7) quantile of sorted,
// NaN-free, non-empty s: with h = (n-1)·q, the value between s[⌊h⌋] and
// s[⌊h⌋+1] at g = h-⌊h⌋, computed as numpy.quantile's _lerp does (from
// the nearer end: a + (b-a)·g for g < 0.5, b - (b-a)·(1-g) otherwise), so
// that the result is NumPy's to the last bit. stats.Quantile and
// overlap's propensity quantiles share it. Products are rounded before
// they are added (float64(…)): Go may fuse an unrounded a + d·g into one
// multiply-add, and does on arm64, which then misses NumPy's last bit.
func QuantileSorted(s []float64, q float64) float64 {
	n := len(s)
	h := float64(float64(n-1) * q)
	lo := math.Floor(h)
	i := int(lo)
	if i >= n-1 {
		return s[n-1]
	}
	g := h - lo
	a, b := s[i], s[i+1]
	d := b - a
	if g >= 0.5 {
		return b - float64(d*(1-g))
	}
	return a + float64(d*g)
}
