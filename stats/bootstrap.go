package stats

import (
	"context"
	"math/rand/v2"

	"github.com/crosscluster/crosscluster/internal/par"
)

// Bootstrap runs the resampling step of a (stratified) percentile
// bootstrap (Efron and Tibshirani 1993, ch. 13): it calls stat once for
// each of resamples resamples, with idx[k] holding sizes[k] indices drawn
// with replacement from [0, sizes[k]), stratum by stratum. Resample b uses a
// PCG generator seeded (seed, b) and draws the strata in order, so the
// resamples do not depend on workers or on the order in which they run; the
// caller maps the indices to its data and keeps stat's values (typically in
// a slice indexed by b) for Quantile.
//
// stat runs on up to workers goroutines at once; w (0 ≤ w < workers) names
// the goroutine so that stat can keep scratch space per worker. idx belongs
// to Bootstrap and is reused once stat returns. When ctx is cancelled no
// further resample starts and Bootstrap returns ctx.Err(); the resamples
// already run have been passed to stat.
//
// Bootstrap panics if workers < 1, resamples < 0 or a size is negative. An
// empty stratum draws no index.
func Bootstrap(ctx context.Context, sizes []int, resamples, workers int, seed uint64, stat func(w, b int, idx [][]int)) error {
	if workers < 1 {
		panic("stats: Bootstrap: workers < 1")
	}
	if resamples < 0 {
		panic("stats: Bootstrap: negative resamples")
	}
	for _, n := range sizes {
		if n < 0 {
			panic("stats: Bootstrap: negative stratum size")
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	workers = min(workers, max(resamples, 1))
	scratch := make([][][]int, workers)
	for w := range scratch {
		scratch[w] = make([][]int, len(sizes))
		for k, n := range sizes {
			scratch[w][k] = make([]int, n)
		}
	}
	par.For(resamples, workers, func(w, b int) {
		if ctx.Err() != nil {
			return
		}
		rng := rand.New(rand.NewPCG(seed, uint64(b)))
		idx := scratch[w]
		for k, n := range sizes {
			for i := range idx[k] {
				idx[k][i] = rng.IntN(n)
			}
		}
		stat(w, b, idx)
	})
	return ctx.Err()
}
