package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestStandardizerColumnMajor: FitStandardizer on column-major data
// (m.T()), whose sums run three columns side by side, must give exactly
// the row-major results, with NaN, ±Inf and column counts that leave
// incomplete groups, and the same errors.
func TestStandardizerColumnMajor(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []int{1, 2, 3, 4, 5, 6, 7, 9} {
		for _, r := range []int{1, 2, 10, 1000} {
			for _, bad := range []float64{0, math.NaN(), math.Inf(1)} {
				name := strconv.Itoa(c) + "x" + strconv.Itoa(r) + "/" + strconv.FormatFloat(bad, 'g', -1, 64)
				t.Run(name, func(t *testing.T) {
					m := mat.NewDense(c, r, nil)
					for j := range c {
						for i := range r {
							m.Set(j, i, rng.NormFloat64()*1e3+float64(j)*1e6)
						}
					}
					if bad != 0 {
						m.Set(c/2, r/2, bad)
					}
					got, errGot := FitStandardizer(m.T())
					want, errWant := FitStandardizer(mat.DenseCopyOf(m.T()))
					if (errGot == nil) != (errWant == nil) || (errGot != nil && errGot.Error() != errWant.Error()) {
						t.Fatalf("error %v, row-major %v", errGot, errWant)
					}
					if errGot != nil {
						if !errors.Is(errGot, ErrNaN) && !errors.Is(errGot, ErrEmpty) {
							t.Errorf("error %v wraps neither ErrNaN nor ErrEmpty", errGot)
						}
						return
					}
					for j := range c {
						if got.Mean[j] != want.Mean[j] || got.Scale[j] != want.Scale[j] {
							t.Errorf("column %d: mean %v scale %v, row-major %v %v", j, got.Mean[j], got.Scale[j], want.Mean[j], want.Scale[j])
						}
					}
				})
			}
		}
	}
}
