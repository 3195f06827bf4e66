package lstm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// kernelTol bounds the difference between the FMA kernels and the Go loops:
// FMA rounds once per multiply-add instead of twice, a relative 1e-16 per
// term over at most a few hundred terms of order 1.
const kernelTol = 1e-12

// TestGemmAcc checks gemmAcc (assembly where available) against a naive
// triple loop, for sizes that exercise the 4×8 and 1×32 blocks and the
// edges the Go loops handle.
func TestGemmAcc(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 3))
	for _, sz := range [][3]int{{1, 1, 1}, {4, 8, 3}, {5, 9, 7}, {1, 32, 4}, {3, 70, 5}, {8, 256, 64}, {7, 33, 0}} {
		R, C, n := sz[0], sz[1], sz[2]
		for _, layout := range []string{"rows", "cols"} {
			t.Run(fmt.Sprintf("R=%d/C=%d/n=%d/%s", R, C, n, layout), func(t *testing.T) {
				cRow, cStep := n, 1
				if layout == "cols" {
					cRow, cStep = 1, R
				}
				c := randSlice(rnd, R*max(n, 1))
				w := randSlice(rnd, max(n, 1)*C+3)
				d := randSlice(rnd, R*C+2)
				want := append([]float64(nil), d...)
				for r := range R {
					for j := range C {
						for p := range n {
							want[r*C+j] += c[r*cRow+p*cStep] * w[p*C+j]
						}
					}
				}
				gemmAcc(R, C, n, c, cRow, cStep, w, C, d, C)
				for i := range want {
					if math.Abs(want[i]-d[i]) > kernelTol {
						t.Fatalf("element %d: got %v, want %v", i, d[i], want[i])
					}
				}
			})
		}
	}
}

func randSlice(rnd *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = 2*rnd.Float64() - 1
	}
	return s
}
