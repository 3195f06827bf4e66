package overlap

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/crosscluster/crosscluster/stats"
)

// TestSMDVRMatchesStats: Fit's fused balance computation must give exactly
// stats.SMD and stats.VarianceRatio (the results are documented as theirs).
func TestSMDVRMatchesStats(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func(n int, loc, scale float64, integer bool) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = loc + scale*rng.NormFloat64()
			if integer {
				x[i] = math.Round(x[i])
			}
		}
		return x
	}
	cases := []struct {
		name string
		x, y []float64
	}{
		{"empty", nil, []float64{1, 2}},
		{"one", []float64{1}, []float64{1, 2, 3}},
		{"two", []float64{1, 2}, []float64{4, 7}},
		{"constant both", []float64{3, 3, 3}, []float64{3, 3}},
		{"constant y", []float64{1, 2, 3}, []float64{3, 3}},
		{"equal means", []float64{1, 3}, []float64{0, 4}},
		{"normal", draw(1000, 0.3, 2, false), draw(777, 0, 1, false)},
		{"large offset", draw(5000, 1e9, 1, false), draw(3000, 1e9+0.5, 3, false)},
		{"integers", draw(4096, 4, 3, true), draw(2049, 5, 2, true)},
	}
	same := func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			smd, vr := smdVR(c.x, c.y)
			if want := stats.SMD(c.x, c.y); !same(smd, want) {
				t.Errorf("SMD %v, stats.SMD %v", smd, want)
			}
			if want := stats.VarianceRatio(c.x, c.y); !same(vr, want) {
				t.Errorf("variance ratio %v, stats.VarianceRatio %v", vr, want)
			}
		})
	}
}
