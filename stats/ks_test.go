package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestKS2SampErrors(t *testing.T) {
	tests := []struct {
		name string
		x, y []float64
	}{
		{"empty x", nil, []float64{1}},
		{"empty y", []float64{1}, nil},
		{"all NaN", []float64{math.NaN()}, []float64{1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := KS2Samp(tc.x, tc.y, TwoSided, KSAuto); !errors.Is(err, ErrEmpty) {
				t.Errorf("error %v, want ErrEmpty", err)
			}
		})
	}
	for _, f := range []func(){
		func() { KS2Samp([]float64{1}, []float64{2}, Alternative(7), KSAuto) },
		func() { KS2Samp([]float64{1}, []float64{2}, TwoSided, KSMethod(-1)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("bad enum did not panic")
				}
			}()
			f()
		}()
	}
}

// TestKS2SampNaNDropped: NaNs are removed before testing and inputs are
// left untouched.
func TestKS2SampNaNDropped(t *testing.T) {
	x := []float64{3, math.NaN(), 1, 2}
	y := []float64{2.5, 0.5, math.NaN(), 4, 5}
	x0, y0 := slices.Clone(x), slices.Clone(y)
	got, err := KS2Samp(x, y, TwoSided, KSAuto)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := KS2Samp([]float64{1, 2, 3}, []float64{0.5, 2.5, 4, 5}, TwoSided, KSAuto)
	if got != want {
		t.Errorf("with NaN %+v, without %+v", got, want)
	}
	for i := range x {
		if math.Float64bits(x[i]) != math.Float64bits(x0[i]) {
			t.Fatal("x modified")
		}
	}
	for i := range y {
		if math.Float64bits(y[i]) != math.Float64bits(y0[i]) {
			t.Fatal("y modified")
		}
	}
}

// ksBruteD computes the one-sided statistics by the definition.
func ksBruteD(x, y []float64) (dPlus, dMinus float64) {
	all := append(slices.Clone(x), y...)
	for _, v := range all {
		fx, fy := 0.0, 0.0
		for _, a := range x {
			if a <= v {
				fx++
			}
		}
		for _, b := range y {
			if b <= v {
				fy++
			}
		}
		d := fx/float64(len(x)) - fy/float64(len(y))
		dPlus = math.Max(dPlus, d)
		dMinus = math.Max(dMinus, -d)
	}
	return dPlus, dMinus
}

// TestKS2SampProperties checks, on random samples with ties and ±Inf, that
// p-values lie in [0, 1], the statistics equal the definition, the exact
// two-sided p-value is not below the one-sided one for the same statistic,
// and swapping the samples swaps Less and Greater.
func TestKS2SampProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 300; trial++ {
		n1, n2 := 1+rng.IntN(40), 1+rng.IntN(40)
		x, y := ksRandomSample(rng, n1), ksRandomSample(rng, n2)
		dp, dm := ksBruteD(x, y)
		for _, m := range []KSMethod{KSExact, KSAsymp} {
			two, err := KS2Samp(x, y, TwoSided, m)
			if err != nil {
				t.Fatal(err)
			}
			gr, _ := KS2Samp(x, y, Greater, m)
			ls, _ := KS2Samp(x, y, Less, m)
			sgr, _ := KS2Samp(y, x, Greater, m)
			for _, r := range []KSResult{two, gr, ls} {
				if !(r.PValue >= 0 && r.PValue <= 1) {
					t.Fatalf("p-value %v outside [0,1] for %v %v", r.PValue, x, y)
				}
			}
			if math.Abs(gr.Statistic-dp) > ksStatTol || math.Abs(ls.Statistic-dm) > ksStatTol ||
				math.Abs(two.Statistic-math.Max(dp, dm)) > ksStatTol {
				t.Fatalf("statistics %v %v %v, definition %v %v", two.Statistic, gr.Statistic, ls.Statistic, dp, dm)
			}
			if sgr.Statistic != ls.Statistic || sgr.PValue != ls.PValue {
				t.Fatalf("swap symmetry: Greater(y,x) %+v, Less(x,y) %+v", sgr, ls)
			}
			// {D+ ≥ d} ⊂ {D ≥ d}: with equal statistics the exact
			// two-sided p-value is at least the one-sided one.
			if m == KSExact && two.Statistic == gr.Statistic && two.PValue < gr.PValue-1e-12 {
				t.Fatalf("two-sided p %v below one-sided %v for %v %v", two.PValue, gr.PValue, x, y)
			}
		}
	}
}

func ksRandomSample(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		switch rng.IntN(8) {
		case 0:
			x[i] = math.Inf(1 - 2*rng.IntN(2))
		case 1, 2:
			x[i] = float64(rng.IntN(4))
		default:
			x[i] = rng.NormFloat64()
		}
	}
	return x
}

// FuzzKS2Samp: no input makes KS2Samp panic or return a p-value outside
// [0, 1]; empty input is the only error.
func FuzzKS2Samp(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, uint8(3), uint8(0), uint8(0))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255}, uint8(1), uint8(1), uint8(1))
	f.Add([]byte{7}, uint8(0), uint8(2), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, split, alt, method uint8) {
		vals := make([]float64, 0, len(data)/2)
		for i := 0; i+1 < len(data); i += 2 {
			// Small integers give many ties; a few specials give ±Inf and NaN.
			v := float64(int(data[i])-128) / float64(1+int(data[i+1]%7))
			switch data[i+1] {
			case 250:
				v = math.NaN()
			case 251:
				v = math.Inf(1)
			case 252:
				v = math.Inf(-1)
			}
			vals = append(vals, v)
		}
		k := 0
		if len(vals) > 0 {
			k = int(split) % (len(vals) + 1)
		}
		x, y := vals[:k], vals[k:]
		res, err := KS2Samp(x, y, Alternative(alt%3), KSMethod(method%3))
		if err != nil {
			if !errors.Is(err, ErrEmpty) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if !(res.PValue >= 0 && res.PValue <= 1) || !(res.Statistic >= 0 && res.Statistic <= 1) {
			t.Fatalf("result %+v out of range", res)
		}
	})
}

// TestKolmogorovEdges covers the documented edge values.
func TestKolmogorovEdges(t *testing.T) {
	if !math.IsNaN(KolmogorovSF(0, 0.5)) || !math.IsNaN(KolmogorovSF(5, math.NaN())) {
		t.Error("KolmogorovSF must be NaN for n < 1 or NaN d")
	}
	if KolmogorovSF(5, 0) != 1 || KolmogorovSF(5, 1) != 0 || KolmogorovSF(5, -1) != 1 {
		t.Error("KolmogorovSF edge values")
	}
	if !math.IsNaN(SmirnovSF(5, 1.5)) || SmirnovSF(5, 0) != 1 || SmirnovSF(5, 1) != 0 {
		t.Error("SmirnovSF edge values")
	}
	if KolmogorovLimitSF(0) != 1 || KolmogorovLimitSF(40) != 0 || !math.IsNaN(KolmogorovLimitSF(math.NaN())) {
		t.Error("KolmogorovLimitSF edge values")
	}
	// SF + CDF ≈ 1 and SF monotone in d. For n > 140 and n·d² ≥ 2.2 SciPy's
	// SF is 2·SmirnovSF, which drops P(D+ ≥ d and D- ≥ d) while the CDF
	// does not: SciPy 1.10 itself has sf+cdf-1 = -5.2e-7 at n=141, d=0.125.
	const sfCDFTol = 1e-6
	for _, n := range []int{3, 50, 141, 2000} {
		prev := 1.0
		for d := 0.0; d <= 1; d += 1.0 / 64 {
			sf := KolmogorovSF(n, d)
			if math.Abs(sf+KolmogorovCDF(n, d)-1) > sfCDFTol {
				t.Fatalf("n=%d d=%v: sf+cdf != 1", n, d)
			}
			if sf > prev+1e-12 {
				t.Fatalf("n=%d d=%v: sf %v increases from %v", n, d, sf, prev)
			}
			prev = sf
		}
	}
}

// TestKS2SampSignedZero: -0 and +0 are equal values and tie, as in SciPy.
func TestKS2SampSignedZero(t *testing.T) {
	negZero := math.Copysign(0, -1)
	x := make([]float64, radixMin+1) // radix path
	y := make([]float64, radixMin+1)
	for i := range x {
		x[i] = negZero
	}
	r, err := KS2Samp(x, y, TwoSided, KSAuto)
	if err != nil {
		t.Fatal(err)
	}
	if r.Statistic != 0 || r.PValue != 1 {
		t.Errorf("-0 vs +0: %+v, want D=0 p=1", r)
	}
}

// Sizes of the internal packages stats is built on, which tests use to
// reach both sides of a threshold: internal/rank sorts inputs of at least
// radixMin values by radix, internal/logit shares rows out in chunks of
// logisticChunk.
const (
	radixMin      = 4096
	logisticChunk = 4096
)
