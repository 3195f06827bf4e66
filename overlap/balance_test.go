package overlap

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/crosscluster/crosscluster/stats"
)

// TestSMDVRMatchesStats: Fit's fused balance computation must give exactly
// stats.SMD and stats.VarianceRatio (the results are documented as theirs).
func TestSMDVRMatchesStats(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func(n int, loc, scale float64, integer bool) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = loc + scale*rng.NormFloat64()
			if integer {
				x[i] = math.Round(x[i])
			}
		}
		return x
	}
	cases := []struct {
		name string
		x, y []float64
	}{
		{"empty", nil, []float64{1, 2}},
		{"one", []float64{1}, []float64{1, 2, 3}},
		{"two", []float64{1, 2}, []float64{4, 7}},
		{"constant both", []float64{3, 3, 3}, []float64{3, 3}},
		{"constant y", []float64{1, 2, 3}, []float64{3, 3}},
		{"equal means", []float64{1, 3}, []float64{0, 4}},
		{"normal", draw(1000, 0.3, 2, false), draw(777, 0, 1, false)},
		{"large offset", draw(5000, 1e9, 1, false), draw(3000, 1e9+0.5, 3, false)},
		{"integers", draw(4096, 4, 3, true), draw(2049, 5, 2, true)},
	}
	same := func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			smd, vr := smdVR(c.x, c.y)
			if want := stats.SMD(c.x, c.y); !same(smd, want) {
				t.Errorf("SMD %v, stats.SMD %v", smd, want)
			}
			if want := stats.VarianceRatio(c.x, c.y); !same(vr, want) {
				t.Errorf("variance ratio %v, stats.VarianceRatio %v", vr, want)
			}
		})
	}
}

// TestGroupMoments: the moments Fit computes for every domain on all and
// on in-band rows, with the groups interleaved, are as close to the exact
// mean and variance (math/big) as meanVarFinite of the split values is,
// within a bound that grows with the offset (the condition number of the
// variance), and for domains without in-band rows.
func TestGroupMoments(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	// exact returns the mean and sample variance of x to 200 bits.
	exact := func(x []float64) (float64, float64) {
		const prec = 200
		sum := new(big.Float).SetPrec(prec)
		for _, v := range x {
			sum.Add(sum, new(big.Float).SetPrec(prec).SetFloat64(v))
		}
		mean := new(big.Float).SetPrec(prec).Quo(sum, new(big.Float).SetPrec(prec).SetInt64(int64(len(x))))
		ss := new(big.Float).SetPrec(prec)
		for _, v := range x {
			d := new(big.Float).SetPrec(prec).Sub(new(big.Float).SetPrec(prec).SetFloat64(v), mean)
			ss.Add(ss, d.Mul(d, d))
		}
		ss.Quo(ss, new(big.Float).SetPrec(prec).SetInt64(int64(len(x)-1)))
		m, _ := mean.Float64()
		v, _ := ss.Float64()
		return m, v
	}
	for _, n := range []int{0, 1, 3, 7, 100, 5000} {
		for _, offset := range []float64{0, 1e6} {
			col := make([]float64, n)
			group := make([]uint8, n)
			for i := range col {
				group[i] = uint8(rng.IntN(4))
				if n == 100 {
					group[i] &^= 1 // no in-band rows
				}
				col[i] = offset + float64(group[i]) + rng.NormFloat64()
			}
			all, in := groupMoments(col, group)
			for dom := range 2 {
				for k, m := range map[bool]moments{false: all[dom], true: in[dom]} {
					var sample []float64
					for i, v := range col {
						if int(group[i]>>1) == dom && (!k || group[i]&1 == 1) {
							sample = append(sample, v)
						}
					}
					if m.n != len(sample) {
						t.Fatalf("n=%d domain %d in-band %v: %d values, want %d", n, dom, k, m.n, len(sample))
					}
					if len(sample) < 2 {
						continue
					}
					em, ev := exact(sample)
					fm, fv := meanVarFinite(sample)
					// Relative to the variance, rounding errors grow with
					// (offset/sd)·ε·n at worst.
					tol := 1e-15 * (1 + offset) * float64(len(sample))
					errM, errV := math.Abs(m.mean-em)/math.Sqrt(ev), math.Abs(m.vr-ev)/ev
					if errM > tol || errV > tol {
						t.Errorf("n=%d offset=%g domain %d in-band %v: mean %v variance %v, exact %v %v (meanVarFinite %v %v, errors %.2g %.2g)",
							n, offset, dom, k, m.mean, m.vr, em, ev, fm, fv, math.Abs(fm-em)/math.Sqrt(ev), math.Abs(fv-ev)/ev)
					}
					t.Logf("n=%d offset=%g: relative errors: mean %.2g, variance %.2g; meanVarFinite %.2g, %.2g", n, offset, errM, errV, math.Abs(fm-em)/math.Sqrt(ev), math.Abs(fv-ev)/ev)
				}
			}
		}
	}
}
