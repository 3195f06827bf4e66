package overlap

import (
	"fmt"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/crosscluster/crosscluster/internal/logit"
	"github.com/crosscluster/crosscluster/internal/rank"
	"github.com/crosscluster/crosscluster/internal/synth"
	"github.com/crosscluster/crosscluster/regime"
)

// BenchSeed seeds the benchmark data; bench/overlap/gopipe writes the same
// data to .npy for the peer script (bench/overlap/peer.py).
const benchSeed = 20260101

// benchShape returns n jobs of one of synth.OverlapShapes as Fit's input.
func benchShape(tb testing.TB, shape string, n int) (*mat.Dense, []int, []string) {
	x, y, names, err := synth.OverlapBench(shape, n, benchSeed)
	if err != nil {
		tb.Fatal(err)
	}
	return mat.NewDense(n, len(names), x), y, names
}

// benchData returns n jobs × 6 features: the first n/2 rows from an
// Anvil-like cluster (source), the rest Conte-like (target).
func benchData(n int) (*mat.Dense, []int) {
	x, y, _, _ := synth.OverlapBench("synth", n, benchSeed)
	return mat.NewDense(n, 6, x), y
}

// BenchmarkSteady times the procedure as a program that fits in a loop
// runs it: one Fitter, warmed by a first fit outside the timing, then
// consecutive fits in the one process (b.Loop), on every data shape and on
// the public Stampede months replicated to the size ("fresco", skipped
// when $CROSSCLUSTER_TESTDATA and ../shared/testdata are absent). With
// -count 7 and benchstat each row is the median of seven runs:
//
//	go test -run '^$' -bench 'Steady/.*/n=1e6' -count 7 ./overlap/ | tee steady.txt
//	benchstat steady.txt
func BenchmarkSteady(b *testing.B) {
	shapes := append(slices.Clone(synth.OverlapShapes), "fresco")
	benchShapes(b, shapes, func(b *testing.B, x *mat.Dense, y []int, names []string) {
		var f Fitter
		opt := WithFeatureNames(names...)
		if _, err := f.Fit(x, y, Band{0.2, 0.8}, opt); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := f.Fit(x, y, Band{0.2, 0.8}, opt); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchShapes runs fit as a sub-benchmark per shape and size (n=2e5 and
// n=1e6, the larger skipped in -short mode) on the shape's data.
func benchShapes(b *testing.B, shapes []string, fit func(b *testing.B, x *mat.Dense, y []int, names []string)) {
	for _, shape := range shapes {
		for _, s := range []struct {
			name string
			n    int
		}{{"n=2e5", 200_000}, {"n=1e6", 1_000_000}} {
			b.Run(shape+"/"+s.name, func(b *testing.B) {
				if testing.Short() && s.n > 200_000 {
					b.Skip("large size skipped in -short mode")
				}
				load := func() (*mat.Dense, []int, []string) { return benchShape(b, shape, s.n) }
				if shape == "fresco" {
					load = func() (*mat.Dense, []int, []string) { return frescoShape(b, s.n) }
				}
				x, y, names := load()
				fit(b, x, y, names)
			})
		}
	}
}

// frescoShape returns the Stampede February (source) and March (target)
// months' job features replicated to n rows, as gopipe -shape fresco
// writes them.
func frescoShape(b *testing.B, n int) (*mat.Dense, []int, []string) {
	feb, mar := stampedeMonths(b)
	names := regime.JobFeatures()
	m, err := regime.Matrix(append(slices.Clone(feb), mar...), names)
	if err != nil {
		b.Fatal(err)
	}
	y := make([]int, len(feb)+len(mar))
	for i := len(feb); i < len(y); i++ {
		y[i] = Target
	}
	x, y := synth.Replicate(m.RawMatrix().Data, y, len(names), n)
	return mat.NewDense(n, len(names), x), y, names
}

// BenchmarkPipeline times Fit on the seed pipeline's workload: standardise,
// logistic regression, propensities, AUC, coverage and KS per feature (on
// all and in-band rows, plus SMD, quantiles and histograms, which the seed
// peer bench/overlap/peer.py does not compute and peer.py --equal-work does),
// on every data shape of synth.OverlapShapes:
//
//	go test -run '^$' -bench 'Pipeline/tied/n=1e6' -cpuprofile cpu.out ./overlap/
func BenchmarkPipeline(b *testing.B) {
	benchShapes(b, synth.OverlapShapes, func(b *testing.B, x *mat.Dense, y []int, names []string) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Fit(x, y, Band{0.2, 0.8}, WithFeatureNames(names...)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCompareFeature times one feature's comparisons (KS on all and
// in-band rows, SMD and variance ratio) on the 2e5-job benchmark data.
func BenchmarkCompareFeature(b *testing.B) {
	x, y := benchData(200_000)
	res, err := Fit(x, y, Band{0.2, 0.8}, WithFeatureNames(synth.JobsFeatureNames()...))
	if err != nil {
		b.Fatal(err)
	}
	group := make([]uint8, len(y))
	for i := range group {
		group[i] = 2 * res.y[i]
		if res.InBand[i] {
			group[i]++
		}
	}
	var ks rank.Groups
	for j, name := range res.features {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if err := res.compareFeature(j, group, &ks); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFillColumns times the copy of the 10^6-job feature matrix into
// Fit's columns (with the non-finite check and the warm start's sample),
// 6 and 12 features, into memory already touched (a fresh process also
// pays the page faults of the first touch: bench/faults).
func BenchmarkFillColumns(b *testing.B) {
	for _, shape := range []string{"continuous", "wide"} {
		x, _, _ := benchShape(b, shape, 1_000_000)
		n, d := x.Dims()
		cols := make([][]float64, d)
		for j := range cols {
			cols[j] = make([]float64, n)
		}
		sample := make([]float64, d*((n+logit.SampleStride(n)-1)/logit.SampleStride(n)))
		b.Run(fmt.Sprintf("%s/d=%d", shape, d), func(b *testing.B) {
			for b.Loop() {
				if !fillColumns(cols, x, sample) {
					b.Fatal("non-finite values")
				}
			}
		})
	}
}
