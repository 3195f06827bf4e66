package lstm_test

import (
	"bytes"
	"context"
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
	d, _ := m.Decide(held, 0.5)
	fmt.Println("hold code in the last frames:", d)
	held[4] = []float64{1, 0, 0, 0}
	d, _ = m.Decide(held, 0.5)
	fmt.Println("no hold code:", d)
	// Output:
	// trained: true
	// test F1 at least 0.95: true
	// hold code in the last frames: release
	// no hold code: remove
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
