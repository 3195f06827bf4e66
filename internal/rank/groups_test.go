package rank_test

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/crosscluster/crosscluster/internal/rank"
	"github.com/crosscluster/crosscluster/stats"
)

// splitGroups returns the values of v whose group is in mask, in order.
func splitGroups(v []float64, group []uint8, mask uint8) []float64 {
	var out []float64
	for i, x := range v {
		if mask>>group[i]&1 != 0 {
			out = append(out, x)
		}
	}
	return out
}

// sameKS reports whether a Groups result and a stats.KS2Samp result agree
// exactly (NaN equal to NaN, -0 equal to +0 in the location, which KS2Samp
// maps to +0 too).
func sameKS(a rank.Result, b stats.KSResult) bool {
	eq := func(x, y float64) bool { return x == y || (math.IsNaN(x) && math.IsNaN(y)) }
	return eq(a.Statistic, b.Statistic) && eq(a.PValue, b.PValue) && eq(a.Location, b.Location) &&
		a.Sign == b.Sign && int(a.Method) == int(b.Method)
}

// compareFresh is Compare with a new Groups.
func compareFresh(v []float64, group []uint8, pairs []rank.GroupPair, alt rank.Alternative) ([]rank.Result, error) {
	var g rank.Groups
	return g.Compare(v, group, pairs, alt, rank.Auto)
}

// groupColumn draws n values of one of several kinds, with group labels
// below ng; the groups' distributions differ by a shift so that the
// extremes fall in the middle of the data.
func groupColumn(rng *rand.Rand, kind, n, ng int) ([]float64, []uint8) {
	v := make([]float64, n)
	g := make([]uint8, n)
	for i := range v {
		g[i] = uint8(rng.IntN(ng))
		shift := float64(g[i]) * 0.3
		switch kind {
		case 0: // continuous
			v[i] = rng.NormFloat64() + shift
		case 1: // few distinct integers
			v[i] = float64(rng.IntN(6) + int(g[i])%2)
		case 2: // heavy tails, both signs, zeros of both signs
			v[i] = math.Exp(3*rng.NormFloat64()) * float64(2*rng.IntN(2)-1)
			if rng.IntN(20) == 0 {
				v[i] = math.Copysign(0, float64(2*rng.IntN(2)-1))
			}
		case 3: // infinities, NaNs and a far outlier
			v[i] = rng.ExpFloat64() + shift
			switch rng.IntN(50) {
			case 0:
				v[i] = math.Inf(2*rng.IntN(2) - 1)
			case 1:
				v[i] = math.NaN()
			case 2:
				v[i] = 1e300
			}
		case 4: // identical distributions: every bucket is a candidate
			v[i] = float64(rng.IntN(1000)) / 7
		case 5: // adjacent floats repeated: heavy buckets holding two values
			v[i] = math.Nextafter(1, 2)
			switch r := rng.IntN(10); {
			case r < 4+int(g[i]%2):
				v[i] = 1
			case r == 9:
				v[i] = rng.NormFloat64()
			}
		case 6: // a spike among continuous neighbours (a fraction of exactly 1)
			v[i] = 1 - 0.02*rng.ExpFloat64()*(1+shift)
			if rng.IntN(3) == 0 {
				v[i] = 1
			}
		}
	}
	return v, g
}

// TestGroups: every pair's result equals KS2Samp on the explicitly
// split samples, on continuous, discrete, heavy-tailed, non-finite,
// identically distributed data, heavy buckets of two adjacent values and a
// spike among continuous neighbours (whose copies the gathering counts
// instead of collecting), large enough for the bucket search to matter and
// small enough to hit its edges.
func TestGroups(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 17))
	pairs := []rank.GroupPair{{X: 0b0011, Y: 0b1100}, {X: 0b0010, Y: 0b1000}, {X: 0b0001, Y: 0b0110}, {X: 0b1111, Y: 0b0001}}
	// One KSGroups serves every call, so that memory left from a larger
	// or differently shaped column must not leak into the next.
	var reused rank.Groups
	sizes := []int{1, 2, 5, 40, 300, 5000, 60000, 7, 20000}
	if testing.Short() {
		// 20,000 rows are four samples of about 5,000, which KS2Samp's
		// exact method takes (seconds per call under emulation); 2,000
		// take the same path.
		sizes[len(sizes)-1] = 2000
	}
	for _, n := range sizes {
		for kind := range 7 {
			for _, alt := range []rank.Alternative{rank.TwoSided, rank.Less, rank.Greater} {
				v, g := groupColumn(rng, kind, n, 4)
				got, err := reused.Compare(v, g, pairs, alt, rank.Auto)
				if fresh, ferr := compareFresh(v, g, pairs, alt); (ferr == nil) != (err == nil) || (err == nil && !slices.Equal(fresh, got)) {
					t.Errorf("n=%d kind=%d: reused %v %v, fresh %v %v", n, kind, got, err, fresh, ferr)
				}
				var wantErr error
				want := make([]stats.KSResult, len(pairs))
				for p, pr := range pairs {
					r, err := stats.KS2Samp(splitGroups(v, g, pr.X), splitGroups(v, g, pr.Y), stats.Alternative(alt), stats.KSAuto)
					if err != nil && wantErr == nil {
						wantErr = err
					}
					want[p] = r
				}
				if wantErr != nil {
					if !errors.Is(err, rank.ErrEmpty) {
						t.Errorf("n=%d kind=%d: error %v, KS2Samp says %v", n, kind, err, wantErr)
					}
					continue
				}
				if err != nil {
					t.Fatalf("n=%d kind=%d: %v", n, kind, err)
				}
				for p := range pairs {
					if !sameKS(got[p], want[p]) {
						t.Errorf("n=%d kind=%d alt=%v pair %d: %+v, KS2Samp %+v", n, kind, alt, p, got[p], want[p])
					}
				}
			}
		}
	}
}

// TestGroupsErrors: an empty sample is ErrEmpty naming the pair;
// all-NaN data and no pairs are handled.
func TestGroupsErrors(t *testing.T) {
	v := []float64{1, 2, math.NaN(), 4}
	g := []uint8{0, 0, 1, 0}
	if _, err := compareFresh(v, g, []rank.GroupPair{{X: 1, Y: 2}}, rank.TwoSided); !errors.Is(err, rank.ErrEmpty) {
		t.Errorf("NaN-only sample: %v, want ErrEmpty", err)
	}
	nan := []float64{math.NaN(), math.NaN()}
	if _, err := compareFresh(nan, []uint8{0, 1}, []rank.GroupPair{{X: 1, Y: 2}}, rank.TwoSided); !errors.Is(err, rank.ErrEmpty) {
		t.Errorf("all NaN: %v, want ErrEmpty", err)
	}
	if r, err := compareFresh(v, g, nil, rank.TwoSided); r != nil || err != nil {
		t.Errorf("no pairs: %v, %v", r, err)
	}
}

// FuzzGroups compares KS2SampGroups with KS2Samp on split samples
// built from arbitrary bytes (values from a small alphabet so that ties,
// zeros of both signs, infinities and NaN are common).
func FuzzGroups(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	f.Add([]byte{255, 0, 128, 64, 32, 16, 8, 4, 2, 1})
	alphabet := []float64{math.Inf(-1), -1e300, -2, -1, -0.5, math.Copysign(0, -1), 0, 1e-300, 0.5, 1, 1, 2, 3, 1e300, math.Inf(1), math.NaN()}
	f.Fuzz(func(t *testing.T, data []byte) {
		v := make([]float64, len(data))
		g := make([]uint8, len(data))
		for i, c := range data {
			v[i] = alphabet[c&15]
			g[i] = c >> 4 & 3
		}
		pairs := []rank.GroupPair{{X: 0b0011, Y: 0b1100}, {X: 0b0010, Y: 0b1000}}
		got, err := compareFresh(v, g, pairs, rank.TwoSided)
		want := make([]stats.KSResult, len(pairs))
		for p, pr := range pairs {
			var werr error
			want[p], werr = stats.KS2Samp(splitGroups(v, g, pr.X), splitGroups(v, g, pr.Y), stats.TwoSided, stats.KSAuto)
			if werr != nil {
				if !errors.Is(err, rank.ErrEmpty) {
					t.Fatalf("pair %d: error %v, KS2Samp says %v", p, err, werr)
				}
				return
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		for p := range pairs {
			if !sameKS(got[p], want[p]) {
				t.Fatalf("pair %d: %+v, KS2Samp %+v", p, got[p], want[p])
			}
		}
	})
}

// TestGroupsMoments: the moments KSGroups computes in its passes for
// both samples of every pair, with the groups interleaved and NaN among
// the values, are within a rounding bound of the exact mean and variance
// (math/big) of the split samples: 1e-13 relative (to the standard
// deviation for the mean), 1e-11 for data offset by 1e6 where
// cancellation would show; with narrow in-band-like groups beside wide
// ones, and groups too small to be sampled.
func TestGroupsMoments(t *testing.T) {
	// exact returns the mean and sample variance of x to 200 bits.
	exact := func(x []float64) (float64, float64) {
		const prec = 200
		f := func(v float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(v) }
		sum := f(0)
		for _, v := range x {
			sum.Add(sum, f(v))
		}
		mean := new(big.Float).SetPrec(prec).Quo(sum, f(float64(len(x))))
		ss := f(0)
		for _, v := range x {
			d := new(big.Float).SetPrec(prec).Sub(f(v), mean)
			ss.Add(ss, d.Mul(d, d))
		}
		ss.Quo(ss, f(float64(len(x)-1)))
		m, _ := mean.Float64()
		v, _ := ss.Float64()
		return m, v
	}
	rng := rand.New(rand.NewPCG(5, 6))
	pairs := []rank.GroupPair{{X: 0b0011, Y: 0b1100}, {X: 0b0010, Y: 0b1000}, {X: 0b0001, Y: 0b0100}}
	var g rank.Groups
	for _, n := range []int{3, 7, 40, 100, 5000, 60000} {
		for _, offset := range []float64{0, 1e6} {
			v := make([]float64, n)
			group := make([]uint8, n)
			for i := range v {
				group[i] = uint8(rng.IntN(4))
				if n == 40 && group[i] == 1 {
					group[i] = uint8(rng.IntN(2)) // few group-1 values
				}
				// Groups 1 and 3 narrow, 0 and 2 wide, all far from zero.
				sd := 1.0
				if group[i]&1 == 0 {
					sd = 100
				}
				v[i] = offset + 10*float64(group[i]) + sd*rng.NormFloat64()
				if rng.IntN(50) == 0 {
					v[i] = math.NaN()
				}
			}
			if _, err := g.Compare(v, group, pairs, rank.TwoSided, rank.Auto); err != nil {
				continue // a group of the tiny sizes came out empty
			}
			for p, pr := range pairs {
				mx, my := g.Moments(p)
				for side, c := range []struct {
					mask uint8
					m    rank.SampleMoments
				}{{pr.X, mx}, {pr.Y, my}} {
					var sample []float64
					for i, x := range v {
						if c.mask>>group[i]&1 != 0 && x == x {
							sample = append(sample, x)
						}
					}
					if c.m.N != len(sample) {
						t.Fatalf("n=%d pair %d side %d: N %d, want %d", n, p, side, c.m.N, len(sample))
					}
					if len(sample) < 2 {
						continue
					}
					em, ev := exact(sample)
					// Measured: about 1e-16 at offset 0 and 8e-14 at 1e6
					// (groups far from zero combined); the bound has room.
					tol := 1e-13 * (1 + offset*1e-4)
					if errM, errV := math.Abs(c.m.Mean-em)/math.Sqrt(ev), math.Abs(c.m.Var-ev)/ev; errM > tol || errV > tol {
						t.Errorf("n=%d offset=%g pair %d side %d: mean %v variance %v, exact %v %v (errors %.2g %.2g)",
							n, offset, p, side, c.m.Mean, c.m.Var, em, ev, errM, errV)
					}
				}
			}
		}
	}
}

// TestGroupsUnsampledLabels: labels whose values all escape the counting
// pass's sample (every 8th value) are still counted and their moments
// taken around their own values: here labels 2 and 3, the largest, occur
// only off the sample's rows, far from zero (±1e9 with unit spread, where
// sums around 0 would lose the variance to cancellation), and a label 8
// off the sample still panics.
func TestGroupsUnsampledLabels(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const n = 4000
	v := make([]float64, n)
	group := make([]uint8, n)
	for i := range v {
		group[i] = uint8(rng.IntN(2))
		v[i] = rng.NormFloat64()
		if i%8 != 0 && rng.IntN(40) == 0 {
			group[i] = 2 + uint8(rng.IntN(2))
			v[i] = float64(5-2*int(group[i]))*1e9 + rng.NormFloat64()
		}
	}
	pairs := []rank.GroupPair{{X: 1 << 2, Y: 1 << 3}, {X: 0b0101, Y: 0b1010}}
	var g rank.Groups
	got, err := g.Compare(v, group, pairs, rank.TwoSided, rank.Auto)
	if err != nil {
		t.Fatal(err)
	}
	for p, pr := range pairs {
		x, y := splitGroups(v, group, pr.X), splitGroups(v, group, pr.Y)
		want, err := stats.KS2Samp(x, y, stats.TwoSided, stats.KSAuto)
		if err != nil {
			t.Fatal(err)
		}
		if !sameKS(got[p], want) {
			t.Errorf("pair %d: %+v, KS2Samp %+v", p, got[p], want)
		}
	}
	mx, my := g.Moments(0)
	for side, c := range []struct {
		m    rank.SampleMoments
		want []float64
	}{{mx, splitGroups(v, group, 1<<2)}, {my, splitGroups(v, group, 1<<3)}} {
		var mean, ss float64
		for _, x := range c.want {
			mean += x
		}
		mean /= float64(len(c.want))
		for _, x := range c.want {
			ss += (x - mean) * (x - mean)
		}
		variance := ss / float64(len(c.want)-1)
		if c.m.N != len(c.want) || math.Abs(c.m.Mean-mean) > 1e-6 || math.Abs(c.m.Var-variance) > 1e-9*variance {
			t.Errorf("side %d: %+v, want N %d mean %v variance %v", side, c.m, len(c.want), mean, variance)
		}
	}
	group[3] = 8
	defer func() {
		if recover() == nil {
			t.Error("a label of 8 off the sample did not panic")
		}
	}()
	g.Compare(v, group, pairs, rank.TwoSided, rank.Auto)
}
