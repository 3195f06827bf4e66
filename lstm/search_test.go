package lstm

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
)

func TestSearch(t *testing.T) {
	rnd := rand.New(rand.NewPCG(11, 11))
	easy := Shape{Name: "recent=1", Train: holdTask(rnd, 200, 5, 4, 1, 1), Valid: holdTask(rnd, 100, 5, 4, 1, 1)}
	// Labels independent of the inputs: no trial can do well on this shape.
	noise := Shape{Name: "noise", Train: holdTask(rnd, 200, 5, 4, 1, 1), Valid: holdTask(rnd, 100, 5, 4, 1, 1)}
	for i := range noise.Valid.Y {
		noise.Valid.Y[i] = rnd.IntN(2)
	}
	space := Space{Hidden: []int{2, 8}, LearningRate: []float64{0.03}, BatchSize: []int{32}, Layers: []int{1}, Shapes: []Shape{noise, easy}}
	res, err := Search(context.Background(), space, Config{Epochs: 15, Patience: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 4 {
		t.Fatalf("%d trials, want 4", len(res.Trials))
	}
	best := res.Trials[res.Best]
	for _, tr := range res.Trials {
		if tr.Err != nil {
			t.Errorf("%v: %v", tr.Trial, tr.Err)
		}
		if tr.Valid.F1 > best.Valid.F1 {
			t.Errorf("%v has F1 %v above the chosen best %v", tr.Trial, tr.Valid.F1, best.Valid.F1)
		}
	}
	if best.Trial.Shape != "recent=1" {
		t.Errorf("best trial %v, want one on the learnable shape", best.Trial)
	}

	space.Random, space.Seed = 2, 4
	r1, _ := Search(context.Background(), space, Config{Epochs: 1})
	r2, _ := Search(context.Background(), space, Config{Epochs: 1})
	if len(r1.Trials) != 2 || r1.Trials[0].Trial != r2.Trials[0].Trial || r1.Trials[1].Trial != r2.Trials[1].Trial {
		t.Errorf("seeded random search is not reproducible: %v vs %v", r1.Trials, r2.Trials)
	}
}

func TestSearchBadShapes(t *testing.T) {
	rnd := rand.New(rand.NewPCG(12, 12))
	good := Shape{Name: "good", Train: holdTask(rnd, 40, 4, 3, 1, 1), Valid: holdTask(rnd, 20, 4, 3, 1, 1)}
	// Rows without features (a tensor built with no event types) are bad
	// data: the trial fails with ErrWidth, the search goes on.
	zero := Shape{Name: "zero-width", Train: Data{X: [][][]float64{{{}, {}}, {{}, {}}}, Y: []int{0, 1}}}
	res, err := Search(context.Background(), Space{Hidden: []int{2}, Layers: []int{1}, BatchSize: []int{8}, Shapes: []Shape{zero, good}}, Config{Epochs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 2 || !errors.Is(res.Trials[0].Err, ErrWidth) || res.Trials[1].Err != nil || res.Best != 1 {
		t.Errorf("trials %+v, best %d: want the zero-width shape to fail with ErrWidth and the other to win", res.Trials, res.Best)
	}

	t.Run("duplicate-names", func(t *testing.T) {
		defer func() {
			if r := recover(); r != "lstm: two search shapes with the same name" {
				t.Errorf("recovered %v, want the duplicate-name panic", r)
			}
		}()
		other := good
		other.Train = zero.Train
		Search(context.Background(), Space{Shapes: []Shape{good, other}}, Config{Epochs: 1})
	})
}

func TestSearchShapeOrientation(t *testing.T) {
	rnd := rand.New(rand.NewPCG(12, 12))
	fwd := Shape{Name: "fwd", Train: holdTask(rnd, 40, 5, 4, 1, 1), Valid: holdTask(rnd, 20, 5, 4, 1, 1)}
	rev := fwd
	rev.Name, rev.NewestFirst = "rev", true
	space := Space{Hidden: []int{2}, Layers: []int{1}, BatchSize: []int{16}, Shapes: []Shape{fwd, rev}}
	res, err := Search(context.Background(), space, Config{Epochs: 1, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Trials {
		if tr.Err != nil {
			t.Fatal(tr.Err)
		}
		if got, want := tr.Model.Architecture().NewestFirst, tr.Trial.Shape == "rev"; got != want {
			t.Errorf("trial on %s: model NewestFirst %v, want %v", tr.Trial.Shape, got, want)
		}
	}
	// Every trial starts from cfg.Seed, so the same hyperparameters on the
	// same data reproduce a plain Train with that seed.
	m := New(Architecture{Inputs: 4, Hidden: 2, Layers: 1}, rand.New(rand.NewPCG(5, 1)))
	c := Config{Epochs: 1, Seed: 5, BatchSize: 16}
	c.LearningRate = res.Trials[0].Trial.LearningRate
	if _, err := Train(context.Background(), m, c, fwd.Train, fwd.Valid); err != nil {
		t.Fatal(err)
	}
	p0 := res.Trials[0].Model.Predict(fwd.Valid.X[0])
	if p := m.Predict(fwd.Valid.X[0]); p != p0 {
		t.Errorf("plain Train gives P=%v, the search's trial %v", p, p0)
	}
}
