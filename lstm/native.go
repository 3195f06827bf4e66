package lstm

import (
	"math"

	"github.com/crosscluster/crosscluster/internal/vmath"
)

// native is the hand-derived engine: a batched forward pass that keeps every
// activation, and backpropagation through time over it.
type native struct {
	m     *Model
	B, T  int           // capacity: batch size and steps
	gates [][][]float64 // [layer][step] B×4H activated gates (i, f, g, o)
	c, tc [][][]float64 // [layer][step] B×H cell state and tanh(cell)
	h     [][][]float64 // [layer][step] B×H hidden state
	p     []float64     // B probabilities
	dA    []float64     // B×4H
	dh    []float64     // B×H
	dc    []float64     // B×H
	dhNew []float64     // B×H
	up    [][]float64   // [step] B×H gradient arriving from the layer above
	down  [][]float64   // [step] B×H gradient sent to the layer below
	wT    []float64     // 4H×H transpose of a weight matrix, for D·Wᵀ
	uT    []float64     // 4H×H transpose of the other
}

func newNative(m *Model, B, T int) *native {
	H, L := m.hidden, m.layers
	e := &native{m: m, B: B, T: T}
	alloc := func(n int) [][][]float64 {
		out := make([][][]float64, L)
		for l := range out {
			out[l] = make([][]float64, T)
			buf := make([]float64, T*B*n)
			for t := range out[l] {
				out[l][t] = buf[t*B*n : (t+1)*B*n]
			}
		}
		return out
	}
	e.gates = alloc(4 * H)
	e.c, e.tc, e.h = alloc(H), alloc(H), alloc(H)
	e.p = make([]float64, B)
	e.dA = make([]float64, B*4*H)
	e.dh = make([]float64, B*H)
	e.dc = make([]float64, B*H)
	e.dhNew = make([]float64, B*H)
	e.wT = make([]float64, 4*H*H)
	e.uT = make([]float64, 4*H*H)
	e.up = make([][]float64, T)
	e.down = make([][]float64, T)
	for t := range T {
		e.up[t] = make([]float64, B*H)
		e.down[t] = make([]float64, B*H)
	}
	return e
}

// forward computes the probabilities of the samples in batch, keeping the
// activations for backward. It returns e.p[:len(batch)].
func (e *native) forward(d *packed, batch []int) []float64 {
	m := e.m
	B, T, H := len(batch), d.T, m.hidden
	H4 := 4 * H
	for l := range m.lay {
		lp := &m.lay[l]
		for t := range T {
			G := e.gates[l][t][:B*H4]
			for b := range B {
				gb := G[b*H4 : (b+1)*H4]
				for j := range gb {
					gb[j] = lp.bih[j] + lp.bhh[j]
				}
			}
			if l == 0 {
				for b, s := range batch {
					idx, val := d.row(s, t)
					gb := G[b*H4 : (b+1)*H4]
					for n, k := range idx {
						axpy(val[n], lp.wih[int(k)*H4:(int(k)+1)*H4], gb)
					}
				}
			} else {
				gemmNN(G, e.h[l-1][t][:B*H], lp.wih, B, H, H4)
			}
			if t > 0 {
				gemmNN(G, e.h[l][t-1][:B*H], lp.whh, B, H, H4)
			}
			c, tc, h := e.c[l][t][:B*H], e.tc[l][t][:B*H], e.h[l][t][:B*H]
			for b := range B {
				gb := G[b*H4 : (b+1)*H4]
				var cp []float64
				if t > 0 {
					cp = e.c[l][t-1][b*H : (b+1)*H]
				}
				cellForward(gb, cp, c[b*H:(b+1)*H], tc[b*H:(b+1)*H], h[b*H:(b+1)*H])
			}
		}
	}
	last := e.h[m.layers-1][T-1]
	for b := range B {
		e.p[b] = sigmoid(m.fcB[0] + dot(m.fcW, last[b*H:(b+1)*H]))
	}
	return e.p[:B]
}

// bceFloor is the lower bound PyTorch's BCELoss puts on each log term; it
// keeps the loss finite when a probability saturates to 0 or 1.
const bceFloor = -100

// bce returns the mean binary cross-entropy of probabilities p against
// labels y, each log clamped at bceFloor as torch.nn.BCELoss does.
func bce(p, y []float64) float64 {
	var s float64
	for i, pi := range p {
		if y[i] == 1 {
			s -= max(math.Log(pi), bceFloor)
		} else {
			s -= max(math.Log(1-pi), bceFloor)
		}
	}
	return s / float64(len(p))
}

// lossGrad runs forward and backward over batch, adds the gradient of the
// mean BCE to grad (laid out as Model.params) and returns the loss and the
// probabilities.
func (e *native) lossGrad(d *packed, batch []int, grad []float64) (float64, []float64) {
	m := e.m
	p := e.forward(d, batch)
	B, T, H := len(batch), d.T, m.hidden
	H4 := 4 * H
	y := make([]float64, B)
	for b, s := range batch {
		y[b] = d.y[s]
	}
	loss := bce(p, y)

	g := gradViews(m, grad)
	// Head: dL/dz = (p - y)/B for sigmoid followed by BCE.
	last := e.h[m.layers-1][T-1]
	for t := range T {
		clear(e.up[t][:B*H])
	}
	top := e.up[T-1][:B*H]
	for b := range B {
		dz := (p[b] - y[b]) / float64(B)
		axpy(dz, last[b*H:(b+1)*H], g.fcW)
		g.fcB[0] += dz
		axpy(dz, m.fcW, top[b*H:(b+1)*H])
	}

	for l := m.layers - 1; l >= 0; l-- {
		lp, gl := &m.lay[l], &g.lay[l]
		transposeInto(e.uT, lp.whh, H, H4)
		if l > 0 {
			transposeInto(e.wT, lp.wih, H, H4)
		}
		dhNext, dcNext, dhNew := e.dh[:B*H], e.dc[:B*H], e.dhNew[:B*H]
		clear(dhNext)
		clear(dcNext)
		for t := T - 1; t >= 0; t-- {
			G := e.gates[l][t][:B*H4]
			tc := e.tc[l][t][:B*H]
			up := e.up[t][:B*H]
			dA := e.dA[:B*H4]
			for b := range B {
				gb := G[b*H4 : (b+1)*H4]
				ab := dA[b*H4 : (b+1)*H4]
				var cp []float64
				if t > 0 {
					cp = e.c[l][t-1][b*H : (b+1)*H]
				}
				for j := range H {
					i, f, gg, o := gb[j], gb[H+j], gb[2*H+j], gb[3*H+j]
					tcv := tc[b*H+j]
					dh := up[b*H+j] + dhNext[b*H+j]
					dc := dcNext[b*H+j] + dh*o*(1-tcv*tcv)
					var cprev float64
					if cp != nil {
						cprev = cp[j]
					}
					ab[j] = dc * gg * i * (1 - i)
					ab[H+j] = dc * cprev * f * (1 - f)
					ab[2*H+j] = dc * i * (1 - gg*gg)
					ab[3*H+j] = dh * tcv * o * (1 - o)
					dcNext[b*H+j] = dc * f
				}
				axpy(1, ab, gl.bih)
				axpy(1, ab, gl.bhh)
			}
			if l == 0 {
				for b, s := range batch {
					idx, val := d.row(s, t)
					ab := dA[b*H4 : (b+1)*H4]
					for n, k := range idx {
						axpy(val[n], ab, gl.wih[int(k)*H4:(int(k)+1)*H4])
					}
				}
			} else {
				gemmTN(gl.wih, e.h[l-1][t][:B*H], dA, B, H, H4)
				down := e.down[t][:B*H]
				clear(down)
				gemmNT(down, dA, e.wT, B, H, H4)
			}
			if t > 0 {
				gemmTN(gl.whh, e.h[l][t-1][:B*H], dA, B, H, H4)
				clear(dhNew)
				gemmNT(dhNew, dA, e.uT, B, H, H4)
				dhNext, dhNew = dhNew, dhNext
			}
		}
		e.up, e.down = e.down, e.up
	}
	return loss, p
}

// gradViews lays out a gradient vector like the model's parameters.
func gradViews(m *Model, grad []float64) *Model {
	if len(grad) != len(m.params) {
		panic("lstm: gradient length mismatch")
	}
	g := &Model{inputs: m.inputs, hidden: m.hidden, layers: m.layers, params: grad}
	g.bind()
	return g
}

// cellForward turns the pre-activations g (blocks i, f, g, o of H) into
// the activated gates in place and computes the new cell state c, tanh(c)
// into tc and the hidden state h from the previous cell state cp (nil for
// zero).
func cellForward(g, cp, c, tc, h []float64) {
	H := len(c)
	vmath.Sigmoid(g[:2*H])
	vmath.Tanh(g[2*H : 3*H])
	vmath.Sigmoid(g[3*H:])
	gi, gf, gg, gO := g[:H], g[H:2*H], g[2*H:3*H], g[3*H:4*H]
	if cp == nil {
		for j := range c {
			c[j] = gi[j] * gg[j]
		}
	} else {
		cp = cp[:H]
		for j := range c {
			c[j] = gf[j]*cp[j] + gi[j]*gg[j]
		}
	}
	copy(tc, c)
	vmath.Tanh(tc)
	for j := range h {
		h[j] = gO[j] * tc[j]
	}
}

// inferBatchWork holds the buffers of the batched forward pass used for
// inference, which keeps only the current state of each layer.
type inferBatchWork struct {
	g     []float64   // B×4H
	h, c  [][]float64 // [layer] B×H
	tc, p []float64
	bias  []float64 // [layer] 4H, b_ih + b_hh
}

func newInferBatchWork(m *Model, B int) *inferBatchWork {
	w := &inferBatchWork{g: make([]float64, B*4*m.hidden), tc: make([]float64, m.hidden), p: make([]float64, B),
		bias: make([]float64, m.layers*4*m.hidden)}
	for range m.layers {
		w.h = append(w.h, make([]float64, B*m.hidden))
		w.c = append(w.c, make([]float64, B*m.hidden))
	}
	return w
}

// inferBatch returns the probabilities of the samples in batch. It computes
// the same values as native.forward, step by step across the layers.
func (m *Model) inferBatch(w *inferBatchWork, d *packed, batch []int) []float64 {
	B, H := len(batch), m.hidden
	H4 := 4 * H
	for l := range m.lay {
		clear(w.h[l][:B*H])
		clear(w.c[l][:B*H])
	}
	G := w.g[:B*H4]
	for l := range m.lay {
		lp := &m.lay[l]
		for j := range H4 {
			w.bias[l*H4+j] = lp.bih[j] + lp.bhh[j]
		}
	}
	for t := range d.T {
		for l := range m.lay {
			lp := &m.lay[l]
			bias := w.bias[l*H4 : (l+1)*H4]
			for b := range B {
				copy(G[b*H4:(b+1)*H4], bias)
			}
			if l == 0 {
				for b, s := range batch {
					idx, val := d.row(s, t)
					gb := G[b*H4 : (b+1)*H4]
					for n, k := range idx {
						axpy(val[n], lp.wih[int(k)*H4:(int(k)+1)*H4], gb)
					}
				}
			} else {
				gemmNN(G, w.h[l-1][:B*H], lp.wih, B, H, H4)
			}
			if t > 0 {
				gemmNN(G, w.h[l][:B*H], lp.whh, B, H, H4)
			}
			for b := range B {
				cb, hb := w.c[l][b*H:(b+1)*H], w.h[l][b*H:(b+1)*H]
				cellForward(G[b*H4:(b+1)*H4], cb, cb, w.tc, hb)
			}
		}
	}
	last := w.h[m.layers-1]
	for b := range B {
		w.p[b] = sigmoid(m.fcB[0] + dot(m.fcW, last[b*H:(b+1)*H]))
	}
	return w.p[:B]
}
