package gorgonia_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/crosscluster/crosscluster/lstm"
	"github.com/crosscluster/crosscluster/lstm/gorgonia"
)

// randomData returns n sequences of T one-hot rows over I features (a
// quarter of the rows all-zero, as padding frames are) with labels of both
// classes.
func randomData(rnd *rand.Rand, n, T, I int) lstm.Data {
	d := lstm.Data{X: make([][][]float64, n), Y: make([]int, n)}
	for i := range d.X {
		d.X[i] = make([][]float64, T)
		for t := range d.X[i] {
			row := make([]float64, I)
			if rnd.IntN(4) != 0 {
				row[rnd.IntN(I)] = 1
			}
			d.X[i][t] = row
		}
		d.Y[i] = i % 2
	}
	return d
}

// engineTol bounds the difference between the native and gorgonia
// gradients: the same float64 arithmetic in a different order.
const engineTol = 1e-12

// TestGradientsMatchNative: the graph's loss and gradient equal the native
// engine's (which package lstm checks against PyTorch and finite
// differences) for one to three layers, oldest- and newest-first.
func TestGradientsMatchNative(t *testing.T) {
	for _, tc := range []struct {
		name          string
		I, H, L, T, B int
		newestFirst   bool
	}{
		{"1layer", 5, 3, 1, 4, 3, false},
		{"2layers", 5, 4, 2, 3, 4, false},
		{"3layers-newest-first", 4, 2, 3, 3, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(1, 2))
			m := lstm.New(lstm.Architecture{Inputs: tc.I, Hidden: tc.H, Layers: tc.L, NewestFirst: tc.newestFirst}, rnd)
			d := randomData(rnd, tc.B, tc.T, tc.I)
			lossN, gn, err := m.LossGrad(d, nil)
			if err != nil {
				t.Fatal(err)
			}
			lossG, gg, err := m.LossGrad(d, gorgonia.New())
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(lossN-lossG) > engineTol {
				t.Errorf("loss: native %v, gorgonia %v", lossN, lossG)
			}
			nonzero := 0
			for i := range gn {
				if math.Abs(gn[i]-gg[i]) > engineTol {
					t.Errorf("param %d: native %v, gorgonia %v", i, gn[i], gg[i])
				}
				if gg[i] != 0 {
					nonzero++
				}
			}
			if nonzero < len(gg)/2 {
				t.Errorf("only %d of %d gradient entries are non-zero", nonzero, len(gg))
			}
		})
	}
}

// TestTrainMatchesNative: three epochs of Adam with clipping through the
// graph end within 1e-9 of the native engine's weights (Adam's division
// by √v turns 1e-16 gradient differences into larger weight differences
// where a gradient is near zero).
func TestTrainMatchesNative(t *testing.T) {
	run := func(ref lstm.Reference) []float64 {
		rnd := rand.New(rand.NewPCG(1, 1))
		d := randomData(rnd, 40, 4, 3)
		m := lstm.New(lstm.Architecture{Inputs: 3, Hidden: 4, Layers: 2}, rnd)
		cfg := lstm.Config{BatchSize: 8, Epochs: 3, Patience: -1, Seed: 9, ClipNorm: 0.5, Reference: ref}
		if _, err := lstm.Train(context.Background(), m, cfg, d, lstm.Data{}); err != nil {
			t.Fatal(err)
		}
		return m.Params()
	}
	counted := &counting{ref: gorgonia.New()}
	a, g := run(nil), run(counted)
	if counted.calls != 15 { // 3 epochs of 5 batches
		t.Fatalf("Train called the reference %d times, want 15", counted.calls)
	}
	same := 0
	for i := range a {
		if a[i] == g[i] {
			same++
		}
		if math.Abs(a[i]-g[i]) > 1e-9 {
			t.Errorf("param %d: native %v, gorgonia %v", i, a[i], g[i])
		}
	}
	t.Logf("%d of %d weights bit-identical", same, len(a))
}

// counting counts a Reference's calls.
type counting struct {
	ref   lstm.Reference
	calls int
}

func (c *counting) LossGrad(m *lstm.Model, b lstm.Batch, grad []float64) (float64, []float64, error) {
	c.calls++
	return c.ref.LossGrad(m, b, grad)
}

func TestBatchMismatch(t *testing.T) {
	m := lstm.New(lstm.Architecture{Inputs: 3, Hidden: 2, Layers: 1}, rand.New(rand.NewPCG(1, 1)))
	b := lstm.Batch{B: 1, T: 1, I: 4, X: [][]float64{make([]float64, 4)}, Y: []float64{1}}
	if _, _, err := gorgonia.New().LossGrad(m, b, make([]float64, len(m.Params()))); err == nil {
		t.Error("a batch of 4 features accepted by a model of 3 inputs")
	}
}
