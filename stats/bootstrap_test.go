package stats

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestBootstrapDraws checks the documented resampling scheme (PCG seeded
// (seed, b), strata in order) and that the draws do not depend on workers.
func TestBootstrapDraws(t *testing.T) {
	sizes := []int{5, 0, 3}
	const B, seed = 9, 42
	want := make([][]int, B)
	for b := range want {
		rng := rand.New(rand.NewPCG(seed, uint64(b)))
		for _, n := range sizes {
			for range n {
				want[b] = append(want[b], rng.IntN(n))
			}
		}
	}
	for _, workers := range []int{1, 2, 4, 16} {
		got := make([][]int, B)
		err := Bootstrap(context.Background(), sizes, B, workers, seed, func(w, b int, idx [][]int) {
			if w < 0 || w >= workers {
				t.Errorf("worker %d of %d", w, workers)
			}
			got[b] = slices.Concat(idx...)
		})
		if err != nil {
			t.Fatal(err)
		}
		for b := range want {
			if !slices.Equal(want[b], got[b]) {
				t.Errorf("workers %d, resample %d: %v, want %v", workers, b, got[b], want[b])
			}
		}
	}
}

func TestBootstrapCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := Bootstrap(ctx, []int{3}, 100, 1, 1, func(_, b int, _ [][]int) {
		calls++
		if b == 4 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || calls != 5 {
		t.Errorf("err %v after %d calls, want context.Canceled after 5", err, calls)
	}
}
