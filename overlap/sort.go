package overlap

import "math"

// sortFloats sorts finite or infinite (not NaN) values in increasing order
// by an LSD radix sort on their order-preserving bit patterns, using tmp
// (len(tmp) >= len(x)) as scratch. stats sorts inside KS2Samp; overlap sorts
// each domain's in-band and out-of-band values once and merges them, so the
// all-rows and in-band KS tests share one sort (see compareFeature).
func sortFloats(x []float64, tmp []uint64) {
	n := len(x)
	if n < 256 {
		insertionSort(x)
		return
	}
	keys := tmp[:n]
	buf := make([]uint64, n)
	for i, v := range x {
		b := math.Float64bits(v)
		if b>>63 == 1 {
			b = ^b
		} else {
			b |= 1 << 63
		}
		keys[i] = b
	}
	src, dst := keys, buf
	var count [256]int
	for shift := uint(0); shift < 64; shift += 8 {
		clear(count[:])
		for _, k := range src {
			count[(k>>shift)&0xff]++
		}
		if count[(src[0]>>shift)&0xff] == n {
			continue // every key has the same digit here
		}
		pos := 0
		for d := range count {
			c := count[d]
			count[d] = pos
			pos += c
		}
		for _, k := range src {
			d := (k >> shift) & 0xff
			dst[count[d]] = k
			count[d]++
		}
		src, dst = dst, src
	}
	for i, b := range src {
		if b>>63 == 1 {
			b &^= 1 << 63
		} else {
			b = ^b
		}
		x[i] = math.Float64frombits(b)
	}
}

func insertionSort(x []float64) {
	for i := 1; i < len(x); i++ {
		v := x[i]
		j := i
		for ; j > 0 && x[j-1] > v; j-- {
			x[j] = x[j-1]
		}
		x[j] = v
	}
}

// mergeSorted merges sorted a and b into dst[:len(a)+len(b)] and returns it.
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
