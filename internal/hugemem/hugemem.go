// Package hugemem allocates large float64 slices that the kernel may back
// with transparent huge pages.
//
// A fresh slice costs a page fault for every 4 KiB page on first touch;
// on the 2-core benchmark machine (a virtual machine) a fault costs
// several microseconds, more than writing the page. Where transparent huge
// pages are enabled in "madvise" mode (the default of many distributions),
// asking for them turns 512 of those faults into one, as NumPy does for
// arrays of 4 MiB and more. Float64s also places the slice in whole,
// 2 MiB-aligned huge pages (asking for up to 4 MiB more address space,
// which a fresh allocation never touches), so that no 4 KiB pages are
// left at its ends: on overlap's 2e5-job benchmark a fit takes 1,800
// page faults instead of 2,900. Elsewhere, and for smaller slices (where 1 MiB
// thresholds measured no faster), Float64s is make([]float64, n).
package hugemem

// Threshold is the size in bytes from which Float64s asks for huge pages:
// NumPy's.
const Threshold = 4 << 20

// hugePage is the huge page size advised on.
const hugePage = 2 << 20

// Float64s returns a zeroed slice of n float64s (length and capacity n),
// in whole huge pages advised as such when it is at least Threshold bytes
// on Linux.
func Float64s(n int) []float64 {
	if n*8 < Threshold || !supported {
		return make([]float64, n)
	}
	pages := (n*8 + hugePage - 1) / hugePage
	buf := make([]float64, (pages+1)*hugePage/8)
	x := align(buf)[: pages*hugePage/8 : pages*hugePage/8]
	advise(x)
	return x[:n:n]
}
