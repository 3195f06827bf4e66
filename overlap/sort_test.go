package overlap

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/crosscluster/crosscluster/stats"
)

// TestSortMerge: stats.FloatSorter then mergeSorted, as compareFeature
// uses them, give slices.Sort's order on values with infinities, ties,
// negative zeros and magnitudes from 1e-10 to 1e10.
func TestSortMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var sorter stats.FloatSorter
	for _, n := range []int{0, 1, 7, 255, 256, 1000, 5000, 20000} {
		x := make([]float64, n)
		for i := range x {
			switch rng.IntN(8) {
			case 0:
				x[i] = math.Inf(2*rng.IntN(2) - 1)
			case 1:
				x[i] = float64(rng.IntN(5)) // ties
			case 2:
				x[i] = -float64(rng.IntN(3))
			default:
				x[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10))
			}
		}
		want := slices.Clone(x)
		slices.Sort(want)
		sorter.Sort(x)
		if !slices.Equal(want, x) {
			t.Errorf("n=%d: FloatSorter differs from slices.Sort", n)
		}
		half := n / 2
		a, b := slices.Clone(want[:half]), slices.Clone(want[half:])
		rng.Shuffle(len(want), func(i, j int) { want[i], want[j] = want[j], want[i] })
		slices.Sort(want)
		if got := mergeSorted(make([]float64, n), b, a); !slices.Equal(got, want) {
			t.Errorf("n=%d: merge differs", n)
		}
	}
}
