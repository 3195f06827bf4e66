package rank_test

import (
	"math/rand/v2"
	"testing"

	"github.com/crosscluster/crosscluster/internal/cputime"
	"github.com/crosscluster/crosscluster/internal/rank"
	"github.com/crosscluster/crosscluster/internal/synth"
)

// BenchmarkGroupsCompare times one feature's two comparisons (all rows and
// in-band rows, four groups) at 10^6 values of the overlap benchmark's
// shapes: the continuous normal feature and the tied runtime_sec, ncores
// and runtime_fraction (a spike at exactly 1 beside the timeouts above
// it). It also reports the process's CPU time per call (cpu-ms/op),
// steadier than wall time on a shared machine.
func BenchmarkGroupsCompare(b *testing.B) {
	const n = 1_000_000
	for _, c := range []struct {
		name, shape string
		col         int
	}{{"continuous", "continuous", 0}, {"tied-runtime", "tied", 3}, {"tied-ncores", "tied", 0}, {"tied-fraction", "tied", 5}} {
		b.Run(c.name, func(b *testing.B) {
			x, y, names, err := synth.OverlapBench(c.shape, n, 20260101)
			if err != nil {
				b.Fatal(err)
			}
			d := len(names)
			v := make([]float64, n)
			g := make([]uint8, n)
			rng := rand.New(rand.NewPCG(1, 2))
			for i := range v {
				v[i] = x[i*d+c.col]
				g[i] = uint8(2*y[i] + rng.IntN(2)) // about half in band
			}
			pairs := []rank.GroupPair{{X: 0b0011, Y: 0b1100}, {X: 0b0010, Y: 0b1000}}
			var gr rank.Groups
			b.ReportAllocs()
			c0, _ := cputime.Self()
			calls := 0
			for b.Loop() {
				if _, err := gr.Compare(v, g, pairs, rank.TwoSided, rank.Auto); err != nil {
					b.Fatal(err)
				}
				calls++
			}
			if c1, ok := cputime.Self(); ok {
				b.ReportMetric(float64(c1-c0)/1e6/float64(calls), "cpu-ms/op")
			}
		})
	}
}
