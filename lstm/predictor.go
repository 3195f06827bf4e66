package lstm

import "math"

// Predictor is a float32 copy of a Model for fast batched inference: the
// weights and the arithmetic are float32, as in a PyTorch model in its
// default dtype, so its probabilities differ from the Model's float64 ones
// by about 1e-7. It does not change when the Model is trained further.
//
// A Predictor is safe for concurrent use.
type Predictor struct {
	inputs, hidden, layers int
	newestFirst            bool
	lay                    []layer32
	fcW                    []float32
	fcB                    float32
}

type layer32 struct {
	wih, whh []float32 // in×4H and H×4H, as in layerParams
	bias     []float32 // b_ih + b_hh
}

// Predictor returns a float32 snapshot of m.
func (m *Model) Predictor() *Predictor {
	p := &Predictor{inputs: m.inputs, hidden: m.hidden, layers: m.layers, newestFirst: m.newestFirst,
		fcW: to32(m.fcW), fcB: float32(m.fcB[0])}
	for _, lp := range m.lay {
		bias := make([]float32, len(lp.bih))
		for j := range bias {
			bias[j] = float32(lp.bih[j] + lp.bhh[j])
		}
		p.lay = append(p.lay, layer32{wih: to32(lp.wih), whh: to32(lp.whh), bias: bias})
	}
	return p
}

func to32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

// predictorBatch is the number of sequences run through the kernels at once.
const predictorBatch = 256

// Probabilities returns P(release) for every sequence of X (samples × steps
// × features), which must all have the same number of steps. Bad data is
// an error naming the sample and step, as for Model.Probabilities. X is not
// modified.
func (p *Predictor) Probabilities(X [][][]float64) ([]float64, error) {
	pk, err := pack(Data{X: X, Y: make([]int, len(X))}, p.inputs, p.newestFirst, false)
	if err != nil {
		return nil, err
	}
	bs := min(predictorBatch, pk.n)
	w := newWork32(p, bs)
	out := make([]float64, pk.n)
	batch := make([]int, 0, bs)
	for start := 0; start < pk.n; start += bs {
		batch = batch[:0]
		for s := start; s < min(start+bs, pk.n); s++ {
			batch = append(batch, s)
		}
		p.forward(w, pk, batch, out[start:])
	}
	return out, nil
}

type work32 struct {
	g    []float32
	h, c [][]float32
	tc   []float32
}

func newWork32(p *Predictor, B int) *work32 {
	w := &work32{g: make([]float32, B*4*p.hidden), tc: make([]float32, p.hidden)}
	for range p.layers {
		w.h = append(w.h, make([]float32, B*p.hidden))
		w.c = append(w.c, make([]float32, B*p.hidden))
	}
	return w
}

// forward writes the probabilities of batch into out; the same steps as
// Model.inferBatch in float32.
func (p *Predictor) forward(w *work32, d *packed, batch []int, out []float64) {
	B, H := len(batch), p.hidden
	H4 := 4 * H
	for l := range p.lay {
		clear(w.h[l][:B*H])
		clear(w.c[l][:B*H])
	}
	G := w.g[:B*H4]
	for t := range d.T {
		for l := range p.lay {
			lp := &p.lay[l]
			for b := range B {
				copy(G[b*H4:(b+1)*H4], lp.bias)
			}
			if l == 0 {
				for b, s := range batch {
					idx, val := d.row(s, t)
					gb := G[b*H4 : (b+1)*H4]
					for n, k := range idx {
						axpy32(float32(val[n]), lp.wih[int(k)*H4:(int(k)+1)*H4], gb)
					}
				}
			} else {
				gemmAcc32(B, H4, H, w.h[l-1], H, 1, lp.wih, H4, G, H4)
			}
			if t > 0 {
				gemmAcc32(B, H4, H, w.h[l], H, 1, lp.whh, H4, G, H4)
			}
			for b := range B {
				cb, hb := w.c[l][b*H:(b+1)*H], w.h[l][b*H:(b+1)*H]
				cellForward32(G[b*H4:(b+1)*H4], cb, w.tc, hb)
			}
		}
	}
	last := w.h[p.layers-1]
	for b := range B {
		z := p.fcB
		for j, v := range last[b*H : (b+1)*H] {
			z += p.fcW[j] * v
		}
		out[b] = 1 / (1 + math.Exp(-float64(z)))
	}
}

// cellForward32 is cellForward in float32 with the state c updated in place.
func cellForward32(g, c, tc, h []float32) {
	H := len(c)
	sigmoid32(g[:2*H])
	tanh32(g[2*H : 3*H])
	sigmoid32(g[3*H:])
	gi, gf, gg, gO := g[:H], g[H:2*H], g[2*H:3*H], g[3*H:4*H]
	for j := range c {
		c[j] = gf[j]*c[j] + gi[j]*gg[j]
	}
	copy(tc, c)
	tanh32(tc)
	for j := range h {
		h[j] = gO[j] * tc[j]
	}
}

func sigmoid32(x []float32) {
	n := 0
	if useFMA {
		n = len(x) &^ 7
		vsigmoid32(x[:n])
	}
	for i := n; i < len(x); i++ {
		x[i] = float32(1 / (1 + math.Exp(-float64(x[i]))))
	}
}

func tanh32(x []float32) {
	n := 0
	if useFMA {
		n = len(x) &^ 7
		vtanh32(x[:n])
	}
	for i := n; i < len(x); i++ {
		x[i] = float32(math.Tanh(float64(x[i])))
	}
}

// axpy32 sets y += a·x.
func axpy32(a float32, x, y []float32) {
	x = x[:len(y)]
	n := 0
	if useFMA && len(y) >= 32 {
		n = len(y) &^ 31
		axpy32FMA(a, x, y[:n])
	}
	for i := n; i < len(y); i++ {
		y[i] += a * x[i]
	}
}

// gemmAcc32 is gemmAcc in float32, with 4×16 assembly blocks.
func gemmAcc32(R, C, n int, c []float32, cRow, cStep int, w []float32, wStride int, d []float32, dStride int) {
	if R == 0 || C == 0 || n == 0 {
		return
	}
	if (R-1)*cRow+(n-1)*cStep >= len(c) || (n-1)*wStride+C > len(w) || (R-1)*dStride+C > len(d) {
		panic("lstm: kernel operand out of range")
	}
	r := 0
	if useFMA {
		for ; r+4 <= R; r += 4 {
			j := 0
			for ; j+16 <= C; j += 16 {
				kern4x16s(n, &c[r*cRow], cRow, cStep, &w[j], wStride, &d[r*dStride+j], dStride)
			}
			for rr := r; rr < r+4; rr++ {
				gemmAcc32Go(rr, j, C, n, c, cRow, cStep, w, wStride, d, dStride)
			}
		}
	}
	for ; r < R; r++ {
		gemmAcc32Go(r, 0, C, n, c, cRow, cStep, w, wStride, d, dStride)
	}
}

func gemmAcc32Go(r, j0, C, n int, c []float32, cRow, cStep int, w []float32, wStride int, d []float32, dStride int) {
	if j0 >= C {
		return
	}
	dr := d[r*dStride+j0 : r*dStride+C]
	for p := range n {
		if v := c[r*cRow+p*cStep]; v != 0 {
			axpy32(v, w[p*wStride+j0:p*wStride+C], dr)
		}
	}
}
