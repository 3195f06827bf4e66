package lstm_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/crosscluster/crosscluster/lstm"
)

// lastRow is a user's Network: logistic regression on the sum of a
// sequence's rows, to show that Train, Evaluate and checkpoints need only
// the interface.
type lastRow struct{ w []float64 } // I weights, then the bias

func (n *lastRow) Params() []float64 { return n.w }

func (n *lastRow) p(seq func(t int) []float64, T int) float64 {
	I := len(n.w) - 1
	z := n.w[I]
	for t := range T {
		for k, v := range seq(t)[:I] {
			z += n.w[k] * v
		}
	}
	return 1 / (1 + math.Exp(-z))
}

func (n *lastRow) Probabilities(X [][][]float64) ([]float64, error) {
	out := make([]float64, len(X))
	for i, seq := range X {
		out[i] = n.p(func(t int) []float64 { return seq[t] }, len(seq))
	}
	return out, nil
}

func (n *lastRow) Gradient(b lstm.Batch, grad []float64) (float64, []float64, error) {
	prob := make([]float64, b.B)
	var loss float64
	for s := range b.B {
		row := func(t int) []float64 { return b.X[t][s*b.I : (s+1)*b.I] }
		p := n.p(row, b.T)
		prob[s] = p
		d := (p - b.Y[s]) / float64(b.B)
		for t := range b.T {
			for k, v := range row(t) {
				grad[k] += d * v
			}
		}
		grad[b.I] += d
		if b.Y[s] == 1 {
			loss -= math.Log(p)
		} else {
			loss -= math.Log(1 - p)
		}
	}
	return loss / float64(b.B), prob, nil
}

// counts draws sequences whose label is whether feature 0 occurs more
// often than feature 1.
func counts(rnd *rand.Rand, n int) lstm.Data {
	d := lstm.Data{X: make([][][]float64, n), Y: make([]int, n)}
	for i := range d.X {
		var c [2]int
		d.X[i] = make([][]float64, 4)
		for t := range d.X[i] {
			k := rnd.IntN(3)
			d.X[i][t] = make([]float64, 3)
			d.X[i][t][k] = 1
			if k < 2 {
				c[k]++
			}
		}
		if c[0] > c[1] {
			d.Y[i] = 1
		}
	}
	return d
}

func TestTrainNetwork(t *testing.T) {
	rnd := rand.New(rand.NewPCG(8, 9))
	train, valid := counts(rnd, 400), counts(rnd, 100)
	n := &lastRow{w: make([]float64, 4)}
	hist, err := lstm.Train(t.Context(), n, lstm.Config{LearningRate: 0.1, BatchSize: 32, Epochs: 20, Checkpoint: t.TempDir() + "/ckpt"}, train, valid)
	if err != nil {
		t.Fatal(err)
	}
	met, loss, err := lstm.Evaluate(n, valid, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if best := hist.Epochs[hist.BestEpoch-1]; met.F1 != best.Valid.F1 || loss != best.ValidLoss {
		t.Errorf("Evaluate F1 %v loss %v, the best epoch's %v %v", met.F1, loss, best.Valid.F1, best.ValidLoss)
	}
	if met.F1 < 0.9 {
		t.Errorf("validation F1 %.3f, want ≥ 0.9", met.F1)
	}
}
