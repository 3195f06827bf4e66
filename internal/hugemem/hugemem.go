// Package hugemem allocates large float64 slices that the kernel may back
// with transparent huge pages.
//
// A fresh slice costs a page fault for every 4 KiB page on first touch;
// on the 2-core benchmark machine that is about as much time as writing
// the data. Where transparent huge pages are enabled in "madvise" mode
// (the default of many distributions), asking for them on a large
// allocation, as NumPy does for arrays of 4 MiB and more, turns 512 of
// those faults into one. Elsewhere, and for small slices, Float64s is
// make([]float64, n).
package hugemem

// Threshold is the size in bytes from which Float64s asks for huge pages:
// NumPy's.
const Threshold = 4 << 20

// hugePage is the huge page size advised on; the advice covers the
// 2 MiB-aligned part of the slice.
const hugePage = 2 << 20

// Float64s returns make([]float64, n), with huge pages advised for its
// memory when it is at least Threshold bytes.
func Float64s(n int) []float64 {
	x := make([]float64, n)
	if n*8 >= Threshold {
		advise(x)
	}
	return x
}
