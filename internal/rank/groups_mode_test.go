package rank

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGroupsDistinctMode: a column whose sample repeats almost no value
// is counted without the slots' last values (ksBuckets.distinct), the
// others with them, and both give stats.KS2Samp's results (here the
// package's TwoSample on the split samples): continuous values,
// continuous values with a rare repeated value (0.2% copies, near the
// groups' largest difference), values rounded to 1e-3 (repeats), and
// small integers.
func TestGroupsDistinctMode(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const n = 200_000
	for _, c := range []struct {
		name     string
		value    func(g uint8) float64
		distinct bool
	}{
		{"continuous", func(g uint8) float64 { return rng.NormFloat64() + 0.1*float64(g) }, true},
		{"rare repeat", func(g uint8) float64 {
			if rng.IntN(500) == 0 {
				return 0.05
			}
			return rng.NormFloat64() + 0.1*float64(g)
		}, true},
		{"rounded", func(g uint8) float64 { return math.Round(1000*(rng.NormFloat64()+0.1*float64(g))) / 1000 }, false},
		{"integers", func(g uint8) float64 { return float64(rng.IntN(20) + int(g)) }, false},
	} {
		v := make([]float64, n)
		group := make([]uint8, n)
		for i := range v {
			group[i] = uint8(rng.IntN(4))
			v[i] = c.value(group[i])
		}
		pairs := []GroupPair{{X: 0b0011, Y: 0b1100}, {X: 0b0010, Y: 0b1000}}
		var g Groups
		got, err := g.Compare(v, group, pairs, TwoSided, Auto)
		if err != nil {
			t.Fatal(err)
		}
		if g.b.distinct != c.distinct {
			t.Errorf("%s: distinct %v, want %v", c.name, g.b.distinct, c.distinct)
		}
		for p, pr := range pairs {
			var x, y []float64
			for i, val := range v {
				if pr.X>>group[i]&1 != 0 {
					x = append(x, val)
				}
				if pr.Y>>group[i]&1 != 0 {
					y = append(y, val)
				}
			}
			want := TwoSample(SortedKeys(x), SortedKeys(y), TwoSided, Auto)
			if got[p] != want {
				t.Errorf("%s pair %d: %+v, want %+v", c.name, p, got[p], want)
			}
		}
	}
}
