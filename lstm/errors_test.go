package lstm_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/crosscluster/crosscluster/internal/errtest"
	"github.com/crosscluster/crosscluster/internal/npy"
	"github.com/crosscluster/crosscluster/lstm"
)

// stateDict writes a one-layer state_dict for 2 inputs and 1 hidden unit
// as ExportTorch names it, after edit has changed the tensors (key ->
// shape and values).
func stateDict(t *testing.T, edit func(shapes map[string][]int, vals map[string][]float64)) []byte {
	t.Helper()
	keys := []string{"lstm.weight_ih_l0", "lstm.weight_hh_l0", "lstm.bias_ih_l0", "lstm.bias_hh_l0", "fc.weight", "fc.bias"}
	shapes := map[string][]int{keys[0]: {4, 2}, keys[1]: {4, 1}, keys[2]: {4}, keys[3]: {4}, keys[4]: {1, 1}, keys[5]: {1}}
	vals := map[string][]float64{}
	for _, k := range keys {
		n := 1
		for _, d := range shapes[k] {
			n *= d
		}
		vals[k] = make([]float64, n)
	}
	edit(shapes, vals)
	var buf bytes.Buffer
	z := npy.NewZipWriter(&buf, false)
	for k, s := range shapes {
		if err := z.Add(k, s, vals[k]); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestErrors provokes each error the documentation of lstm promises, with
// bad data through the exported API, and checks that errors.Is names its
// sentinel and the message says "lstm: " exactly once and names the place
// (sample, step, key, epoch). lstm's sentinels carry the prefix themselves
// and come after the place ("training set: sample 1 ...: lstm: label is
// neither 0 nor 1"), so the prefix is checked for once, not at the start.
func TestErrors(t *testing.T) {
	ctx := context.Background()
	m := lstm.New(lstm.Architecture{Inputs: 2, Hidden: 2, Layers: 1}, rand.New(rand.NewPCG(1, 1)))
	row := func(v ...float64) [][]float64 { return [][]float64{v} }
	good := lstm.Data{X: [][][]float64{row(1, 0), row(0, 1), row(1, 1), row(0, 0)}, Y: []int{1, 0, 1, 0}}
	with := func(i int, seq [][]float64, y int) lstm.Data {
		d := lstm.Data{X: append([][][]float64(nil), good.X...), Y: append([]int(nil), good.Y...)}
		d.X[i], d.Y[i] = seq, y
		return d
	}
	train := func(tr, va lstm.Data, cfg lstm.Config) func(*testing.T) error {
		return func(*testing.T) error {
			cfg.Epochs = max(cfg.Epochs, 1)
			_, err := lstm.Train(ctx, m.Clone(), cfg, tr, va)
			return err
		}
	}
	importTorch := func(b []byte) func(*testing.T) error {
		return func(*testing.T) error { _, err := lstm.ImportTorch(bytes.NewReader(b), int64(len(b))); return err }
	}
	load := func(s string) func(*testing.T) error {
		return func(*testing.T) error { _, err := lstm.Load(strings.NewReader(s)); return err }
	}
	var saved bytes.Buffer
	if err := m.Save(&saved); err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	tests := []struct {
		name  string
		err   func(*testing.T) error
		is    error
		place []string
	}{
		{"Train: empty", train(lstm.Data{}, lstm.Data{}, lstm.Config{}), lstm.ErrEmpty, []string{"training set"}},
		{"Train: no steps", train(with(0, [][]float64{}, 1), lstm.Data{}, lstm.Config{}), lstm.ErrEmpty, []string{"training set", "sample 0"}},
		{"Train: lengths differ", train(with(2, [][]float64{{1, 0}, {0, 1}}, 1), lstm.Data{}, lstm.Config{}), lstm.ErrLength, []string{"training set", "sample 2"}},
		{"Train: label 2", train(with(1, row(0, 1), 2), lstm.Data{}, lstm.Config{}), lstm.ErrLabel, []string{"training set", "sample 1"}},
		{"Train: width", train(with(3, row(0, 0, 0), 0), lstm.Data{}, lstm.Config{}), lstm.ErrWidth, []string{"training set", "sample 3 step 0"}},
		{"Train: NaN", train(with(1, row(0, nan), 0), lstm.Data{}, lstm.Config{}), lstm.ErrNaN, []string{"training set", "sample 1 step 0 feature 1"}},
		{"Train: single class", train(lstm.Data{X: good.X, Y: []int{1, 1, 1, 1}}, lstm.Data{}, lstm.Config{}), lstm.ErrSingleClass, []string{"training set"}},
		{"Train: validation width", train(good, with(0, row(1), 1), lstm.Config{}), lstm.ErrWidth, []string{"validation set", "sample 0 step 0"}},
		{"Train: validation length", train(good, lstm.Data{X: [][][]float64{{{1, 0}, {0, 1}}}, Y: []int{1}}, lstm.Config{}), lstm.ErrLength, []string{"validation sequences have 2 steps"}},
		// The largest finite learning rate drives Adam's weights to
		// ±1.8e308 in one step; the next batch's loss is NaN.
		{"Train: NaN loss", train(good, lstm.Data{}, lstm.Config{LearningRate: math.MaxFloat64, BatchSize: 1}), lstm.ErrNaN, []string{"epoch 1 batch 2"}},
		{"Evaluate: label", func(*testing.T) error { _, _, err := lstm.Evaluate(m, with(3, row(0, 0), -1), 0.5); return err }, lstm.ErrLabel, []string{"sample 3"}},
		{"Model.Probabilities: width", func(*testing.T) error {
			_, err := m.Probabilities([][][]float64{{{1, 0}, {1}}})
			return err
		}, lstm.ErrWidth, []string{"sample 0 step 1"}},
		{"Model.Probabilities: empty sequence", func(*testing.T) error {
			_, err := m.Probabilities([][][]float64{{{1, 0}}, {}, {{0, 1}, {1, 0}}})
			return err
		}, lstm.ErrEmpty, []string{"sample 1"}},
		{"Model.Probabilities: Inf", func(*testing.T) error {
			_, err := m.Probabilities([][][]float64{{{1, 0}}, {{0, math.Inf(-1)}}})
			return err
		}, lstm.ErrNaN, []string{"sample 1 step 0 feature 1"}},
		{"Predictor.Probabilities: NaN", func(*testing.T) error {
			_, err := m.Predictor().Probabilities([][][]float64{{{1, 0}}, {{nan, 0}}})
			return err
		}, lstm.ErrNaN, []string{"sample 1 step 0 feature 0"}},

		{"Load: not JSON", load("PK\x03\x04"), lstm.ErrFormat, nil},
		{"Load: truncated", load(saved.String()[:saved.Len()/2]), lstm.ErrFormat, nil},
		{"Load: another format", load(`{"format":"keras","version":1}`), lstm.ErrFormat, []string{`"keras"`}},
		{"Load: another version", load(strings.Replace(saved.String(), `"version":1`, `"version":9`, 1)), lstm.ErrFormat, []string{"version 9"}},
		{"Load: weights missing", load(saved.String()[:strings.Index(saved.String(), `"weights"`)] + `"weights":{}}`), lstm.ErrFormat, []string{"lstm.weight_ih_l0"}},
		{"ImportTorch: not a zip", importTorch([]byte("hello")), lstm.ErrFormat, nil},
		{"ImportTorch: truncated", importTorch(stateDict(t, func(map[string][]int, map[string][]float64) {})[:100]), lstm.ErrFormat, nil},
		{"ImportTorch: missing key", importTorch(stateDict(t, func(s map[string][]int, _ map[string][]float64) { delete(s, "fc.bias") })), lstm.ErrStateDict, []string{`"fc.bias"`}},
		{"ImportTorch: misshaped", importTorch(stateDict(t, func(s map[string][]int, v map[string][]float64) {
			s["lstm.bias_hh_l0"], v["lstm.bias_hh_l0"] = []int{2, 2}, make([]float64, 4)
		})), lstm.ErrStateDict, []string{`"lstm.bias_hh_l0"`, "[2 2]"}},
		{"ImportTorch: bidirectional", importTorch(stateDict(t, func(s map[string][]int, v map[string][]float64) {
			s["lstm.weight_ih_l0_reverse"], v["lstm.weight_ih_l0_reverse"] = []int{4, 2}, make([]float64, 8)
		})), lstm.ErrStateDict, []string{`"lstm.weight_ih_l0_reverse"`}},
		{"ImportTorch: NaN weight", importTorch(stateDict(t, func(_ map[string][]int, v map[string][]float64) { v["fc.weight"][0] = nan })), lstm.ErrNaN, []string{`"fc.weight" element 0`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err(t)
			if !errors.Is(err, tc.is) {
				t.Errorf("errors.Is(%v, %v) is false", err, tc.is)
			}
			errtest.Check(t, err, "lstm: ", tc.place...)
		})
	}
	b := stateDict(t, func(map[string][]int, map[string][]float64) {})
	if _, err := lstm.ImportTorch(bytes.NewReader(b), int64(len(b))); err != nil {
		t.Errorf("the state_dict the cases damage does not import: %v", err)
	}
}
