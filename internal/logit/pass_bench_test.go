package logit

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/crosscluster/crosscluster/internal/cputime"
	"gonum.org/v1/gonum/mat"
)

// BenchmarkPass times one pass of the solver over 10^6 rows × 6 raw
// columns, standardised as they are read (Config.Center and Scale, as
// overlap.Fit calls it), with the probabilities written: gradient only and
// gradient with Hessian, in wall and CPU time (cpu-ns/op, the figure to
// compare on a loaded machine). The data (48 MB) do not fit in the caches, so the
// pass also measures how well the next block's reads overlap the current
// block's arithmetic (see blockCols).
func BenchmarkPass(b *testing.B) {
	const n, p = 1_000_000, 6
	rng := rand.New(rand.NewPCG(1, 2))
	raw := make([]float64, n*p)
	for i := range raw {
		raw[i] = rng.NormFloat64()*3 + 1
	}
	y := make([]int, n)
	for i := range y {
		y[i] = rng.IntN(2)
	}
	center, scale := make([]float64, p), make([]float64, p)
	for j := range p {
		center[j], scale[j] = 1, 3
	}
	f, err := newLogisticProblem(mat.NewDense(p, n, raw).T(), y, Config{C: 1, Finite: true, Center: center, Scale: scale})
	if err != nil {
		b.Fatal(err)
	}
	f.proba = make([]float64, n)
	beta := make([]float64, p+1)
	for j := range beta {
		beta[j] = 0.1 * float64(j)
	}
	for _, mode := range []struct {
		name string
		mode int
	}{{"grad", evalGrad}, {"hess", evalGradHess}} {
		b.Run(fmt.Sprintf("%s/n=1e6", mode.name), func(b *testing.B) {
			cpu0, ok := cputime.Self()
			for b.Loop() {
				f.evaluateMode(beta, mode.mode)
			}
			if cpu1, ok1 := cputime.Self(); ok && ok1 {
				b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
