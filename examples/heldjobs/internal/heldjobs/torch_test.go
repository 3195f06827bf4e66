package heldjobs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/crosscluster/crosscluster/internal/npy"
	"github.com/crosscluster/crosscluster/lstm"
)

// torchTol bounds float32 PyTorch against the float64 Go model over a
// sequence of ten steps: float32 rounding of order 1e-7 per operation.
const torchTol = 1e-5

// TestTorchStrict saves model directories (an LSTM and a GRU, newest
// first as the pipeline trains them, and an oldest-first LSTM) and runs the
// loading code of docs/heldjobs.md in PyTorch (testdata/load_torch.py,
// load_state_dict(strict=True), the time axis flipped as model_torch.json
// says): every probability equals Go's to torchTol. It skips when
// /usr/bin/python3 has no torch (Debian's python3-torch).
func TestTorchStrict(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import torch").Run(); err != nil {
		t.Skipf("%s with torch is needed (apt-get install python3-torch): %v", py, err)
	}
	rnd := rand.New(rand.NewPCG(5, 6))
	const B, T, I = 12, 10, 8
	X := make([][][]float64, B)
	flat := make([]float64, 0, B*T*I)
	for b := range X {
		X[b] = make([][]float64, T)
		for s := range X[b] {
			X[b][s] = make([]float64, I)
			X[b][s][rnd.IntN(I)] = 1
			flat = append(flat, X[b][s]...)
		}
	}
	xfile := filepath.Join(t.TempDir(), "x.npz")
	var buf bytes.Buffer
	z := npy.NewZipWriter(&buf, false)
	if err := z.Add("x", []int{B, T, I}, flat); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(xfile, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, a := range []lstm.Architecture{
		{Inputs: I, Hidden: 6, Layers: 2, NewestFirst: true},
		{Inputs: I, Hidden: 6, Layers: 2, NewestFirst: true, Cell: lstm.GRU},
		{Inputs: I, Hidden: 5, Layers: 1},
	} {
		t.Run(fmt.Sprintf("%v/newest_first=%v", a.Cell, a.NewestFirst), func(t *testing.T) {
			m := lstm.New(a, rand.New(rand.NewPCG(1, 2)))
			dir := t.TempDir()
			if _, err := SaveModel(dir, m, ModelInfo{J: 2, M: T, FrameSeconds: 60, E: I / 2, Threshold: 0.5, Forward: !a.NewestFirst}); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(py, filepath.Join("testdata", "load_torch.py"), dir, xfile).CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			var got struct {
				Torch string
				Prob  []float64
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			worst := 0.0
			for i, seq := range X {
				worst = math.Max(worst, math.Abs(got.Prob[i]-m.Predict(seq)))
			}
			t.Logf("torch %s, strict load: worst |Δp| %.2g over %d sequences", got.Torch, worst, B)
			if len(got.Prob) != B || worst > torchTol {
				t.Errorf("PyTorch gives %d probabilities, worst |Δp| %g > %g", len(got.Prob), worst, torchTol)
			}
		})
	}
}
