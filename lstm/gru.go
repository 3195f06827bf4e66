package lstm

import (
	"fmt"
	"math"

	"github.com/crosscluster/crosscluster/internal/par"
)

// Cell selects the recurrent cell of a model.
type Cell int

const (
	LSTM Cell = iota // torch.nn.LSTM: gates i, f, g, o
	// GRU is torch.nn.GRU: gates r, z, n with
	// r = σ(W_ir x + b_ir + W_hr h + b_hr), z = σ(W_iz x + b_iz + W_hz h + b_hz),
	// n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)), h' = (1 − z) ⊙ n + z ⊙ h.
	// It runs in plain float64 Go loops whatever Config.Engine says.
	GRU
)

// String returns "lstm" or "gru", the names a saved model uses.
func (c Cell) String() string {
	switch c {
	case LSTM:
		return "lstm"
	case GRU:
		return "gru"
	}
	return fmt.Sprintf("Cell(%d)", int(c))
}

// gates is the number of gate blocks of H rows a cell's weights hold.
func (c Cell) gates() int {
	if c == GRU {
		return 3
	}
	return 4
}

// gruLayer is one GRU layer's parameters in PyTorch's layout, views into
// Model.params: W_ih 3H×in and W_hh 3H×H row-major (gate blocks r, z, n),
// b_ih and b_hh 3H.
type gruLayer struct {
	in       int
	wih, whh []float64
	bih, bhh []float64
}

// gruLayers returns the views of m's GRU layers.
func (m *Model) gruLayers() []gruLayer {
	p, H3 := m.params, 3*m.hidden
	take := func(n int) []float64 {
		s := p[:n:n]
		p = p[n:]
		return s
	}
	out := make([]gruLayer, m.layers)
	in := m.inputs
	for l := range out {
		out[l] = gruLayer{in: in, wih: take(H3 * in), whh: take(H3 * m.hidden), bih: take(H3), bhh: take(H3)}
		in = m.hidden
	}
	return out
}

// gruStep is what the backward pass keeps of one step of one layer.
type gruStep struct {
	x, hPrev, r, z, n, hn []float64 // hn = W_hn h + b_hn
}

// gruForward runs the GRU over one sequence (steps × inputs, in the order
// the model reads them) and returns P(release); with keep it also returns
// every layer's steps for the backward pass.
func (m *Model) gruForward(lay []gruLayer, seq [][]float64, keep bool) (float64, [][]gruStep) {
	H := m.hidden
	var saved [][]gruStep
	xs := seq
	var h []float64
	for _, lp := range lay {
		h = make([]float64, H)
		outs := make([][]float64, len(xs))
		var steps []gruStep
		if keep {
			steps = make([]gruStep, len(xs))
		}
		gi, gh := make([]float64, 3*H), make([]float64, 3*H)
		for t, x := range xs {
			st := gruStep{x: x, hPrev: h, r: make([]float64, H), z: make([]float64, H), n: make([]float64, H), hn: make([]float64, H)}
			next := make([]float64, H)
			// W_ih x over the non-zero inputs only (one-hot rows have a
			// few), in input order; W_hh h row by row.
			copy(gi, lp.bih)
			for k, xk := range x {
				if xk != 0 {
					for r := range gi {
						gi[r] += lp.wih[r*lp.in+k] * xk
					}
				}
			}
			for r := range gh {
				gh[r] = lp.bhh[r] + dot(lp.whh[r*H:(r+1)*H], h)
			}
			for j := range H {
				r := sigmoid(gi[j] + gh[j])
				z := sigmoid(gi[H+j] + gh[H+j])
				hn := gh[2*H+j]
				n := math.Tanh(gi[2*H+j] + r*hn)
				st.r[j], st.z[j], st.n[j], st.hn[j] = r, z, n, hn
				next[j] = (1-z)*n + z*h[j]
			}
			if keep {
				steps[t] = st
			}
			outs[t], h = next, next
		}
		saved = append(saved, steps)
		xs = outs
	}
	return sigmoid(m.fcB[0] + dot(m.fcW, h)), saved
}

// gruLossGrad returns the mean binary cross-entropy of b under the GRU m
// and each sample's probability, adding the gradient to grad (laid out as
// m.params). Samples are processed one after another in order, so the sums
// have one order.
func (m *Model) gruLossGrad(b Batch, grad []float64) (float64, []float64) {
	H := m.hidden
	lay := m.gruLayers()
	glay := (&Model{inputs: m.inputs, hidden: H, layers: m.layers, cell: GRU, params: grad}).gruLayers()
	gfcW, gfcB := grad[len(grad)-H-1:len(grad)-1], grad[len(grad)-1:]
	prob := make([]float64, b.B)
	seq := make([][]float64, b.T)
	for s := range b.B {
		for t := range b.T {
			seq[t] = b.X[t][s*b.I : (s+1)*b.I]
		}
		p, saved := m.gruForward(lay, seq, true)
		prob[s] = p
		dlogit := (p - b.Y[s]) / float64(b.B)
		top := saved[len(saved)-1]
		last := top[len(top)-1]
		for j := range H {
			hj := (1-last.z[j])*last.n[j] + last.z[j]*last.hPrev[j]
			gfcW[j] += dlogit * hj
		}
		gfcB[0] += dlogit
		// dOut[t] is the gradient with respect to the layer's output at t.
		dOut := make([][]float64, b.T)
		for t := range dOut {
			dOut[t] = make([]float64, H)
		}
		for j := range H {
			dOut[b.T-1][j] = dlogit * m.fcW[j]
		}
		for l := len(lay) - 1; l >= 0; l-- {
			lp, gp, steps := lay[l], glay[l], saved[l]
			dIn := make([][]float64, b.T)
			dh := make([]float64, H)
			dgi, dgh := make([]float64, 3*H), make([]float64, 3*H)
			for t := b.T - 1; t >= 0; t-- {
				st := steps[t]
				for j := range H {
					dh[j] += dOut[t][j]
				}
				for j := range H {
					r, z, n := st.r[j], st.z[j], st.n[j]
					dn := dh[j] * (1 - z)
					dz := dh[j] * (st.hPrev[j] - n)
					dan := dn * (1 - n*n)
					dr := dan * st.hn[j]
					dar := dr * r * (1 - r)
					daz := dz * z * (1 - z)
					dgi[j], dgi[H+j], dgi[2*H+j] = dar, daz, dan
					dgh[j], dgh[H+j], dgh[2*H+j] = dar, daz, dan*r
					dh[j] *= z // the direct path to h_{t-1}
				}
				var dx []float64
				if l > 0 {
					dx = make([]float64, lp.in)
				}
				for g := range 3 * H {
					gi, gh := dgi[g], dgh[g]
					gp.bih[g] += gi
					gp.bhh[g] += gh
					wi, gw := lp.wih[g*lp.in:(g+1)*lp.in], gp.wih[g*lp.in:(g+1)*lp.in]
					for k, xk := range st.x {
						if xk != 0 {
							gw[k] += gi * xk
						}
					}
					if dx != nil {
						for k, w := range wi {
							dx[k] += gi * w
						}
					}
					wh, gwh := lp.whh[g*H:(g+1)*H], gp.whh[g*H:(g+1)*H]
					for k := range H {
						gwh[k] += gh * st.hPrev[k]
						dh[k] += gh * wh[k]
					}
				}
				dIn[t] = dx
			}
			dOut = dIn
		}
	}
	return bce(prob, b.Y), prob
}

// gruProbabilities sets out[i] to P(release) of X[i], every sequence read in
// the model's order, on every core.
func (m *Model) gruProbabilities(X [][][]float64, out []float64) {
	lay := m.gruLayers()
	par.For(len(X), 0, func(_, i int) {
		out[i], _ = m.gruForward(lay, m.readOrder(X[i]), false)
	})
}

// readOrder returns seq in the order the model reads it: reversed when the
// rows run newest first.
func (m *Model) readOrder(seq [][]float64) [][]float64 {
	if !m.newestFirst {
		return seq
	}
	r := make([][]float64, len(seq))
	for t, row := range seq {
		r[len(seq)-1-t] = row
	}
	return r
}

// gruPacked returns the probabilities of every sample of pk (already in
// read order) and their mean binary cross-entropy.
func (m *Model) gruPacked(pk *packed) ([]float64, float64) {
	out := make([]float64, pk.n)
	lay := m.gruLayers()
	idx := make([]int, pk.n)
	for i := range idx {
		idx[i] = i
	}
	par.For((pk.n+defaultBatch-1)/defaultBatch, 0, func(_, c int) {
		lo, hi := c*defaultBatch, min((c+1)*defaultBatch, pk.n)
		b := pk.dense(idx[lo:hi])
		seq := make([][]float64, b.T)
		for s := range b.B {
			for t := range b.T {
				seq[t] = b.X[t][s*b.I : (s+1)*b.I]
			}
			out[lo+s], _ = m.gruForward(lay, seq, false)
		}
	})
	return out, bce(out, pk.y)
}

// gruLayersIf returns the GRU layers of m, none for an LSTM.
func (m *Model) gruLayersIf() []gruLayer {
	if m.cell != GRU {
		return nil
	}
	return m.gruLayers()
}
