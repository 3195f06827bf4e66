package rank

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSorter: the radix sort gives slices.Sort's order on values with
// infinities, ties, zeros of both signs, integers (whose low digits are all
// equal, so passes are skipped) and magnitudes from 1e-10 to 1e10, on both
// sides of radixMin, reusing one sorter.
func TestSorter(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var s Sorter
	for _, n := range []int{0, 1, 7, radixMin - 1, radixMin, 3*radixMin + 5, 100000} {
		for _, kind := range []string{"mixed", "integers"} {
			x := make([]float64, n)
			for i := range x {
				switch {
				case kind == "integers":
					x[i] = float64(rng.IntN(64))
				case i%8 == 0:
					x[i] = math.Inf(2*rng.IntN(2) - 1)
				case i%8 == 1:
					x[i] = float64(rng.IntN(5)) // ties
				case i%8 == 2:
					x[i] = -float64(rng.IntN(3)) // includes -0
				default:
					x[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10))
				}
			}
			want := slices.Clone(x)
			slices.Sort(want)
			s.Sort(x)
			if !slices.Equal(want, x) {
				t.Errorf("n=%d %s: Sorter differs from slices.Sort", n, kind)
			}
		}
	}
}

// TestSorterRuns: inputs that leave runs of keys agreeing in the top
// digits Sort orders first, which it then orders by the low digits: values
// within a relative 1e-9 of each other (one long run, the low passes),
// clusters of such values (runs of every length, by insertion and by
// slices.Sort), propensity-like values in (0, 1), and ties within runs.
func TestSorterRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	var s Sorter
	for _, n := range []int{radixMin, 50000, 300000} {
		for _, kind := range []string{"narrow", "clusters", "propensities", "tied runs"} {
			x := make([]float64, n)
			centres := []float64{-3, 0.25, 1, 7e5}
			for i := range x {
				switch kind {
				case "narrow":
					x[i] = 1 + 1e-9*rng.Float64()
				case "clusters":
					c := centres[rng.IntN(len(centres))]
					x[i] = c * (1 + math.Pow(2, -float64(20+rng.IntN(20)))*rng.Float64())
				case "propensities":
					x[i] = 1 / (1 + math.Exp(-2*rng.NormFloat64()))
				case "tied runs":
					x[i] = 2 + math.Pow(2, -40)*float64(rng.IntN(100))
				}
			}
			want := slices.Clone(x)
			slices.Sort(want)
			s.Sort(x)
			if !slices.Equal(want, x) {
				t.Errorf("n=%d %s: Sorter differs from slices.Sort", n, kind)
			}
		}
	}
}

// TestFloatKey checks the order-preserving key map and its inverse on the
// float64 landmarks: keys must order as the floats do (with -0 just before
// +0) and map back to the same bits.
func TestFloatKey(t *testing.T) {
	fs := []float64{math.Inf(-1), -math.MaxFloat64, -3.7, -1, -1e-300, -5e-324, math.Copysign(0, -1), 0,
		5e-324, 1e-300, 1, 2.5, math.MaxFloat64, math.Inf(1)}
	for i, f := range fs {
		k := Key(f)
		if back := KeyFloat(k); math.Float64bits(back) != math.Float64bits(f) {
			t.Errorf("KeyFloat(Key(%v)) = %v", f, back)
		}
		if i > 0 && Key(fs[i-1]) >= k {
			t.Errorf("Key(%v) = %#x not above Key(%v) = %#x", f, k, fs[i-1], Key(fs[i-1]))
		}
	}
}
