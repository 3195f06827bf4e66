package lstm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/internal/cputime"
)

// Published defaults of the held-job model (issue 5): j jobs per sample, m
// frames, e event types, hidden size H, layers L, batch size.
const (
	benchJ, benchM, benchE = 10, 10, 46
	benchH, benchL         = 64, 2
	benchBatch             = 256
	// benchDensity is the chance that a (job, frame) cell holds an event,
	// the same in bench/lstm/peer.py.
	benchDensity = 0.5
)

// benchData returns n samples shaped as eventlog's Rows(): m rows of j·e
// features, each job's block one-hot with probability benchDensity.
func benchData(rnd *rand.Rand, n int) Data {
	d := Data{X: make([][][]float64, n), Y: make([]int, n)}
	for i := range d.X {
		seq := make([][]float64, benchM)
		for t := range seq {
			row := make([]float64, benchJ*benchE)
			for j := range benchJ {
				if rnd.Float64() < benchDensity {
					row[j*benchE+rnd.IntN(benchE)] = 1
				}
			}
			seq[t] = row
		}
		d.X[i] = seq
		d.Y[i] = rnd.IntN(2)
	}
	return d
}

// BenchmarkTrainStep measures one Adam step (forward, backward, update) on
// a batch; samples/s is the figure compared with bench/lstm/peer.py.
func BenchmarkTrainStep(b *testing.B) {
	for _, tc := range []struct {
		name   string
		H, L   int
		batch  int
		engine Engine
	}{
		{"published/H=64/L=2/batch=256", benchH, benchL, benchBatch, Native},
		{"published-float32/H=64/L=2/batch=256", benchH, benchL, benchBatch, Native32},
		{"H=32/L=1/batch=64", 32, 1, 64, Native},
	} {
		b.Run(tc.name, func(b *testing.B) {
			rnd := rand.New(rand.NewPCG(1, 1))
			d := benchData(rnd, tc.batch)
			m := New(Architecture{Inputs: benchJ * benchE, Hidden: tc.H, Layers: tc.L}, rnd)
			pk, err := pack(d, m.inputs, false, true)
			if err != nil {
				b.Fatal(err)
			}
			tr := newTrainer(m, Config{BatchSize: tc.batch, Engine: tc.engine}, pk)
			batch := make([]int, tc.batch)
			for i := range batch {
				batch[i] = i
			}
			b.ReportAllocs()
			cpu0, ok := cpuTime()
			for b.Loop() {
				if _, _, err := tr.step(batch); err != nil {
					b.Fatal(err)
				}
			}
			reportThroughput(b, tc.batch*b.N, cpu0, ok)
		})
	}
}

// BenchmarkPredict measures inference at the published model size:
// Model.Probabilities (float64) and Predictor.Probabilities (float32) on one
// sequence and on a batch of 256.
func BenchmarkPredict(b *testing.B) {
	rnd := rand.New(rand.NewPCG(2, 2))
	m := New(Architecture{Inputs: benchJ * benchE, Hidden: benchH, Layers: benchL}, rnd)
	for _, n := range []int{1, 256} {
		d := benchData(rnd, n)
		b.Run(fmt.Sprintf("Predictor/n=%d", n), func(b *testing.B) {
			p := m.Predictor()
			b.ReportAllocs()
			cpu0, ok := cpuTime()
			for b.Loop() {
				if _, err := p.Probabilities(d.X); err != nil {
					b.Fatal(err)
				}
			}
			reportThroughput(b, n*b.N, cpu0, ok)
		})
		b.Run(fmt.Sprintf("Probabilities/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			cpu0, ok := cpuTime()
			for b.Loop() {
				if _, err := m.Probabilities(d.X); err != nil {
					b.Fatal(err)
				}
			}
			reportThroughput(b, n*b.N, cpu0, ok)
		})
	}
}

// reportThroughput reports samples per wall second and, where the CPU time
// is known, per CPU second of the process since cpu0.
func reportThroughput(b *testing.B, samples int, cpu0 time.Duration, ok bool) {
	b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
	if cpu1, ok1 := cpuTime(); ok && ok1 && cpu1 > cpu0 {
		b.ReportMetric(float64(samples)/(cpu1-cpu0).Seconds(), "samples/cpu-s")
	}
}

// cpuTime is this process's CPU time; ok is false where the system cannot
// tell.
func cpuTime() (time.Duration, bool) { return cputime.Self() }

// BenchmarkKernels measures the building blocks of the passes on one core
// in multiply-adds (gemm) or elements (activations) per CPU-nanosecond: the
// recurrent product of a shard at the published sizes, and the
// gate activations. They show how close the passes run to the FMA units'
// peak (docs/heldjobs.md).
func BenchmarkKernels(b *testing.B) {
	const R, K, C = shardRows, benchH, 4 * benchH
	rnd := rand.New(rand.NewPCG(4, 4))
	a64, w64, d64 := randSlice(rnd, R*K), randSlice(rnd, K*C), make([]float64, R*C)
	a32, w32, d32 := to[float32](a64), to[float32](w64), make([]float32, R*C)
	x64 := make([]float64, 2*benchH)
	x32 := make([]float32, 2*benchH)
	src := randSlice(rnd, len(x64))
	src32 := to[float32](src)
	k64, k32 := kernelsFor[float64](), kernelsFor[float32]()
	run := func(b *testing.B, perOp float64, unit string, f func()) {
		cpu0, ok := cpuTime()
		for b.Loop() {
			f()
		}
		if cpu1, ok1 := cpuTime(); ok && ok1 && cpu1 > cpu0 {
			b.ReportMetric(perOp*float64(b.N)/float64((cpu1-cpu0).Nanoseconds()), unit)
		}
	}
	// The three shapes of the passes: the forward product of a shard
	// (h·W), the backward one (dA·Wᵀ) and the weight gradient (hᵀ·dA, a
	// task of gradCols columns over a whole batch, c read by columns).
	B := benchBatch
	g64 := randSlice(rnd, B*C)
	hb64 := randSlice(rnd, B*K)
	g32, hb32 := to[float32](g64), to[float32](hb64)
	dx64, dx32 := make([]float64, R*K), make([]float32, R*K)
	dw64, dw32 := make([]float64, K*C), make([]float32, K*C)
	for _, v := range gemmVariants(k64) {
		b.Run("gemm64"+v.name, func(b *testing.B) {
			run(b, R*K*C, "FMA/cpu-ns", func() { gemm(v.k, R, C, K, a64, K, 1, w64, C, d64, C) })
		})
		b.Run("gemm64-dx"+v.name, func(b *testing.B) {
			run(b, R*K*C, "FMA/cpu-ns", func() { gemm(v.k, R, K, C, g64, C, 1, w64, K, dx64, K) })
		})
		b.Run("gemm64-dw"+v.name, func(b *testing.B) {
			run(b, float64(K*gradCols*B), "FMA/cpu-ns", func() { gemm(v.k, K, gradCols, B, hb64, 1, K, g64, C, dw64, C) })
		})
	}
	for _, v := range gemmVariants(k32) {
		b.Run("gemm32"+v.name, func(b *testing.B) {
			run(b, R*K*C, "FMA/cpu-ns", func() { gemm(v.k, R, C, K, a32, K, 1, w32, C, d32, C) })
		})
		b.Run("gemm32-dx"+v.name, func(b *testing.B) {
			run(b, R*K*C, "FMA/cpu-ns", func() { gemm(v.k, R, K, C, g32, C, 1, w32, K, dx32, K) })
		})
		b.Run("gemm32-dw"+v.name, func(b *testing.B) {
			run(b, float64(K*gradCols*B), "FMA/cpu-ns", func() { gemm(v.k, K, gradCols, B, hb32, 1, K, g32, C, dw32, C) })
		})
	}
	b.Run("sigmoid64", func(b *testing.B) {
		run(b, float64(len(x64)), "elem/cpu-ns", func() { copy(x64, src); k64.sigmoid(x64) })
	})
	b.Run("sigmoid32", func(b *testing.B) {
		run(b, float64(len(x32)), "elem/cpu-ns", func() { copy(x32, src32); k32.sigmoid(x32) })
	})
	// The cell of a shard: five activations per hidden unit.
	g64, cp64 := randSlice(rnd, R*4*benchH), randSlice(rnd, R*benchH)
	c64, tc64, h64 := make([]float64, R*benchH), make([]float64, R*benchH), make([]float64, R*benchH)
	g32, cp32 := to[float32](g64), to[float32](cp64)
	c32, tc32, h32 := make([]float32, R*benchH), make([]float32, R*benchH), make([]float32, R*benchH)
	gw64, gw32 := slices.Clone(g64), slices.Clone(g32)
	for _, v := range cellVariants(k64) {
		b.Run("cell64"+v.name, func(b *testing.B) {
			run(b, 5*R*benchH, "act/cpu-ns", func() { copy(gw64, g64); cells(v.k, benchH, R, gw64, cp64, c64, tc64, h64) })
		})
	}
	for _, v := range cellVariants(k32) {
		b.Run("cell32"+v.name, func(b *testing.B) {
			run(b, 5*R*benchH, "act/cpu-ns", func() { copy(gw32, g32); cells(v.k, benchH, R, gw32, cp32, c32, tc32, h32) })
		})
	}
	b.Run("adam", func(b *testing.B) {
		// One Adam step over the published model's parameters.
		n := Architecture{Inputs: benchJ * benchE, Hidden: benchH, Layers: benchL}.numParams()
		w, g, mom, vel := randSlice(rnd, n), randSlice(rnd, n), randSlice(rnd, n), make([]float64, n)
		run(b, float64(n), "params/cpu-ns", func() { adamUpdate(w, g, mom, vel, 1e-3, 0.5) })
	})
	b.Run("pack", func(b *testing.B) {
		d := benchData(rnd, benchBatch)
		run(b, benchBatch*benchM*benchJ*benchE, "values/cpu-ns", func() {
			if _, err := pack(d, benchJ*benchE, false, false); err != nil {
				b.Fatal(err)
			}
		})
	})
}

type gemmVariant[T float] struct {
	name string
	k    *kernels[T]
}

// gemmVariants returns k and, where it has AVX-512 blocks, k with only
// the AVX2 ones ("-avx2"); without assembly, k without its Go blocks as
// well ("-axpy", one axpy per coefficient and row).
func gemmVariants[T float](k *kernels[T]) []gemmVariant[T] {
	out := []gemmVariant[T]{{"", k}}
	if k.goBlock != nil && k.block == nil {
		k2 := *k
		k2.goBlock = nil
		out = append(out, gemmVariant[T]{"-axpy", &k2})
	}
	if k.wide != nil {
		k2 := *k
		k2.wide = nil
		out = append(out, gemmVariant[T]{"-avx2", &k2})
	}
	return out
}

// cellVariants returns k and k without its fused cell ("-vmath",
// cellForward's activations and loops).
func cellVariants[T float](k *kernels[T]) []gemmVariant[T] {
	out := []gemmVariant[T]{{"", k}}
	if k.cell != nil {
		k3 := *k
		k3.cell = nil
		out = append(out, gemmVariant[T]{"-vmath", &k3})
	}
	return out
}
