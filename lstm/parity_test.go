package lstm

import (
	"math"
	"os"
	"testing"

	"github.com/crosscluster/crosscluster/internal/npy"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Golden values in testdata/parity_l{1,2}.npz and f32_l{1,2}.npz were
// written by testdata/gen_parity.py with torch 1.13.0a0 and numpy 1.24.2
// (Debian bookworm python3-torch; see testdata/VERSIONS.txt):
//
//	cd lstm/testdata && /usr/bin/python3 gen_parity.py
const (
	// parityTol is the bound for forward outputs and updated
	// weights against PyTorch.
	parityTol = 1e-5
	// parity64Tol is what float64 on both sides actually allows: the same
	// operations in a different order, a few ulps of values of order 1.
	// Adam's division by √v can amplify gradient rounding where v is tiny,
	// hence not 1e-15.
	parity64Tol = 1e-9
)

// openFixture opens a committed PyTorch fixture.
func openFixture(t *testing.T, name string) (*npy.Archive, []byte) {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatalf("fixture %s missing (generate it with testdata/gen_parity.py): %v", name, err)
	}
	ar, err := npy.OpenArchive(bytesReaderAt(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return ar, b
}

type bytesReaderAt []byte

func (b bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(b)) {
		return 0, os.ErrInvalid
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, os.ErrInvalid
	}
	return n, nil
}

func floats(t *testing.T, ar *npy.Archive, key string) ([]float64, []int) {
	t.Helper()
	a, err := ar.Array(key)
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	v, err := a.Float64()
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return v, a.Shape
}

// fixtureData turns the fixture's x (B×T×I) and y into Data.
func fixtureData(t *testing.T, ar *npy.Archive, withY bool) Data {
	x, shape := floats(t, ar, "x")
	B, T, I := shape[0], shape[1], shape[2]
	d := Data{X: make([][][]float64, B), Y: make([]int, B)}
	for b := range B {
		d.X[b] = make([][]float64, T)
		for s := range T {
			d.X[b][s] = x[(b*T+s)*I : (b*T+s+1)*I]
		}
	}
	if withY {
		y, _ := floats(t, ar, "y")
		for b, v := range y {
			d.Y[b] = int(v)
		}
	}
	return d
}

func TestTorchParity(t *testing.T) {
	for _, layers := range []string{"l1", "l2"} {
		t.Run(layers, func(t *testing.T) {
			ar, raw := openFixture(t, "parity_"+layers+".npz")
			m, err := ImportTorch(bytesReaderAt(raw), int64(len(raw)))
			if err != nil {
				t.Fatal(err)
			}
			d := fixtureData(t, ar, true)
			want, _ := floats(t, ar, "prob")
			got, err := m.Probabilities(d.X)
			if err != nil {
				t.Fatal(err)
			}
			// Predict (single sequence) takes a different code path.
			single := make([]float64, len(d.X))
			for i, seq := range d.X {
				single[i] = m.Predict(seq)
			}
			for _, tol := range []float64{parityTol, parity64Tol} {
				if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, tol)); diff != "" {
					t.Errorf("Probabilities vs torch within %g (-torch +go):\n%s", tol, diff)
				}
				if diff := cmp.Diff(want, single, cmpopts.EquateApprox(0, tol)); diff != "" {
					t.Errorf("Predict vs torch within %g (-torch +go):\n%s", tol, diff)
				}
			}
			wantLoss, _ := floats(t, ar, "loss")
			pk, err := pack(d, m.inputs, false, true)
			if err != nil {
				t.Fatal(err)
			}
			if _, loss := predictPacked(m, pk, 3, 0); math.Abs(loss-wantLoss[0]) > parity64Tol {
				t.Errorf("loss %v, torch %v", loss, wantLoss[0])
			}

			lr, _ := floats(t, ar, "lr")
			clip, _ := floats(t, ar, "clip")
			for _, engine := range []Engine{Native, Native32} {
				// float32 gradients meet the bound, not the float64 one.
				tol := parity64Tol * lr[0]
				if engine == Native32 {
					tol = parityTol
				}
				for _, prefix := range []string{"sgd/", "clip/"} {
					cfg := Config{Optimizer: SGD, LearningRate: lr[0], BatchSize: pk.n, Engine: engine}
					if prefix == "clip/" {
						cfg.ClipNorm = clip[0]
					}
					mm := m.Clone()
					tr := newTrainer(mm, cfg, pk)
					if _, _, err := tr.step(seqIndices(pk.n)); err != nil {
						t.Fatal(err)
					}
					for _, e := range mm.stateDict() {
						want, _ := floats(t, ar, prefix+e.key)
						if diff := cmp.Diff(want, e.data, cmpopts.EquateApprox(0, tol)); diff != "" {
							t.Errorf("engine %d, %s step, %s: gradient differs (-torch +go):\n%s", engine, prefix, e.key, diff)
						}
					}
				}
			}
			for _, engine := range []Engine{Native} {
				mm := m.Clone()
				tr := newTrainer(mm, Config{LearningRate: lr[0], BatchSize: pk.n, Engine: engine}, pk)
				batch := seqIndices(pk.n)
				for step := 1; step <= 2; step++ {
					if _, _, err := tr.step(batch); err != nil {
						t.Fatal(err)
					}
					for _, e := range mm.stateDict() {
						want, _ := floats(t, ar, "step"+string(rune('0'+step))+"/"+e.key)
						for _, tol := range []float64{parityTol, parity64Tol} {
							if diff := cmp.Diff(want, e.data, cmpopts.EquateApprox(0, tol)); diff != "" {
								t.Errorf("engine %d, Adam step %d, %s within %g (-torch +go):\n%s", engine, step, e.key, tol, diff)
							}
						}
					}
				}
			}
		})
	}
}

// TestTorchParityFloat32 imports PyTorch's default float32 state_dict and
// compares with the float32 forward pass PyTorch ran.
func TestTorchParityFloat32(t *testing.T) {
	for _, layers := range []string{"l1", "l2"} {
		t.Run(layers, func(t *testing.T) {
			ar, raw := openFixture(t, "f32_"+layers+".npz")
			m, err := ImportTorch(bytesReaderAt(raw), int64(len(raw)))
			if err != nil {
				t.Fatal(err)
			}
			d := fixtureData(t, ar, false)
			want, _ := floats(t, ar, "prob")
			got, err := m.Probabilities(d.X)
			if err != nil {
				t.Fatal(err)
			}
			// float32 arithmetic in torch against float64 here: float32's
			// 6e-8 relative rounding over a few dozen operations stays well
			// inside the bound.
			if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, parityTol)); diff != "" {
				t.Errorf("Model (-torch +go):\n%s", diff)
			}
			got32, err := m.Predictor().Probabilities(d.X)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got32, cmpopts.EquateApprox(0, parityTol)); diff != "" {
				t.Errorf("Predictor (-torch +go):\n%s", diff)
			}
		})
	}
}

// seqIndices returns 0, 1, ..., n-1.
func seqIndices(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
