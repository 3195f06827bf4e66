package lstm

// native32 is the native engine in float32: the same forward pass and
// backpropagation through time as native, on float32 copies of the weights
// made at every step, with the gradient added back into the float64 one.
// The optimiser, its state and the master weights stay float64 (mixed
// precision). It runs the float32 kernels, which do twice the work per
// instruction of the float64 ones.
type native32 struct {
	m     *Model
	w, g  *model32 // float32 weights and gradient
	B, T  int
	gates [][][]float32
	c, tc [][][]float32
	h     [][][]float32
	p     []float64
	dA    []float32
	dh    []float32
	dc    []float32
	dhNew []float32
	up    [][]float32
	down  [][]float32
	wT    []float32
	uT    []float32
}

// model32 is a float32 parameter vector with the layout of Model.params.
type model32 struct {
	params []float32
	lay    []layer32p
	fcW    []float32
	fcB    []float32
}

type layer32p struct{ wih, whh, bih, bhh []float32 }

func newModel32(m *Model) *model32 {
	w := &model32{params: make([]float32, len(m.params))}
	off := 0
	take := func(n int) []float32 {
		s := w.params[off : off+n : off+n]
		off += n
		return s
	}
	for _, lp := range m.lay {
		w.lay = append(w.lay, layer32p{wih: take(len(lp.wih)), whh: take(len(lp.whh)), bih: take(len(lp.bih)), bhh: take(len(lp.bhh))})
	}
	w.fcW = take(m.hidden)
	w.fcB = take(1)
	return w
}

func newNative32(m *Model, B, T int) *native32 {
	H, L := m.hidden, m.layers
	e := &native32{m: m, w: newModel32(m), g: newModel32(m), B: B, T: T}
	alloc := func(n int) [][][]float32 {
		out := make([][][]float32, L)
		for l := range out {
			out[l] = make([][]float32, T)
			buf := make([]float32, T*B*n)
			for t := range out[l] {
				out[l][t] = buf[t*B*n : (t+1)*B*n]
			}
		}
		return out
	}
	e.gates = alloc(4 * H)
	e.c, e.tc, e.h = alloc(H), alloc(H), alloc(H)
	e.p = make([]float64, B)
	e.dA = make([]float32, B*4*H)
	e.dh = make([]float32, B*H)
	e.dc = make([]float32, B*H)
	e.dhNew = make([]float32, B*H)
	e.wT = make([]float32, 4*H*H)
	e.uT = make([]float32, 4*H*H)
	e.up = make([][]float32, T)
	e.down = make([][]float32, T)
	for t := range T {
		e.up[t] = make([]float32, B*H)
		e.down[t] = make([]float32, B*H)
	}
	return e
}

func (e *native32) forward(d *packed, batch []int) []float64 {
	m, w := e.m, e.w
	for i, v := range m.params {
		w.params[i] = float32(v)
	}
	B, T, H := len(batch), d.T, m.hidden
	H4 := 4 * H
	for l := range w.lay {
		lp := &w.lay[l]
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
						axpy32(float32(val[n]), lp.wih[int(k)*H4:(int(k)+1)*H4], gb)
					}
				}
			} else {
				gemmAcc32(B, H4, H, e.h[l-1][t], H, 1, lp.wih, H4, G, H4)
			}
			if t > 0 {
				gemmAcc32(B, H4, H, e.h[l][t-1], H, 1, lp.whh, H4, G, H4)
			}
			c, tc, h := e.c[l][t][:B*H], e.tc[l][t][:B*H], e.h[l][t][:B*H]
			for b := range B {
				cb := c[b*H : (b+1)*H]
				if t > 0 {
					copy(cb, e.c[l][t-1][b*H:(b+1)*H])
				} else {
					clear(cb)
				}
				cellForward32(G[b*H4:(b+1)*H4], cb, tc[b*H:(b+1)*H], h[b*H:(b+1)*H])
			}
		}
	}
	last := e.h[m.layers-1][T-1]
	for b := range B {
		z := float64(w.fcB[0])
		for j, v := range last[b*H : (b+1)*H] {
			z += float64(w.fcW[j]) * float64(v)
		}
		e.p[b] = sigmoid(z)
	}
	return e.p[:B]
}

func (e *native32) lossGrad(d *packed, batch []int, grad []float64) (float64, []float64) {
	m, w, g := e.m, e.w, e.g
	p := e.forward(d, batch)
	B, T, H := len(batch), d.T, m.hidden
	H4 := 4 * H
	y := make([]float64, B)
	for b, s := range batch {
		y[b] = d.y[s]
	}
	loss := bce(p, y)
	clear(g.params)

	last := e.h[m.layers-1][T-1]
	for t := range T {
		clear(e.up[t][:B*H])
	}
	top := e.up[T-1][:B*H]
	for b := range B {
		dz := float32((p[b] - y[b]) / float64(B))
		axpy32(dz, last[b*H:(b+1)*H], g.fcW)
		g.fcB[0] += dz
		axpy32(dz, w.fcW, top[b*H:(b+1)*H])
	}

	for l := m.layers - 1; l >= 0; l-- {
		lp, gl := &w.lay[l], &g.lay[l]
		transposeInto32(e.uT, lp.whh, H, H4)
		if l > 0 {
			transposeInto32(e.wT, lp.wih, H, H4)
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
				var cp []float32
				if t > 0 {
					cp = e.c[l][t-1][b*H : (b+1)*H]
				}
				for j := range H {
					i, f, gg, o := gb[j], gb[H+j], gb[2*H+j], gb[3*H+j]
					tcv := tc[b*H+j]
					dh := up[b*H+j] + dhNext[b*H+j]
					dc := dcNext[b*H+j] + dh*o*(1-tcv*tcv)
					var cprev float32
					if cp != nil {
						cprev = cp[j]
					}
					ab[j] = dc * gg * i * (1 - i)
					ab[H+j] = dc * cprev * f * (1 - f)
					ab[2*H+j] = dc * i * (1 - gg*gg)
					ab[3*H+j] = dh * tcv * o * (1 - o)
					dcNext[b*H+j] = dc * f
				}
				axpy32(1, ab, gl.bih)
			}
			if l == 0 {
				for b, s := range batch {
					idx, val := d.row(s, t)
					ab := dA[b*H4 : (b+1)*H4]
					for n, k := range idx {
						axpy32(float32(val[n]), ab, gl.wih[int(k)*H4:(int(k)+1)*H4])
					}
				}
			} else {
				// Aᵀ·D: rows k of the gradient, coefficients a[b, k] down the batch.
				gemmAcc32(H, H4, B, e.h[l-1][t], 1, H, dA, H4, gl.wih, H4)
				down := e.down[t][:B*H]
				clear(down)
				gemmAcc32(B, H, H4, dA, H4, 1, e.wT, H, down, H)
			}
			if t > 0 {
				gemmAcc32(H, H4, B, e.h[l][t-1], 1, H, dA, H4, gl.whh, H4)
				clear(dhNew)
				gemmAcc32(B, H, H4, dA, H4, 1, e.uT, H, dhNew, H)
				dhNext, dhNew = dhNew, dhNext
			}
		}
		copy(gl.bhh, gl.bih)
		e.up, e.down = e.down, e.up
	}
	for i, v := range g.params {
		grad[i] += float64(v)
	}
	return loss, p
}

// transposeInto32 writes the c×r transpose of the r×c matrix a into dst.
func transposeInto32(dst, a []float32, r, c int) {
	for i := range r {
		row := a[i*c : (i+1)*c]
		for j, v := range row {
			dst[j*r+i] = v
		}
	}
}
