package vmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAxpyDot: Axpy equals math.FMA and Mul the product element by
// element, and Dot equals its Go definition (dotGo plus the fused tail)
// bit for bit, at every length around the kernels' block of 16, and is
// close to plain arithmetic.
func TestAxpyDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for n := 0; n <= 70; n++ {
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i], y[i] = rng.NormFloat64()*1e3, rng.NormFloat64()
		}
		a := rng.NormFloat64()
		got := append([]float64(nil), y...)
		Axpy(a, x, got)
		for i := range got {
			if want := math.FMA(a, x[i], y[i]); got[i] != want {
				t.Fatalf("n=%d: Axpy[%d] = %v, math.FMA %v", n, i, got[i], want)
			}
		}
		prod := make([]float64, n)
		Mul(prod, x, y)
		for i := range prod {
			if prod[i] != x[i]*y[i] {
				t.Fatalf("n=%d: Mul[%d] = %v, want %v", n, i, prod[i], x[i]*y[i])
			}
		}
		m := n &^ 15
		want := dotGo(x[:m], y[:m])
		var plain float64
		for i := range x {
			plain += x[i] * y[i]
			if i >= m {
				want = math.FMA(x[i], y[i], want)
			}
		}
		d := Dot(x, y)
		if d != want {
			t.Fatalf("n=%d: Dot %v, Go definition %v", n, d, want)
		}
		if math.Abs(d-plain) > 1e-9*(1+math.Abs(plain)) {
			t.Fatalf("n=%d: Dot %v, plain sum %v", n, d, plain)
		}
	}
}
