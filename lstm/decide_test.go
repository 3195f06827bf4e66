package lstm

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestDecideNaNIsUndecided(t *testing.T) {
	m := New(Architecture{Inputs: 3, Hidden: 4, Layers: 1}, rand.New(rand.NewPCG(1, 2)))
	seq := [][]float64{{1, 0, 0}, {0, math.NaN(), 0}}
	d, p := m.Decide(seq, 0.5)
	if !math.IsNaN(p) || d != Undecided {
		t.Fatalf("Decide with NaN input = %v, %v; want undecided, NaN", d, p)
	}
	seq[1][1] = 1
	d, p = m.Decide(seq, 0.5)
	if math.IsNaN(p) || d == Undecided {
		t.Fatalf("Decide with finite input = %v, %v; want a decision", d, p)
	}
	if want := map[bool]Decision{true: Release, false: Remove}[p >= 0.5]; d != want {
		t.Fatalf("Decide = %v at p=%v, want %v", d, p, want)
	}
	if got := Undecided.String(); got != "undecided" {
		t.Fatalf("Undecided.String() = %q", got)
	}
}
