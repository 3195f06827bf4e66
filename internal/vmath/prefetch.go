package vmath

// Prefetch asks the CPU to bring x's memory into its second-level cache
// for a read soon after, one request per 64-byte line. It reads nothing,
// changes nothing and cannot fault, so x may reach past the data its
// caller will read (the hint is then wasted). Without assembly (purego,
// other architectures) it does nothing.
//
// A loop over several long arrays block by block, which computes long
// enough on each block for memory to deliver the next, hides the
// latency of the next block's reads behind the current block's work by
// prefetching them first: internal/logit's passes over the columns.
func Prefetch(x []float64) {
	if len(x) > 0 {
		prefetchL2(&x[0], len(x))
	}
}
