package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFloatSorter: the radix sort gives slices.Sort's order on values with
// infinities, ties, zeros of both signs, integers (whose low digits are all
// equal, so passes are skipped) and magnitudes from 1e-10 to 1e10, on both
// sides of radixMin, reusing one sorter.
func TestFloatSorter(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var s FloatSorter
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
				t.Errorf("n=%d %s: FloatSorter differs from slices.Sort", n, kind)
			}
		}
	}
}

// TestAUCSorted: on tied, per-class sorted scores AUCSorted equals AUC to
// the last bit (both count pairs exactly).
func TestAUCSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{2, 9, 500, 3 * radixMin} {
		scores := make([]float64, n)
		pos := make([]bool, n)
		for i := range scores {
			scores[i] = float64(rng.IntN(n/2+1)) / 7 // many ties
			pos[i] = rng.IntN(3) == 0
		}
		pos[0], pos[1] = true, false
		want, err := AUC(scores, pos, nil)
		if err != nil {
			t.Fatal(err)
		}
		var neg, p []float64
		for i, v := range scores {
			if pos[i] {
				p = append(p, v)
			} else {
				neg = append(neg, v)
			}
		}
		slices.Sort(neg)
		slices.Sort(p)
		got, err := AUCSorted(neg, p)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("n=%d: AUCSorted %v, AUC %v", n, got, want)
		}
	}
	if _, err := AUCSorted(nil, []float64{1}); err == nil {
		t.Error("one class: no error")
	}
	if _, err := AUCSorted(nil, nil); err == nil {
		t.Error("empty: no error")
	}
}

// TestFloatKey checks the order-preserving key map and its inverse on the
// float64 landmarks: keys must order as the floats do (with -0 just before
// +0) and map back to the same bits.
func TestFloatKey(t *testing.T) {
	fs := []float64{math.Inf(-1), -math.MaxFloat64, -3.7, -1, -1e-300, -5e-324, math.Copysign(0, -1), 0,
		5e-324, 1e-300, 1, 2.5, math.MaxFloat64, math.Inf(1)}
	for i, f := range fs {
		k := floatKey(f)
		if back := keyFloat(k); math.Float64bits(back) != math.Float64bits(f) {
			t.Errorf("keyFloat(floatKey(%v)) = %v", f, back)
		}
		if i > 0 && floatKey(fs[i-1]) >= k {
			t.Errorf("floatKey(%v) = %#x not above floatKey(%v) = %#x", f, k, fs[i-1], floatKey(fs[i-1]))
		}
	}
}
