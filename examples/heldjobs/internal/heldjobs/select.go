package heldjobs

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/crosscluster/crosscluster/sweep"
)

// RunRecord is one run of a search as selection and tracking see it.
type RunRecord struct {
	ID, Slug string
	State    sweep.State
	Attempt  int
	Point    Point
	Params   map[string]sweep.Value // every parameter, base included
	// Dir holds the run's result.json and metrics.jsonl; ModelDir its
	// model (SaveModel).
	Dir, ModelDir string
	Result        *sweep.Result // nil unless completed with a readable result
	Error         string
}

// metric returns a result metric, NaN when absent.
func (r *RunRecord) metric(k string) float64 {
	if r.Result == nil {
		return math.NaN()
	}
	if v, ok := r.Result.Metrics[k]; ok {
		return v
	}
	return math.NaN()
}

// Select returns the index of the best completed run by metric m on the
// validation set (at each run's best epoch), or -1 when no run completed
// with a value. Ties, checked in order, go to: the lower validation loss
// (the higher validation F1 when m is the loss), the model with fewer
// weights, the earlier best epoch, and the smaller run id, so the choice
// never depends on the order of runs or on when they finished.
func Select(runs []RunRecord, m Metric) int {
	tie := ValidLoss
	if m == ValidLoss {
		tie = F1
	}
	best := -1
	for i := range runs {
		r := &runs[i]
		if r.State != sweep.Completed || math.IsNaN(r.metric(m.Key())) {
			continue
		}
		if best < 0 || beats(r, &runs[best], m, tie) {
			best = i
		}
	}
	return best
}

// beats reports whether run a is chosen over run b.
func beats(a, b *RunRecord, m, tie Metric) bool {
	for _, c := range []struct {
		x, y  float64
		lower bool
	}{
		{a.metric(m.Key()), b.metric(m.Key()), m.Lower()},
		{a.metric(tie.Key()), b.metric(tie.Key()), tie.Lower()},
		{a.metric("n_params"), b.metric("n_params"), true},
		{a.metric("best_epoch"), b.metric("best_epoch"), true},
	} {
		if c.x == c.y || (math.IsNaN(c.x) && math.IsNaN(c.y)) {
			continue
		}
		if math.IsNaN(c.y) {
			return true
		}
		if math.IsNaN(c.x) {
			return false
		}
		return c.x < c.y == c.lower
	}
	return a.ID < b.ID
}

// BestModel is bestmodel.json: the chosen run, its value of the metric,
// every parameter, the epoch kept, where its model is, and its test
// scores (measured once, after the choice, on the held-out test set).
type BestModel struct {
	Search    string             `json:"search"`
	RunID     string             `json:"run_id"`
	Slug      string             `json:"slug"`
	Metric    Metric             `json:"metric"`
	Value     float64            `json:"value"`
	Params    map[string]any     `json:"params"`
	Epoch     int                `json:"epoch"`  // the best epoch, whose weights the model holds
	Epochs    int                `json:"epochs"` // epochs trained
	Model     string             `json:"model"`  // the model directory (LoadModel)
	Valid     map[string]float64 `json:"valid"`
	Test      map[string]float64 `json:"test"`
	Runs      int                `json:"runs"`      // runs of the search
	Completed int                `json:"completed"` // of which completed
	TieBreak  string             `json:"tie_break"`
}

// tieBreak documents Select's order.
const tieBreak = "higher metric (lower for valid_loss), then lower validation loss (higher F1 when the metric is the loss), then fewer weights, then earlier best epoch, then smaller run id"

// Best describes run best of runs (Select's index) for bestmodel.info;
// modelDir is the path to record for its model (as the reader will find
// it, e.g. relative to the file).
func Best(name string, runs []RunRecord, best int, m Metric, modelDir string) *BestModel {
	r := &runs[best]
	b := &BestModel{Search: name, RunID: r.ID, Slug: r.Slug, Metric: m, Value: r.metric(m.Key()),
		Params: map[string]any{}, Epoch: int(r.metric("best_epoch")), Epochs: int(r.metric("epochs")),
		Model: modelDir, Valid: map[string]float64{}, Test: map[string]float64{}, Runs: len(runs), TieBreak: tieBreak}
	for k, v := range r.Params {
		switch v.Kind {
		case sweep.Int:
			b.Params[k] = v.Int()
		case sweep.Float:
			b.Params[k] = v.Float()
		case sweep.Bool:
			b.Params[k] = v.Bool()
		default:
			b.Params[k] = v.Lit
		}
	}
	for k, v := range r.Result.Metrics {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		switch {
		case strings.HasPrefix(k, "valid_"):
			b.Valid[strings.TrimPrefix(k, "valid_")] = v
		case strings.HasPrefix(k, "test_"):
			b.Test[strings.TrimPrefix(k, "test_")] = v
		}
	}
	for _, x := range runs {
		if x.State == sweep.Completed {
			b.Completed++
		}
	}
	return b
}

// The files WriteBest writes.
const (
	BestInfoFile = "bestmodel.info"
	BestJSONFile = "bestmodel.json"
)

// WriteBest writes dir/bestmodel.json and dir/bestmodel.info (key: value
// lines, the same content for people and shell scripts), each whole or
// not at all.
func WriteBest(dir string, b *BestModel) error {
	js, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return fmt.Errorf("heldjobs: %w", err)
	}
	var t bytes.Buffer
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	fmt.Fprintf(&t, "# best run of held-job search %q by validation %s\n", b.Search, b.Metric)
	fmt.Fprintf(&t, "run_id: %s\nslug: %s\nmetric: %s\nvalue: %s\nepoch: %d\nepochs: %d\nmodel: %s\n",
		b.RunID, b.Slug, b.Metric, f(b.Value), b.Epoch, b.Epochs, b.Model)
	for _, k := range sortedKeys(b.Params) {
		fmt.Fprintf(&t, "param.%s: %v\n", k, b.Params[k])
	}
	for _, k := range sortedKeys(b.Valid) {
		fmt.Fprintf(&t, "valid.%s: %s\n", k, f(b.Valid[k]))
	}
	for _, k := range sortedKeys(b.Test) {
		fmt.Fprintf(&t, "test.%s: %s\n", k, f(b.Test[k]))
	}
	fmt.Fprintf(&t, "runs: %d\ncompleted: %d\ntie_break: %s\n", b.Runs, b.Completed, b.TieBreak)
	if err := writeAtomic(filepath.Join(dir, BestJSONFile), append(js, '\n')); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, BestInfoFile), t.Bytes())
}

// ReadBest reads dir/bestmodel.json.
func ReadBest(dir string) (*BestModel, error) {
	raw, err := readFile(filepath.Join(dir, BestJSONFile))
	if err != nil {
		return nil, err
	}
	var b BestModel
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("heldjobs: %s: %w", filepath.Join(dir, BestJSONFile), err)
	}
	if b.RunID == "" || !b.Metric.valid() {
		return nil, fmt.Errorf("heldjobs: %s: %w", filepath.Join(dir, BestJSONFile), errors.New("not a best-model record"))
	}
	return &b, nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, cmp.Compare)
	return ks
}
