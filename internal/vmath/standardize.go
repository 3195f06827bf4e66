package vmath

// Standardize sets dst[i] = (x[i] − center) / scale for i < len(dst):
// sixteen at a time with AVX where the CPU has it, the rest, and
// everything elsewhere, in Go. Subtraction and division are correctly
// rounded in both, so the results are the same bits as the Go
// expression's. It panics if x is shorter than dst.
func Standardize(dst, x []float64, center, scale float64) {
	x = x[:len(dst)]
	n := 0
	if useFMA {
		n = len(dst) &^ 15
		standardizeAVX(dst[:n], x, center, scale)
	}
	for i := n; i < len(dst); i++ {
		dst[i] = (x[i] - center) / scale
	}
}
