package lstm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// predictorTol bounds the float32 Predictor against the float64 Model:
// float32 rounding (6e-8 relative) through a few dozen dependent operations
// per step and ten steps, on probabilities of order 1.
const predictorTol = 2e-6

func TestPredictor(t *testing.T) {
	rnd := rand.New(rand.NewPCG(12, 12))
	for _, tc := range []struct{ I, H, L, n, T int }{
		{460, 64, 2, 300, 10}, // published sizes, a batch and a remainder
		{7, 5, 1, 6, 4},       // sizes off the kernels' blocks
		{3, 17, 3, 1, 2},
	} {
		t.Run(fmt.Sprintf("I=%d/H=%d/L=%d/n=%d", tc.I, tc.H, tc.L, tc.n), func(t *testing.T) {
			m := New(Architecture{Inputs: tc.I, Hidden: tc.H, Layers: tc.L}, rnd)
			d := randomData(rnd, tc.n, tc.T, tc.I)
			want, err := m.Probabilities(d.X)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.Predictor().Probabilities(d.X)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, predictorTol)); diff != "" {
				t.Errorf("float32 vs float64 (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVectorActivations32(t *testing.T) {
	rnd := rand.New(rand.NewPCG(4, 4))
	x := []float32{0, 1e-30, 0.5, -0.5, 1, -1, 9, -9, 20, -20, 88, -88, 200, -200, float32(math.Inf(1)), float32(math.Inf(-1))}
	for range 1000 {
		x = append(x, float32(20*rnd.NormFloat64()), float32(rnd.NormFloat64()))
	}
	x = append(x, 0.25, 0.75, 1.5)
	s := append([]float32(nil), x...)
	th := append([]float32(nil), x...)
	sigmoid32(s)
	tanh32(th)
	// float32 activations: a few float32 ulps of values bounded by 1.
	const tol = 1e-6
	for i, v := range x {
		if d := math.Abs(float64(s[i]) - sigmoid(float64(v))); !(d <= tol) {
			t.Errorf("sigmoid32(%v) = %v, want %v", v, s[i], sigmoid(float64(v)))
		}
		if d := math.Abs(float64(th[i]) - math.Tanh(float64(v))); !(d <= tol) {
			t.Errorf("tanh32(%v) = %v, want %v", v, th[i], math.Tanh(float64(v)))
		}
	}
}
