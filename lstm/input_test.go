package lstm

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestProbabilitiesBadInput(t *testing.T) {
	rnd := rand.New(rand.NewPCG(13, 13))
	m := New(Architecture{Inputs: 3, Hidden: 2, Layers: 1}, rnd)
	row := func(v ...float64) []float64 { return v }
	for _, tc := range []struct {
		name  string
		X     [][][]float64
		want  error
		where string
	}{
		{"width", [][][]float64{{row(1, 0, 0)}, {row(1, 0)}}, ErrWidth, "sample 1 step 0"},
		{"width-ragged", [][][]float64{{row(1, 0, 0)}, {row(1, 0, 0), row(0, 0, 0, 1)}}, ErrWidth, "sample 1 step 1"},
		{"nan", [][][]float64{{row(1, 0, 0)}, {row(0, math.NaN(), 0)}}, ErrNaN, "sample 1 step 0 feature 1"},
		{"inf-ragged", [][][]float64{{row(1, 0, 0)}, {row(0, 0, 0), row(0, 0, math.Inf(-1))}}, ErrNaN, "sample 1 step 1 feature 2"},
		{"empty-seq", [][][]float64{{row(1, 0, 0)}, {}}, ErrEmpty, "sample 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := m.Probabilities(tc.X); !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.where) {
				t.Errorf("Model: err = %v, want %v naming %q", err, tc.want, tc.where)
			}
			sameLen := true
			for _, s := range tc.X {
				sameLen = sameLen && len(s) == len(tc.X[0])
			}
			_, err := m.Predictor().Probabilities(tc.X)
			if sameLen && (!errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.where)) {
				t.Errorf("Predictor: err = %v, want %v naming %q", err, tc.want, tc.where)
			}
			if !sameLen && !errors.Is(err, ErrLength) && !errors.Is(err, tc.want) {
				t.Errorf("Predictor: err = %v, want ErrLength or %v", err, tc.want)
			}
		})
	}
	t.Run("predict-panics", func(t *testing.T) {
		defer func() {
			if r := recover(); r != "lstm: input width mismatch" {
				t.Errorf("recovered %v, want the width panic", r)
			}
		}()
		m.Predict([][]float64{{1, 0}})
	})
	t.Run("ragged-lengths-ok", func(t *testing.T) {
		X := [][][]float64{{row(1, 0, 0)}, {row(1, 0, 0), row(0, 1, 0)}}
		p, err := m.Probabilities(X)
		if err != nil {
			t.Fatal(err)
		}
		if p[0] != m.Predict(X[0]) || p[1] != m.Predict(X[1]) {
			t.Errorf("Probabilities %v differ from Predict", p)
		}
	})
}

// TestInputsUnchanged checks that training, evaluation and prediction leave
// the caller's data as it was.
func TestInputsUnchanged(t *testing.T) {
	rnd := rand.New(rand.NewPCG(14, 14))
	d := holdTask(rnd, 40, 4, 3, 1, 1)
	keep := Data{Y: append([]int(nil), d.Y...)}
	for _, s := range d.X {
		var seq [][]float64
		for _, r := range s {
			seq = append(seq, append([]float64(nil), r...))
		}
		keep.X = append(keep.X, seq)
	}
	m := New(Architecture{Inputs: 3, Hidden: 2, Layers: 1, NewestFirst: true}, rnd)
	if _, err := Train(context.Background(), m, Config{Epochs: 2, BatchSize: 8}, d, d); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Evaluate(m, d, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Probabilities(d.X); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Predictor().Probabilities(d.X); err != nil {
		t.Fatal(err)
	}
	m.Predict(d.X[0])
	if diff := cmp.Diff(keep, d); diff != "" {
		t.Errorf("data changed (-before +after):\n%s", diff)
	}
}

// TestNewestFirst checks that a newest-first model reads rows in reverse:
// it gives the reversed sequence the probability an oldest-first model with
// the same weights gives the original.
func TestNewestFirst(t *testing.T) {
	rnd := rand.New(rand.NewPCG(15, 15))
	m := New(Architecture{Inputs: 4, Hidden: 3, Layers: 2}, rnd)
	r := m.Clone()
	r.newestFirst = true
	d := randomData(rnd, 5, 6, 4)
	for _, seq := range d.X {
		rev := make([][]float64, len(seq))
		for i := range seq {
			rev[len(seq)-1-i] = seq[i]
		}
		if a, b := m.Predict(seq), r.Predict(rev); a != b {
			t.Errorf("oldest-first %v, newest-first on the reversed rows %v", a, b)
		}
	}
	p, _ := m.Probabilities(d.X)
	q, _ := r.Probabilities(d.X)
	if cmp.Equal(p, q) {
		t.Errorf("reading order made no difference: %v", p)
	}
}

// TestFirstBadSample checks that batched inference, which validates its
// shards on several cores while it runs them, reports the first bad sample
// in order, as a sequential scan would, whichever shard finishes first.
func TestFirstBadSample(t *testing.T) {
	rnd := rand.New(rand.NewPCG(14, 14))
	m := New(Architecture{Inputs: 20, Hidden: 4, Layers: 1}, rnd)
	X := bitsData(rnd, 300, 3, 20).X
	X[290][1][3] = math.Inf(1)
	X[250][2] = X[250][2][:19]
	X[130][0][7] = math.NaN()
	for _, workers := range []int{1, 2, 5} {
		prev := runtime.GOMAXPROCS(workers)
		_, err := m.Probabilities(X)
		_, err32 := m.Predictor().Probabilities(X)
		runtime.GOMAXPROCS(prev)
		for _, e := range []error{err, err32} {
			if !errors.Is(e, ErrNaN) || !strings.Contains(e.Error(), "sample 130 step 0 feature 7") {
				t.Errorf("GOMAXPROCS %d: err = %v, want the NaN of sample 130", workers, e)
			}
		}
	}
}
