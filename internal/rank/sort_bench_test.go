package rank_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/crosscluster/crosscluster/internal/rank"
)

// BenchmarkSorter sorts 500,000 values (one domain's propensities at
// 10^6 jobs) of several shapes: propensities, normal, log-normal (a wide
// range of exponents), integers stored as floats, and values within a
// relative 1e-9 of each other (every key equal in its top digits, so the
// low passes run).
func BenchmarkSorter(b *testing.B) {
	const n = 500_000
	for _, g := range []struct {
		name string
		f    func(r *rand.Rand) float64
	}{
		{"propensity", func(r *rand.Rand) float64 { return 1 / (1 + math.Exp(-r.NormFloat64())) }},
		{"normal", func(r *rand.Rand) float64 { return r.NormFloat64() }},
		{"lognormal", func(r *rand.Rand) float64 { return math.Exp(3 * r.NormFloat64()) }},
		{"integers", func(r *rand.Rand) float64 { return float64(r.IntN(100_000)) }},
		{"clustered", func(r *rand.Rand) float64 { return 1e6 + r.NormFloat64()*1e-3 }},
	} {
		rng := rand.New(rand.NewPCG(1, 2))
		src := make([]float64, n)
		for i := range src {
			src[i] = g.f(rng)
		}
		x := make([]float64, n)
		var s rank.Sorter
		s.SetScratch(make([]float64, n))
		b.Run(g.name, func(b *testing.B) {
			for b.Loop() {
				copy(x, src)
				s.Sort(x)
			}
		})
	}
}
