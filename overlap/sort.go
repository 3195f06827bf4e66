package overlap

// mergeSorted merges sorted a and b into dst[:len(a)+len(b)] and returns it.
// compareFeature sorts each domain's in-band and out-of-band values
// (stats.FloatSorter) and merges them, so that the all-rows and in-band KS
// tests share one sort.
func mergeSorted(dst, a, b []float64) []float64 {
	dst = dst[:len(a)+len(b)]
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if b[j] < a[i] {
			dst[k] = b[j]
			j++
		} else {
			dst[k] = a[i]
			i++
		}
		k++
	}
	k += copy(dst[k:], a[i:])
	copy(dst[k:], b[j:])
	return dst
}
