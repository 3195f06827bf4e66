package stats

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// The benchmarks in this package run on data from ksBenchUniform, a
// splitmix64 stream that stats/testdata/bench_core.py reproduces bit for bit,
// so the Go and SciPy/scikit-learn timings are on identical inputs:
//
//	go test ./stats -run '^$' -bench 'KS2Samp|AUC|Logistic|Standardizer' -benchtime 20x
//	/usr/bin/python3 stats/testdata/bench_core.py

// ksBenchUniform returns n uniforms in [0, 1): element k is
// splitmix64(seed + (k+1)·0x9E3779B97F4A7C15) >> 11 · 2^-53.
func ksBenchUniform(seed uint64, n int) []float64 {
	out := make([]float64, n)
	for k := range out {
		z := seed + uint64(k+1)*0x9E3779B97F4A7C15
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		z ^= z >> 31
		out[k] = float64(z>>11) * 0x1p-53
	}
	return out
}

// ksBenchSamples: x uniform, y = 1.1·u - 0.02 from a second stream.
func ksBenchSamples(n1, n2 int) (x, y []float64) {
	x = ksBenchUniform(1, n1)
	y = ksBenchUniform(2, n2)
	for i := range y {
		y[i] = 1.1*y[i] - 0.02
	}
	return x, y
}

func TestKSBenchDataMatchesPeer(t *testing.T) {
	// First values printed by stats/testdata/bench_core.py --check.
	u := ksBenchUniform(1, 3)
	want := []float64{0.5665615751722809, 0.7457817572627011, 0.9710027535867962}
	for i := range u {
		if u[i] != want[i] {
			t.Fatalf("ksBenchUniform(1)[%d] = %.16g, Python %.16g", i, u[i], want[i])
		}
	}
}

func BenchmarkKS2Samp(b *testing.B) {
	cases := []struct {
		name   string
		n1, n2 int
		method KSMethod
	}{
		{"exact/n=1e3x1e3", 1000, 1000, KSExact},
		{"exact/n=1e4x1e4", 10000, 10000, KSExact},
		{"exact/n=1e4x9e3", 10000, 9000, KSExact},
		{"asymp/n=1e6x1e6", 1000000, 1000000, KSAsymp},
	}
	for _, c := range cases {
		x, y := ksBenchSamples(c.n1, c.n2)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := KS2Samp(x, y, TwoSided, c.method); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAUC(b *testing.B) {
	for _, n := range []int{1000, 1000000} {
		s, pos := aucBenchData(n)
		b.Run(fmt.Sprintf("n=%.0e", float64(n)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := AUC(s, pos, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// aucBenchData: scores u, positive when a second uniform is below the score.
func aucBenchData(n int) ([]float64, []bool) {
	s := ksBenchUniform(3, n)
	v := ksBenchUniform(4, n)
	pos := make([]bool, n)
	for i := range pos {
		pos[i] = v[i] < s[i]
	}
	return s, pos
}

// logisticBenchData: p = 6 features (u - 0.5)·(j+1); y = 1 when a uniform
// is below σ(0.3 + Σ_j 0.5·(-1)^j·x_j).
func logisticBenchData(n int) (*mat.Dense, []int) {
	const p = 6
	X := mat.NewDense(n, p, nil)
	raw := X.RawMatrix().Data
	for j := 0; j < p; j++ {
		u := ksBenchUniform(uint64(10+j), n)
		for i := range u {
			raw[i*p+j] = (u[i] - 0.5) * float64(j+1)
		}
	}
	v := ksBenchUniform(20, n)
	y := make([]int, n)
	for i := range y {
		eta := 0.3
		for j := 0; j < p; j++ {
			eta += 0.5 * math.Pow(-1, float64(j)) * raw[i*p+j]
		}
		if v[i] < 1/(1+math.Exp(-eta)) {
			y[i] = 1
		}
	}
	return X, y
}

func BenchmarkLogistic(b *testing.B) {
	for _, n := range []int{200000, 1000000} {
		X, y := logisticBenchData(n)
		b.Run(fmt.Sprintf("n=%.0ex6", float64(n)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := LogisticRegression(X, y, LogisticConfig{})
				if err != nil || !res.Converged {
					b.Fatal(err, res)
				}
			}
		})
	}
}

func BenchmarkStandardizer(b *testing.B) {
	X, _ := logisticBenchData(1000000)
	dst := mat.NewDense(1000000, 6, nil)
	b.Run("n=1e6x6", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s, err := FitStandardizer(X)
			if err != nil {
				b.Fatal(err)
			}
			s.Transform(dst, X)
		}
	})
}

// BenchmarkKolmogorovSF times the O(n) Smirnov-series branch of
// KolmogorovSF (2.2 ≤ n·d² < 370 for n > 140) at the sizes the overlap
// pipeline's asymptotic two-sample tests reach, with n·d² at the branch's
// lower edge, in the middle and near the tail:
//
//	go test ./stats -run '^$' -bench Kolmogorov -benchtime 20x
func BenchmarkKolmogorovSF(b *testing.B) {
	for _, n := range []int{100000, 250000, 1000000} {
		for _, nd2 := range []float64{2.5, 25, 200} {
			d := math.Sqrt(nd2 / float64(n))
			b.Run(fmt.Sprintf("n=%.3g/nd2=%g", float64(n), nd2), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					KolmogorovSF(n, d)
				}
			})
		}
	}
}
