package lstm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randomData returns n sequences of T one-hot rows over I features (a few
// rows left all-zero, as padding frames are) with random labels of both classes.
func randomData(rnd *rand.Rand, n, T, I int) Data {
	d := Data{X: make([][][]float64, n), Y: make([]int, n)}
	for i := range d.X {
		d.X[i] = make([][]float64, T)
		for t := range d.X[i] {
			row := make([]float64, I)
			if rnd.IntN(4) != 0 {
				row[rnd.IntN(I)] = 1
			}
			d.X[i][t] = row
		}
		d.Y[i] = i % 2
	}
	return d
}

// Finite differences use a central step of fdStep; with float64 and losses
// of order 1, the truncation error O(h²) ≈ 1e-10 and rounding error
// ε/h ≈ 1e-10, so fdTol leaves two orders of margin relative to the gradient scale.
const (
	fdStep = 1e-5
	fdTol  = 1e-7
)

func TestGradients(t *testing.T) {
	for _, tc := range []struct {
		name          string
		I, H, L, T, B int
		newestFirst   bool
	}{
		{"1layer", 5, 3, 1, 4, 3, false},
		{"2layers", 5, 4, 2, 3, 4, false},
		{"3layers-newest-first", 4, 2, 3, 3, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(1, 2))
			m := New(Architecture{Inputs: tc.I, Hidden: tc.H, Layers: tc.L, NewestFirst: tc.newestFirst}, rnd)
			d := randomData(rnd, tc.B, tc.T, tc.I)
			pk, err := pack(d, tc.I, tc.newestFirst, true)
			if err != nil {
				t.Fatal(err)
			}
			batch := make([]int, tc.B)
			for i := range batch {
				batch[i] = i
			}
			nat := newEngine(m, tc.B, tc.T, 0, head64)
			gn := make([]float64, len(m.params))
			nat.lossGrad(pk, batch, gn)

			lossAt := func() float64 {
				p := nat.forward(pk, batch)
				return bce(p, pk.y)
			}
			for i := range m.params {
				w := m.params[i]
				m.params[i] = w + fdStep
				up := lossAt()
				m.params[i] = w - fdStep
				down := lossAt()
				m.params[i] = w
				fd := (up - down) / (2 * fdStep)
				if math.Abs(fd-gn[i]) > fdTol {
					t.Errorf("param %d: finite difference %v, native %v", i, fd, gn[i])
				}
			}
		})
	}
}

// grad32Tol bounds the float32 engine's gradient against the float64 one:
// float32 rounding (6e-8 relative) accumulated through the time steps on
// gradients of order 0.1 gives about 1e-8 (logged); 1e-6 leaves margin.
const grad32Tol = 1e-6

func TestGradientsFloat32(t *testing.T) {
	for _, tc := range []struct {
		name          string
		I, H, L, T, B int
	}{
		{"1layer", 5, 3, 1, 4, 3},
		{"2layers", 7, 16, 2, 5, 9},
		{"published-width", 460, 64, 2, 10, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(3, 4))
			m := New(Architecture{Inputs: tc.I, Hidden: tc.H, Layers: tc.L}, rnd)
			d := randomData(rnd, tc.B, tc.T, tc.I)
			pk, err := pack(d, tc.I, false, true)
			if err != nil {
				t.Fatal(err)
			}
			batch := seqIndices(tc.B)
			g64 := make([]float64, len(m.params))
			g32 := make([]float64, len(m.params))
			l64, p64 := newGradEngine(m, Native, tc.B, tc.T, 0).lossGrad(pk, batch, g64)
			l32, p32 := newGradEngine(m, Native32, tc.B, tc.T, 0).lossGrad(pk, batch, g32)
			if math.Abs(l64-l32) > grad32Tol {
				t.Errorf("loss float64 %v, float32 %v", l64, l32)
			}
			for i := range p64 {
				if math.Abs(p64[i]-p32[i]) > grad32Tol {
					t.Errorf("p[%d] float64 %v, float32 %v", i, p64[i], p32[i])
				}
			}
			var scale, worst float64
			for i := range g64 {
				scale = max(scale, math.Abs(g64[i]))
				worst = max(worst, math.Abs(g64[i]-g32[i]))
				if math.Abs(g64[i]-g32[i]) > grad32Tol {
					t.Fatalf("param %d: float64 %v, float32 %v", i, g64[i], g32[i])
				}
			}
			// The bound must be small against the gradient for the test to mean anything.
			if scale < 100*grad32Tol {
				t.Errorf("largest gradient %v is too small against the tolerance %v", scale, grad32Tol)
			}
			t.Logf("largest gradient %.3g, largest float32 error %.3g", scale, worst)
		})
	}
}
