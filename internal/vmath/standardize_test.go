package vmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestStandardize: the kernel gives the Go expression (x − c)/s bit for
// bit, at every length mod 16, on values with NaN, ±Inf, ±0, subnormals
// and overflowing quotients, and works in place.
func TestStandardize(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 5e-324, -1e-310, math.MaxFloat64, -math.MaxFloat64}
	for _, n := range []int{0, 1, 3, 15, 16, 17, 31, 32, 33, 47, 1000} {
		for _, cs := range [][2]float64{{0, 1}, {3.25, 0.7}, {-1e300, 1e-300}, {1e10, 3}} {
			x := make([]float64, n)
			for i := range x {
				x[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
				if rng.IntN(10) == 0 {
					x[i] = special[rng.IntN(len(special))]
				}
			}
			got := make([]float64, n)
			Standardize(got, x, cs[0], cs[1])
			inPlace := append([]float64(nil), x...)
			Standardize(inPlace, inPlace, cs[0], cs[1])
			for i, v := range x {
				want := (v - cs[0]) / cs[1]
				if math.Float64bits(got[i]) != math.Float64bits(want) && !(math.IsNaN(got[i]) && math.IsNaN(want)) {
					t.Fatalf("n=%d (x−%v)/%v at %d: %v, want %v", n, cs[0], cs[1], i, got[i], want)
				}
				if math.Float64bits(inPlace[i]) != math.Float64bits(got[i]) && !(math.IsNaN(got[i]) && math.IsNaN(inPlace[i])) {
					t.Fatalf("n=%d in place at %d: %v, want %v", n, i, inPlace[i], got[i])
				}
			}
		}
	}
}
