package vmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// vmathTol bounds the vector sigmoid and tanh against package math: both
// are bounded by 1 in magnitude, and the vector exp is within a few ulps,
// so a few times 1e-16 absolute; 1e-14 leaves margin.
const vmathTol = 1e-14

func TestVectorActivations(t *testing.T) {
	rnd := rand.New(rand.NewPCG(4, 4))
	x := []float64{0, -0, 1e-300, -1e-12, 0.5, -0.5, 1, -1, 20, -20, 36, -36, 300, -300, 710, -710, 1e6, -1e6, math.Inf(1), math.Inf(-1), math.NaN(), 2, 3, 4}
	for range 1000 {
		x = append(x, 40*rnd.NormFloat64(), rnd.NormFloat64())
	}
	x = append(x, 0.3) // a tail that is not a multiple of 4
	s := append([]float64(nil), x...)
	th := append([]float64(nil), x...)
	if !useFMA {
		t.Log("no AVX2/FMA: testing the Go fallback only")
	}
	Sigmoid(s)
	Tanh(th)
	for i, v := range x {
		if math.IsNaN(v) {
			if !math.IsNaN(s[i]) || !math.IsNaN(th[i]) {
				t.Errorf("NaN in: sigmoid %v, tanh %v", s[i], th[i])
			}
			continue
		}
		if d := math.Abs(s[i] - sigmoid(v)); !(d <= vmathTol) {
			t.Errorf("sigmoid(%v) = %v, want %v", v, s[i], sigmoid(v))
		}
		if d := math.Abs(th[i] - math.Tanh(v)); !(d <= vmathTol) {
			t.Errorf("tanh(%v) = %v, want %v", v, th[i], math.Tanh(v))
		}
	}
}

// TestSigmoidRelative: for arguments down to -700 the vector sigmoid is
// within a few ulps relative, not only absolute, so that small
// probabilities (a logistic regression's gradient terms) keep their
// digits.
func TestSigmoidRelative(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 5))
	x := make([]float64, 4000)
	for i := range x {
		x[i] = -700 * rnd.Float64()
		if i%3 == 0 {
			x[i] = 40 * rnd.NormFloat64()
		}
	}
	s := append([]float64(nil), x...)
	Sigmoid(s)
	for i, v := range x {
		want := sigmoid(v)
		if d := math.Abs(s[i]-want) / want; !(d <= 8e-16) {
			t.Errorf("sigmoid(%v) = %v, want %v (relative error %.2g)", v, s[i], want, d)
		}
	}
}

// TestSamePositionIndependent: an input gives the same output at every
// position of a slice, tails included, so that equal scores stay tied.
func TestSamePositionIndependent(t *testing.T) {
	for _, v := range []float64{-3.7, 0.25, 12, -700} {
		for n := 1; n <= 9; n++ {
			s := make([]float64, n)
			th := make([]float64, n)
			for i := range s {
				s[i], th[i] = v, v
			}
			Sigmoid(s)
			Tanh(th)
			for i := range s {
				if s[i] != s[0] || th[i] != th[0] {
					t.Fatalf("v=%v n=%d: position %d gives %v %v, position 0 %v %v", v, n, i, s[i], th[i], s[0], th[0])
				}
			}
		}
	}
}

// TestNoAllocs: the padded tail stays on the stack (lstm calls these in
// its inner loops).
func TestNoAllocs(t *testing.T) {
	x := make([]float64, 7)
	if a := testing.AllocsPerRun(100, func() { Sigmoid(x); Tanh(x) }); a != 0 {
		t.Fatalf("%v allocations per call", a)
	}
}
