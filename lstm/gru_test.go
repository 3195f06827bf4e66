package lstm

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// Golden values in testdata/gru_l{1,2}.npz were written by
// testdata/gen_gru.py with the torch and numpy versions in
// testdata/VERSIONS_GRU.txt (Debian python3-torch):
//
//	cd lstm/testdata && /usr/bin/python3 gen_gru.py
//
// TestGRUTorchParity holds the GRU to the LSTM's bounds (parityTol, and
// parity64Tol for float64 on both sides) and logs the worst differences.
func TestGRUTorchParity(t *testing.T) {
	for _, layers := range []string{"l1", "l2"} {
		t.Run(layers, func(t *testing.T) {
			ar, raw := openFixture(t, "gru_"+layers+".npz")
			m, err := ImportTorch(bytesReaderAt(raw), int64(len(raw)))
			if err != nil {
				t.Fatal(err)
			}
			if m.Architecture().Cell != GRU {
				t.Fatalf("imported a %v, want a GRU", m.Architecture().Cell)
			}
			d := fixtureData(t, ar, true)
			want, _ := floats(t, ar, "prob")
			got, err := m.Probabilities(d.X)
			if err != nil {
				t.Fatal(err)
			}
			worst := 0.0
			for i, seq := range d.X {
				worst = max(worst, math.Abs(got[i]-want[i]), math.Abs(m.Predict(seq)-want[i]))
			}
			t.Logf("forward: worst |go - torch| %.3g", worst)
			if worst > parity64Tol {
				t.Errorf("forward differs from torch by %g > %g", worst, parity64Tol)
			}
			pk, err := pack(d, m.inputs, false, true)
			if err != nil {
				t.Fatal(err)
			}
			wantLoss, _ := floats(t, ar, "loss")
			if _, loss := predictPacked(m, pk, 3, 0); math.Abs(loss-wantLoss[0]) > parity64Tol {
				t.Errorf("loss %v, torch %v", loss, wantLoss[0])
			}
			lr, _ := floats(t, ar, "lr")
			clip, _ := floats(t, ar, "clip")
			check := func(name string, mm *Model, prefix string, tol float64) {
				worst := 0.0
				for _, e := range mm.stateDict() {
					want, shape := floats(t, ar, prefix+e.key)
					if len(want) != len(e.data) {
						t.Fatalf("%s: %s has %d values (shape %v), go %d", name, e.key, len(want), shape, len(e.data))
					}
					for i := range want {
						worst = max(worst, math.Abs(want[i]-e.data[i]))
					}
				}
				t.Logf("%s: worst |go - torch| over the weights %.3g", name, worst)
				if worst > tol {
					t.Errorf("%s: weights differ from torch by %g > %g", name, worst, tol)
				}
			}
			for _, prefix := range []string{"sgd/", "clip/"} {
				cfg := Config{Optimizer: SGD, LearningRate: lr[0], BatchSize: pk.n}
				if prefix == "clip/" {
					cfg.ClipNorm = clip[0]
				}
				mm := m.Clone()
				if _, _, err := newTrainer(mm, cfg, pk).step(seqIndices(pk.n)); err != nil {
					t.Fatal(err)
				}
				// SGD moves by lr × gradient: the gradient itself to parity64Tol.
				check(prefix+" step", mm, prefix, parity64Tol*lr[0])
			}
			mm := m.Clone()
			tr := newTrainer(mm, Config{LearningRate: lr[0], BatchSize: pk.n}, pk)
			for step := 1; step <= 2; step++ {
				if _, _, err := tr.step(seqIndices(pk.n)); err != nil {
					t.Fatal(err)
				}
				check("Adam step "+string(rune('0'+step)), mm, "step"+string(rune('0'+step))+"/", parity64Tol)
			}
		})
	}
}

// TestGRURoundTrip saves, loads, exports and imports a GRU and checks the
// weights and probabilities survive to the bit (float64 export).
func TestGRURoundTrip(t *testing.T) {
	rnd := rand.New(rand.NewPCG(4, 5))
	m := New(Architecture{Inputs: 3, Hidden: 4, Layers: 2, Cell: GRU}, rnd)
	d := holdTask(rnd, 16, 5, 3, 1, 1)
	want, err := m.Probabilities(d.X)
	if err != nil {
		t.Fatal(err)
	}
	var saved, torch bytes.Buffer
	if err := m.Save(&saved); err != nil {
		t.Fatal(err)
	}
	if err := m.ExportTorch(&torch, true); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(&saved)
	if err != nil {
		t.Fatal(err)
	}
	imported, err := ImportTorch(bytes.NewReader(torch.Bytes()), int64(torch.Len()))
	if err != nil {
		t.Fatal(err)
	}
	for name, mm := range map[string]*Model{"Load": loaded, "ImportTorch": imported} {
		if mm.Architecture() != m.Architecture() {
			t.Errorf("%s: architecture %+v, want %+v", name, mm.Architecture(), m.Architecture())
		}
		got, err := mm.Probabilities(d.X)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: sample %d: %v, want %v", name, i, got[i], want[i])
			}
		}
	}
}

// TestGRUTrains checks a GRU learns the hold task through Train, with the
// same bits on one worker and many.
func TestGRUTrains(t *testing.T) {
	rnd := rand.New(rand.NewPCG(6, 7))
	train, valid := holdTask(rnd, 256, 5, 3, 1, 1), holdTask(rnd, 64, 5, 3, 1, 1)
	var params [][]float64
	for _, workers := range []int{1, 3} {
		m := New(Architecture{Inputs: 3, Hidden: 6, Layers: 1, Cell: GRU, NewestFirst: true}, rand.New(rand.NewPCG(1, 1)))
		hist, err := Train(t.Context(), m, Config{LearningRate: 0.03, BatchSize: 32, Epochs: 15, Seed: 3, Workers: workers}, train, valid)
		if err != nil {
			t.Fatal(err)
		}
		if f1 := hist.Epochs[hist.BestEpoch-1].Valid.F1; f1 < 0.9 {
			t.Errorf("workers %d: best validation F1 %.3f, want ≥ 0.9", workers, f1)
		}
		params = append(params, m.Params())
	}
	for i := range params[0] {
		if params[0][i] != params[1][i] {
			t.Fatalf("parameter %d differs between 1 and 3 workers", i)
		}
	}
}
