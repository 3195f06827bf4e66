package rank_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/crosscluster/crosscluster/internal/rank"
	"github.com/crosscluster/crosscluster/stats"
)

// TestAUCSorted: on per-class sorted scores AUCSorted equals stats.AUC
// to the last bit (both count pairs exactly): with many ties, on
// continuous interleaved classes, and with ±0 (equal), ±Inf and runs of
// one class longer than the other's, on both sides of the radix sort's
// threshold; an empty class gives NaN.
func TestAUCSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for kind := range 3 {
		for _, n := range []int{2, 9, 500, 3 * 4096} {
			scores := make([]float64, n)
			pos := make([]bool, n)
			for i := range scores {
				pos[i] = rng.IntN(3) == 0
				switch kind {
				case 0: // many ties
					scores[i] = float64(rng.IntN(n/2+1)) / 7
				case 1: // continuous, the classes interleaved
					scores[i] = rng.NormFloat64()
					if pos[i] {
						scores[i] += 0.3
					}
				case 2: // signed zeros, infinities, and long one-class runs
					scores[i] = []float64{math.Copysign(0, -1), 0, math.Inf(1), math.Inf(-1), 1, -1}[rng.IntN(6)]
					if i < n/4 {
						scores[i], pos[i] = float64(i), true
					}
				}
			}
			pos[0], pos[1] = true, false
			want, err := stats.AUC(scores, pos, nil)
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
			if got := rank.AUCSorted(neg, p); got != want {
				t.Errorf("kind %d n=%d: AUCSorted %v, AUC %v", kind, n, got, want)
			}
		}
	}
	if got := rank.AUCSorted(nil, []float64{1}); !math.IsNaN(got) {
		t.Errorf("one class: %v, want NaN", got)
	}
	if got := rank.AUCSorted(nil, nil); !math.IsNaN(got) {
		t.Errorf("empty: %v, want NaN", got)
	}
}

// BenchmarkAUCSorted: 500,000 scores per class, propensity-like and
// overlapping (the classes interleave throughout), as overlap.Fit's AUC
// meets them at 10^6 jobs.
func BenchmarkAUCSorted(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 500_000
	neg, pos := make([]float64, n), make([]float64, n)
	for i := range neg {
		neg[i] = 1 / (1 + math.Exp(-rng.NormFloat64()))
		pos[i] = 1 / (1 + math.Exp(-rng.NormFloat64()-0.5))
	}
	slices.Sort(neg)
	slices.Sort(pos)
	for b.Loop() {
		rank.AUCSorted(neg, pos)
	}
}
