package rank_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/crosscluster/crosscluster/internal/rank"
	"github.com/crosscluster/crosscluster/stats"
)

// TestAUCSorted: on tied, per-class sorted scores AUCSorted equals
// stats.AUC to the last bit (both count pairs exactly), on both sides of
// the radix sort's threshold; an empty class gives NaN.
func TestAUCSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{2, 9, 500, 3 * 4096} {
		scores := make([]float64, n)
		pos := make([]bool, n)
		for i := range scores {
			scores[i] = float64(rng.IntN(n/2+1)) / 7 // many ties
			pos[i] = rng.IntN(3) == 0
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
			t.Errorf("n=%d: AUCSorted %v, AUC %v", n, got, want)
		}
	}
	if got := rank.AUCSorted(nil, []float64{1}); !math.IsNaN(got) {
		t.Errorf("one class: %v, want NaN", got)
	}
	if got := rank.AUCSorted(nil, nil); !math.IsNaN(got) {
		t.Errorf("empty: %v, want NaN", got)
	}
}
