package lstm

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/crosscluster/crosscluster/internal/npy"
)

// exportOrderCase is the model and data of the export-order golden: a
// newest-first model trained briefly on the hold task (so that its
// probabilities spread), and 400 sequences to decide.
func exportOrderCase(t *testing.T) (*Model, Data) {
	t.Helper()
	rnd := rand.New(rand.NewPCG(2026, 11))
	const T, I = 8, 6
	train := holdTask(rnd, 400, T, I, 2, 3)
	m := New(Architecture{Inputs: I, Hidden: 6, Layers: 2, NewestFirst: true}, rnd)
	if _, err := Train(context.Background(), m, Config{Epochs: 4, BatchSize: 32, Patience: -1, Seed: 3, LearningRate: 0.01}, train, Data{}); err != nil {
		t.Fatal(err)
	}
	return m, holdTask(rnd, 400, T, I, 2, 3)
}

// TestExportTorchKeepsOrder: a newest-first model exported with ExportTorch
// and run in PyTorch 1.13 by testdata/gen_export_order.py (which flips the
// time axis as ExportTorch's doc says) gives Go's probabilities to 1e-12
// and every one of Go's decisions; without the flip half of them (200 of
// 400) would differ. The archive is the state_dict alone (the script loads
// it with strict=True); the row order travels beside it, in
// export_order_model.json.
//
// LSTM_EXPORT_GOLDEN=1 rewrites testdata/export_order_{model,data}.npz and
// export_order_model.json; then run /usr/bin/python3 gen_export_order.py
// in testdata.
func TestExportTorchKeepsOrder(t *testing.T) {
	if os.Getenv("LSTM_EXPORT_GOLDEN") == "1" {
		writeExportOrderGolden(t)
	}
	// The committed model and sequences (written by this test from
	// exportOrderCase), read back through ImportTorch: exporting again
	// gives the same bytes, and the row order comes from the side file.
	committed, err := os.ReadFile("testdata/export_order_model.npz")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ImportTorch(bytes.NewReader(committed), int64(len(committed)))
	if err != nil {
		t.Fatal(err)
	}
	if m.Architecture().NewestFirst {
		t.Fatal("ImportTorch of a bare state_dict gave a newest-first model")
	}
	var framing struct {
		NewestFirst bool `json:"newest_first"`
	}
	if b, err := os.ReadFile("testdata/export_order_model.json"); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &framing); err != nil || !framing.NewestFirst {
		t.Fatalf("export_order_model.json: %s (%v), want newest_first true", b, err)
	}
	var again bytes.Buffer
	if err := m.ExportTorch(&again, true); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), committed) {
		t.Error("ExportTorch of the imported model differs from the file it came from")
	}
	m.newestFirst = framing.NewestFirst
	d := readOrderData(t)
	probs, err := m.Probabilities(d.X)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/export_order_torch.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Torch         string
		Prob          []float64
		ProbUnflipped []float64 `json:"prob_unflipped"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Prob) != len(probs) {
		t.Fatalf("golden has %d probabilities for %d sequences", len(g.Prob), len(probs))
	}
	same, unflippedDiffer, worst := 0, 0, 0.0
	for i, p := range probs {
		worst = math.Max(worst, math.Abs(p-g.Prob[i]))
		release := m.Predict(d.X[i]) >= 0.5
		if (g.Prob[i] >= 0.5) == release {
			same++
		}
		if (g.ProbUnflipped[i] >= 0.5) != release {
			unflippedDiffer++
		}
	}
	if worst > 1e-12 || same != len(probs) {
		t.Errorf("PyTorch (%s) vs Go: max |Δp| %g, %d of %d decisions equal", g.Torch, worst, same, len(probs))
	}
	if unflippedDiffer == 0 {
		t.Error("without the flip PyTorch makes the same decisions: the check cannot tell")
	}
	t.Logf("%d of %d decisions equal (max |Δp| %.2g); without the flip %d would differ", same, len(probs), worst, unflippedDiffer)
}

// readOrderData reads the committed sequences (x: B×T×I).
func readOrderData(t *testing.T) Data {
	t.Helper()
	raw, err := os.ReadFile("testdata/export_order_data.npz")
	if err != nil {
		t.Fatal(err)
	}
	ar, err := npy.OpenArchive(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	a, err := ar.Array("x")
	if err != nil {
		t.Fatal(err)
	}
	x, err := a.Float64()
	if err != nil {
		t.Fatal(err)
	}
	B, T, I := a.Shape[0], a.Shape[1], a.Shape[2]
	d := Data{X: make([][][]float64, B), Y: make([]int, B)}
	for b := range B {
		d.X[b] = make([][]float64, T)
		for s := range T {
			d.X[b][s] = x[(b*T+s)*I : (b*T+s+1)*I]
		}
	}
	return d
}

// writeExportOrderGolden writes the model and sequences the Python script
// reads.
func writeExportOrderGolden(t *testing.T) {
	m, d := exportOrderCase(t)
	var model bytes.Buffer
	if err := m.ExportTorch(&model, true); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("testdata/export_order_model.npz", model.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("testdata/export_order_model.json", []byte(`{"newest_first": true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var data bytes.Buffer
	z := npy.NewZipWriter(&data, false)
	x := make([]float64, 0, len(d.X)*len(d.X[0])*len(d.X[0][0]))
	for _, seq := range d.X {
		for _, row := range seq {
			x = append(x, row...)
		}
	}
	z.Add("x", []int{len(d.X), len(d.X[0]), len(d.X[0][0])}, x)
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("testdata/export_order_data.npz", data.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
