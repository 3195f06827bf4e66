package stats

import (
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/crosscluster/crosscluster/internal/rank"
)

// Golden values in testdata/ks_2samp.json and testdata/ks_dist.json come from
// SciPy 1.10.1 with NumPy 1.24.2 (Debian bookworm python3-scipy), written by
//
//	/usr/bin/python3 stats/testdata/gen_core.py
//
// The KS two-sample cases are SciPy's own TestKSTwoSamples vectors
// (scipy/stats/tests/test_stats.py) plus seeded random samples with and
// without ties.

const (
	// ksStatTol: the statistic is a ratio of integers computed by one
	// division or as SciPy's difference of two quotients; the issue asks for
	// agreement within 1e-12.
	ksStatTol = 1e-12
	// ksPValueTol is SciPy's own tolerance in TestKSTwoSamples:
	// assert_array_almost_equal with the default decimal=6, |Δ| < 1.5e-6.
	ksPValueTol = 1.5e-6
	// ksPValueRTol: beyond SciPy's absolute tolerance we also ask for
	// relative agreement of tiny p-values. Both sides run the same float64
	// algorithms, but binomials (Cephes vs log-gamma) and summation orders
	// differ; 1e-6 leaves room for the cancellation in Hodges' path counts.
	ksPValueRTol = 1e-6
	// ksPValueFloor: the two-sided exact p-value is 1 minus the probability
	// of staying inside, so its absolute error is a few hundred ulps of 1
	// whatever its size (SciPy's docs: "the minimum probability it can
	// return is about 1e-16"); below this floor only the absolute test applies.
	ksPValueFloor = 1e-13
	// kolmogRTol is SciPy's own tolerance for these functions
	// (scipy/special/tests/test_kolmogorov.py, _rtol = 1e-10); the largest
	// relative difference seen on the grid is 1.1e-12 (Pomeranz branch).
	kolmogRTol = 1e-10
	// kolmogATol: absolute floor for values near 0 or 1 where SciPy clips
	// or cancels (1 - cdf); float64 rounding of 1 - p is about 1e-16 but the
	// Pelz–Good series itself is only summed to ~1e-14.
	kolmogATol = 1e-13
)

// ksLong enables golden cases whose Smirnov sums have 10^5 to 10^6 terms summed
// in full (up to a second each; the peak summation covers most large-n cases,
// which always run): go test ./stats -run Kolmogorov -args -stats.long
var ksLong = flag.Bool("stats.long", false, "run the slow large-n Kolmogorov/Smirnov golden cases")

// ksSlow reports whether SmirnovSF(n, x) sums about n terms with SciPy's
// full series (n > 10^5, neither a closed-form special case nor an
// underflowing tail, and outside the range of the peak summation).
func ksSlow(n int, x float64) bool { return rank.SmirnovSlow(n, x) }

type ksDataSpec struct {
	Kind  string  `json:"kind"`
	Start float64 `json:"start"`
	Stop  float64 `json:"stop"`
	Num   int     `json:"num"`
	Shift float64 `json:"shift"`
	ID    int     `json:"id"`
}

type ksGoldenCase struct {
	Name        string     `json:"name"`
	X           ksDataSpec `json:"x"`
	Y           ksDataSpec `json:"y"`
	Alternative string     `json:"alternative"`
	Method      string     `json:"method"`
	Statistic   float64    `json:"statistic"`
	PValue      float64    `json:"pvalue"`
	Location    float64    `json:"location"`
	Sign        int        `json:"sign"`
	XSum        float64    `json:"xsum"`
	YSum        float64    `json:"ysum"`
}

type ksGolden struct {
	Versions map[string]string `json:"versions"`
	Cases    []ksGoldenCase    `json:"cases"`
	Datasets []struct {
		ID     int       `json:"id"`
		Values []float64 `json:"values"`
	} `json:"datasets"`
}

func ksLoadJSON(t testing.TB, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// ksLinspace reproduces numpy.linspace(start, stop, num) bit for bit
// (NumPy 1.24: arange·step + start, last element set to stop).
func ksLinspace(start, stop float64, num int) []float64 {
	out := make([]float64, num)
	if num == 1 {
		out[0] = start
		return out
	}
	step := (stop - start) / float64(num-1)
	for i := range out {
		out[i] = float64(i)*step + start
	}
	out[num-1] = stop
	return out
}

func (g *ksGolden) build(s ksDataSpec) []float64 {
	if s.Kind == "linspace" {
		v := ksLinspace(s.Start, s.Stop, s.Num)
		for i := range v {
			v[i] += s.Shift
		}
		return v
	}
	for _, d := range g.Datasets {
		if d.ID == s.ID {
			return append([]float64(nil), d.Values...)
		}
	}
	panic("no dataset")
}

// ksNumpySum reproduces numpy.sum's pairwise summation for float64 vectors
// (blocks of 8 accumulators below 128 elements, recursive halves above).
func ksNumpySum(a []float64) float64 {
	n := len(a)
	switch {
	case n < 8:
		s := 0.0
		for _, v := range a {
			s += v
		}
		return s
	case n <= 128:
		var r [8]float64
		copy(r[:], a[:8])
		i := 8
		for ; i < n-n%8; i += 8 {
			for k := range r {
				r[k] += a[i+k]
			}
		}
		s := (r[0] + r[1]) + (r[2] + r[3]) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			s += a[i]
		}
		return s
	}
	n2 := n / 2
	n2 -= n2 % 8
	return ksNumpySum(a[:n2]) + ksNumpySum(a[n2:])
}

var ksAlternatives = map[string]Alternative{"two-sided": TwoSided, "less": Less, "greater": Greater}
var ksMethods = map[string]KSMethod{"auto": KSAuto, "exact": KSExact, "asymp": KSAsymp}

func TestKS2SampGolden(t *testing.T) {
	var g ksGolden
	ksLoadJSON(t, "ks_2samp.json", &g)
	if len(g.Cases) < 100 {
		t.Fatalf("only %d golden cases", len(g.Cases))
	}
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			if testing.Short() && strings.HasPrefix(c.Name, "testLargeBoth") && c.Method == "exact" {
				t.Skip("slow exact 10000×11000 case skipped in -short mode")
			}
			x, y := g.build(c.X), g.build(c.Y)
			if s := ksNumpySum(x); s != c.XSum {
				t.Fatalf("rebuilt x differs from NumPy's: sum %v, want %v", s, c.XSum)
			}
			if s := ksNumpySum(y); s != c.YSum {
				t.Fatalf("rebuilt y differs from NumPy's: sum %v, want %v", s, c.YSum)
			}
			res, err := KS2Samp(x, y, ksAlternatives[c.Alternative], ksMethods[c.Method])
			if err != nil {
				t.Fatal(err)
			}
			want := KSResult{Statistic: c.Statistic, PValue: c.PValue, Location: c.Location, Sign: c.Sign}
			if d := cmp.Diff(want, res, ksResultOpts); d != "" {
				t.Errorf("(-SciPy +got), method used %v:\n%s", res.Method, d)
			}
		})
	}
}

// ksResultOpts compares a KSResult with SciPy's: the statistic to
// ksStatTol, the p-value to SciPy's absolute tolerance and (above
// ksPValueFloor) ksPValueRTol relative, location and sign exactly. SciPy
// does not report the method.
var ksResultOpts = cmp.Options{
	cmpopts.IgnoreFields(KSResult{}, "Method"),
	cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Statistic" },
		cmpopts.EquateApprox(0, ksStatTol)),
	cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".PValue" },
		cmp.Comparer(func(a, b float64) bool {
			d := math.Abs(a - b)
			return d <= ksPValueTol && (d <= ksPValueRTol*math.Max(math.Abs(a), math.Abs(b)) || d <= ksPValueFloor)
		})),
}

type ksDistGolden struct {
	KSTwo []struct {
		N      int     `json:"n"`
		X      float64 `json:"x"`
		SF     float64 `json:"sf"`
		CDF    float64 `json:"cdf"`
		Branch string  `json:"branch"`
	} `json:"kstwo"`
	Smirnov []struct {
		N  int     `json:"n"`
		X  float64 `json:"x"`
		SF float64 `json:"sf"`
	} `json:"smirnov"`
	KSTwoBign []struct {
		X  float64 `json:"x"`
		SF float64 `json:"sf"`
	} `json:"kstwobign"`
}

func kolmogClose(got, want float64) bool {
	d := math.Abs(got - want)
	return d <= kolmogATol || d <= kolmogRTol*math.Abs(want)
}

func TestKolmogorovGolden(t *testing.T) {
	var g ksDistGolden
	ksLoadJSON(t, "ks_dist.json", &g)
	branches := map[string]int{}
	skipped := 0
	for _, c := range g.KSTwo {
		branches[c.Branch]++
		if !*ksLong && c.Branch == "smirnov" && ksSlow(c.N, c.X) {
			skipped++
			continue
		}
		if got := KolmogorovSF(c.N, c.X); !kolmogClose(got, c.SF) {
			t.Errorf("KolmogorovSF(%d, %.17g) [%s] = %.17g, SciPy kstwo.sf %.17g (rel %.2g)",
				c.N, c.X, c.Branch, got, c.SF, math.Abs(got-c.SF)/c.SF)
		}
		if got := KolmogorovCDF(c.N, c.X); !kolmogClose(got, c.CDF) {
			t.Errorf("KolmogorovCDF(%d, %.17g) [%s] = %.17g, SciPy kstwo.cdf %.17g",
				c.N, c.X, c.Branch, got, c.CDF)
		}
	}
	for _, b := range []string{"durbin", "pomeranz", "pelz-good", "smirnov", "ruben-gambino-low", "ruben-gambino-high"} {
		if branches[b] == 0 {
			t.Errorf("golden grid has no %s case", b)
		}
	}
	for _, c := range g.Smirnov {
		if !*ksLong && ksSlow(c.N, c.X) {
			skipped++
			continue
		}
		if got := SmirnovSF(c.N, c.X); !kolmogClose(got, c.SF) {
			t.Errorf("SmirnovSF(%d, %.17g) = %.17g, SciPy smirnov %.17g (rel %.2g)",
				c.N, c.X, got, c.SF, math.Abs(got-c.SF)/c.SF)
		}
	}
	if skipped > 0 {
		t.Logf("skipped %d slow large-n cases; run with -stats.long to include them", skipped)
	}
	for _, c := range g.KSTwoBign {
		if got := KolmogorovLimitSF(c.X); !kolmogClose(got, c.SF) {
			t.Errorf("KolmogorovLimitSF(%.17g) = %.17g, SciPy kstwobign.sf %.17g", c.X, got, c.SF)
		}
	}
}
