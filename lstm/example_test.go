package lstm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/crosscluster/crosscluster/lstm"
)

// events returns n sequences of 6 one-hot frames over 4 event types; a job
// is released (label 1) when event 2, say a transient hold code, occurs in
// one of the last two frames.
func events(rnd *rand.Rand, n int) lstm.Data {
	var d lstm.Data
	for range n {
		seq := make([][]float64, 6)
		label := 0
		for t := range seq {
			seq[t] = make([]float64, 4)
			k := rnd.IntN(4)
			seq[t][k] = 1
			if k == 2 && t >= 4 {
				label = 1
			}
		}
		d.X = append(d.X, seq)
		d.Y = append(d.Y, label)
	}
	return d
}

func Example() {
	rnd := rand.New(rand.NewPCG(1, 2))
	train, valid, test := events(rnd, 1000), events(rnd, 200), events(rnd, 200)

	m := lstm.New(lstm.Architecture{Inputs: 4, Hidden: 8, Layers: 1}, rnd)
	hist, err := lstm.Train(context.Background(), m, lstm.Config{LearningRate: 0.02, BatchSize: 32, Epochs: 30, Seed: 1}, train, valid)
	if err != nil {
		fmt.Println(err)
		return
	}
	met, _, err := lstm.Evaluate(m, test, 0.5)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("trained:", hist.BestEpoch > 0)
	fmt.Println("test F1 at least 0.95:", met.F1 >= 0.95)

	held := [][]float64{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 0, 1}, {1, 0, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}
	release := func(seq [][]float64) bool { return m.Predict(seq) >= 0.5 }
	fmt.Println("hold code in the last frames, release:", release(held))
	held[4] = []float64{1, 0, 0, 0}
	fmt.Println("no hold code, release:", release(held))
	// Output:
	// trained: true
	// test F1 at least 0.95: true
	// hold code in the last frames, release: true
	// no hold code, release: false
}

func ExampleScore() {
	p := []float64{0.9, 0.8, 0.3, 0.6, 0.1}
	y := []int{1, 1, 1, 0, 0}
	m := lstm.Score(p, y, 0.5)
	fmt.Printf("TP %d FP %d TN %d FN %d\n", m.TP, m.FP, m.TN, m.FN)
	fmt.Printf("precision %.3f recall %.3f F1 %.3f\n", m.Precision, m.Recall, m.F1)
	// Output:
	// TP 2 FP 1 TN 1 FN 1
	// precision 0.667 recall 0.667 F1 0.667
}

func ExampleModel_Save() {
	m := lstm.New(lstm.Architecture{Inputs: 3, Hidden: 2, Layers: 1}, rand.New(rand.NewPCG(1, 1)))
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		fmt.Println(err)
		return
	}
	back, err := lstm.Load(&buf)
	if err != nil {
		fmt.Println(err)
		return
	}
	seq := [][]float64{{1, 0, 0}, {0, 0, 1}}
	fmt.Println(back.Architecture().Hidden, m.Predict(seq) == back.Predict(seq))
	// Output:
	// 2 true
}

// Predict runs the sequence through the LSTM and the head. With every
// weight zero but the input's weight into the cell candidate (1) and the
// head's weight (4), each gate is σ(0) = ½ and one step x gives
// c = ½·tanh(x), h = ½·tanh(c), P = σ(4h): 0.674102 for x = 1, and
// 0.592971 after a further step of 0, as a hand computation in Python's
// math module gives.
func ExampleModel_Predict() {
	m := lstm.New(lstm.Architecture{Inputs: 1, Hidden: 1, Layers: 1}, rand.New(rand.NewPCG(1, 1)))
	p := m.Params() // W_ih [i f g o], W_hh, b_ih, b_hh, head weight, head bias
	clear(p)
	p[2] = 1
	p[len(p)-2] = 4
	fmt.Printf("%.6f\n", m.Predict([][]float64{{1}}))
	fmt.Printf("%.6f\n", m.Predict([][]float64{{1}, {0}}))
	// Output:
	// 0.674102
	// 0.592971
}

// ImportTorch reads the .npz a PyTorch program writes with
// numpy.savez(path, **{k: v.numpy() for k, v in net.state_dict().items()});
// ExportTorch writes the same archive, here in float32, so the imported
// model predicts what the original does to float32 precision.
func ExampleImportTorch() {
	m := lstm.New(lstm.Architecture{Inputs: 3, Hidden: 4, Layers: 2}, rand.New(rand.NewPCG(1, 2)))
	var buf bytes.Buffer
	if err := m.ExportTorch(&buf, false); err != nil {
		fmt.Println(err)
		return
	}
	back, err := lstm.ImportTorch(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		fmt.Println(err)
		return
	}
	a := back.Architecture()
	fmt.Println("inputs", a.Inputs, "hidden", a.Hidden, "layers", a.Layers)
	seq := [][]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
	fmt.Printf("%.6f %.6f\n", m.Predict(seq), back.Predict(seq))

	_, err = lstm.ImportTorch(bytes.NewReader(buf.Bytes()[:buf.Len()/2]), int64(buf.Len()/2))
	fmt.Println("truncated archive is ErrFormat:", errors.Is(err, lstm.ErrFormat))
	// Output:
	// inputs 3 hidden 4 layers 2
	// 0.457532 0.457532
	// truncated archive is ErrFormat: true
}
