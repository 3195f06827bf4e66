package lstm

import (
	"fmt"
	"math/rand/v2"
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
