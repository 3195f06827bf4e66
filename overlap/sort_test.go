package overlap

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/crosscluster/crosscluster/stats"
)

// TestSortMerge: stats.FloatSorter then mergeSorted, as sortDomain
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
		// Interleaved inputs: each value to one side at random.
		a, b = a[:0], b[:0]
		for _, v := range want {
			if rng.IntN(2) == 0 {
				a = append(a, v)
			} else {
				b = append(b, v)
			}
		}
		got := mergeSorted(make([]float64, n), a, b)
		if !slices.Equal(got, want) {
			t.Errorf("n=%d: interleaved merge differs", n)
		}
		// Bit for bit a stable merge (a's first on ties, which tells -0
		// from +0), for every split of the input.
		if ref := stableMerge(a, b); !slices.EqualFunc(got, ref, func(x, y float64) bool {
			return math.Float64bits(x) == math.Float64bits(y)
		}) {
			t.Errorf("n=%d: merge not bit for bit the stable merge", n)
		}
		for _, cut := range []int{0, 1, len(want) / 3, len(want) - 1, len(want)} {
			if cut < 0 || cut > len(want) {
				continue
			}
			a, b := want[:cut], want[cut:]
			for _, ab := range [][2][]float64{{a, b}, {b, a}} {
				got := mergeSorted(make([]float64, n), ab[0], ab[1])
				if ref := stableMerge(ab[0], ab[1]); !slices.EqualFunc(got, ref, func(x, y float64) bool {
					return math.Float64bits(x) == math.Float64bits(y)
				}) {
					t.Errorf("n=%d cut=%d: merge not bit for bit the stable merge", n, cut)
				}
			}
		}
	}
}

// stableMerge is the plain two-finger merge, a's first on ties.
func stableMerge(a, b []float64) []float64 {
	out := make([]float64, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if b[j] < a[i] {
			out = append(out, b[j])
			j++
		} else {
			out = append(out, a[i])
			i++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}
