package lstm

import (
	"math"

	"github.com/crosscluster/crosscluster/internal/par"
)

// engine is the hand-derived engine in precision T: the batched forward
// pass keeping every activation, and backpropagation through time over it.
// In float32 the weights are copied into T at every step and the gradient
// added back into the float64 one, so the optimiser, its state and the
// master weights stay float64 (mixed precision; the float32 kernels do twice
// the work per instruction). In float64 the engine works on the model's
// weights and the caller's gradient directly.
//
// A step runs on several goroutines in three phases, each split so that no
// element's arithmetic depends on the split: the forward pass and the
// backward recurrence by shards of samples (see shards), then the weight
// gradients, which sum over samples and steps, by blocks of gradient rows,
// each row summed in the order the single-threaded pass would use. The
// result is the same, bit for bit, whatever the number of cores.
type engine[T float] struct {
	m       *Model
	workers int
	n       net[T]
	w, g    []T // weights and gradient, laid out as Model.params
	wv, gv  paramsOf[T]
	direct  bool     // T is float64: w is the model's parameters, g the caller's gradient
	a       *acts[T] // [layer][step] of the batch; the gates become dL/d(pre-activation) in backward
	p, dz   []float64
	up      [][]T // [step] B×H gradient arriving from the layer above
	down    [][]T // [step] B×H gradient sent to the layer below
	dh, dc  []T   // B×H
	dhNew   []T   // B×H
	zero    []T   // H zeros: the cell state before the first step, read by every shard
	wT, uT  [][]T // per layer 4H×H transposes of W_ih and W_hh, for D·Wᵀ
}

// gradEngine is an engine of either precision.
type gradEngine interface {
	// lossGrad runs forward and backward over batch, adds the gradient of
	// the mean BCE to grad (laid out as Model.params) and returns the loss
	// and the probabilities.
	lossGrad(d *packed, batch []int, grad []float64) (float64, []float64)
}

// newGradEngine returns the engine of the given precision for batches of
// up to B sequences of the given steps, running on workers goroutines (≤ 0:
// GOMAXPROCS).
func newGradEngine(m *Model, eng Engine, B, steps, workers int) gradEngine {
	if eng == Native32 {
		return newEngine(m, B, steps, workers, headWide)
	}
	return newEngine(m, B, steps, workers, head64)
}

// newEngine returns the engine of precision T whose network ends in head.
func newEngine[T float](m *Model, B, steps, workers int, head func(w []T, b T, h []T) float64) *engine[T] {
	H, L := m.hidden, m.layers
	e := &engine[T]{m: m, workers: workers}
	e.w, e.direct = any(m.params).([]T)
	if !e.direct {
		e.w = make([]T, len(m.params))
		e.g = make([]T, len(m.params))
		e.gv = bindParams(e.g, m.inputs, H, L)
	}
	e.wv = bindParams(e.w, m.inputs, H, L)
	e.n = net[T]{k: kernelsFor[T](), H: H, lay: e.wv.lay, bias: make([][]T, L),
		head: func(h []T) float64 { return head(e.wv.fcW, e.wv.fcB[0], h) }}
	e.wT, e.uT = make([][]T, L), make([][]T, L)
	for l := range L {
		e.n.bias[l] = make([]T, 4*H)
		e.wT[l] = make([]T, 4*H*H)
		e.uT[l] = make([]T, 4*H*H)
	}
	e.a = newActs[T](L, H, B, steps, true)
	e.p = make([]float64, B)
	e.dz = make([]float64, B)
	e.dh = make([]T, B*H)
	e.dc = make([]T, B*H)
	e.dhNew = make([]T, B*H)
	e.zero = make([]T, H)
	e.up = make([][]T, steps)
	e.down = make([][]T, steps)
	for t := range steps {
		e.up[t] = make([]T, B*H)
		e.down[t] = make([]T, B*H)
	}
	return e
}

// forBlocks calls fn on consecutive blocks [lo, hi) of [0, n) on workers
// goroutines (≤ 0: GOMAXPROCS), for element-by-element loops over the
// parameters.
func forBlocks(n, workers int, fn func(lo, hi int)) {
	const block = 1 << 14
	par.For((n+block-1)/block, workers, func(_, k int) {
		fn(k*block, min((k+1)*block, n))
	})
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

// load copies the model's weights into the engine's precision.
func (e *engine[T]) load() {
	if !e.direct {
		forBlocks(len(e.w), e.workers, func(lo, hi int) {
			for i, v := range e.m.params[lo:hi] {
				e.w[lo+i] = T(v)
			}
		})
	}
	e.n.sumBias()
}

// forward computes the probabilities of the samples in batch, keeping the
// activations for backward. It returns e.p[:len(batch)].
func (e *engine[T]) forward(d *packed, batch []int) []float64 {
	e.load()
	sh := shards(len(batch), len(batch))
	par.For(len(sh), e.workers, func(_, k int) {
		lo, hi := sh[k][0], sh[k][1]
		e.n.forward(e.a, lo, d, batch[lo:hi], e.p[lo:hi])
	})
	return e.p[:len(batch)]
}

func (e *engine[T]) lossGrad(d *packed, batch []int, grad []float64) (float64, []float64) {
	if len(grad) != len(e.m.params) {
		panic("lstm: gradient length mismatch")
	}
	m, k := e.m, e.n.k
	p := e.forward(d, batch)
	B, H := len(batch), m.hidden
	y := make([]float64, B)
	for b, s := range batch {
		y[b] = d.y[s]
	}
	loss := bce(p, y)
	if e.direct {
		g, _ := any(grad).([]T)
		e.gv = bindParams(g, m.inputs, H, m.layers)
	} else {
		clear(e.g)
	}

	// Head: dL/dz = (p - y)/B for sigmoid followed by BCE.
	last := e.a.h[m.layers-1][d.T-1]
	for b := range B {
		e.dz[b] = (p[b] - y[b]) / float64(B)
		dz := T(e.dz[b])
		k.axpy(dz, last[b*H:(b+1)*H], e.gv.fcW)
		e.gv.fcB[0] += dz
	}
	for l, lp := range e.wv.lay {
		transposeInto(e.uT[l], lp.whh, H, 4*H)
		if l > 0 {
			transposeInto(e.wT[l], lp.wih, H, 4*H)
		}
	}
	sh := shards(B, B)
	par.For(len(sh), e.workers, func(_, k int) {
		e.backward(d, sh[k][0], sh[k][1])
	})
	// Weight gradients: the first layer's sparse rows (the longest task)
	// first, then the dense products by layer and block of columns, then
	// the other layers' biases. Tasks touch different elements.
	L, cols := m.layers, (4*H+gradCols-1)/gradCols
	par.For(1+L*cols+L-1, e.workers, func(_, k int) {
		switch {
		case k == 0:
			e.rowGrad(d, batch, 0)
		case k <= L*cols:
			k--
			e.denseGrad(d, B, L-1-k/cols, k%cols*gradCols)
		default:
			e.rowGrad(d, batch, k-L*cols)
		}
	})
	if !e.direct {
		forBlocks(len(e.g), e.workers, func(lo, hi int) {
			for i, v := range e.g[lo:hi] {
				grad[lo+i] += float64(v)
			}
		})
	}
	return loss, p
}

// backward runs backpropagation through time for rows [lo, hi) of the
// batch, from the head's gradient down to the first layer, leaving in
// e.a.gates the gradient of the loss with respect to each pre-activation.
// Rows do not interact, so shards run in parallel.
func (e *engine[T]) backward(d *packed, lo, hi int) {
	m, k, a := e.m, e.n.k, e.a
	B, H := hi-lo, m.hidden
	H4 := 4 * H
	rows := func(x []T, width int) []T { return x[lo*width : hi*width] }
	up, down := e.up, e.down
	for t := range d.T {
		clear(rows(up[t], H))
	}
	top := rows(up[d.T-1], H)
	for b := range B {
		k.axpy(T(e.dz[lo+b]), e.wv.fcW, top[b*H:(b+1)*H])
	}
	for l := m.layers - 1; l >= 0; l-- {
		dhNext, dcNext, dhNew := rows(e.dh, H), rows(e.dc, H), rows(e.dhNew, H)
		clear(dhNext)
		clear(dcNext)
		for t := d.T - 1; t >= 0; t-- {
			G := rows(a.gates[l][t], H4)
			tc := rows(a.tc[l][t], H)
			u := rows(up[t], H)
			var cp []T
			if t > 0 {
				cp = rows(a.c[l][t-1], H)
			}
			cellBackward(k, H, B, G, tc, u, dhNext, dcNext, cp, e.zero)
			if l > 0 {
				dn := rows(down[t], H)
				clear(dn)
				gemm(k, B, H, H4, G, H4, 1, e.wT[l], H, dn, H)
			}
			if t > 0 {
				clear(dhNew)
				gemm(k, B, H, H4, G, H4, 1, e.uT[l], H, dhNew, H)
				dhNext, dhNew = dhNew, dhNext
			}
		}
		up, down = down, up
	}
}

// cellBackward turns the activated gates G of rows rows (4H a row) into
// the gradients of their pre-activations, from tanh(c) tc, the gradient u
// from above and dh, dc from the next step (H a row; dc is updated to the
// gradient sent to the previous step) and the previous cell state cp (nil
// at the first step: zero, a row of H zeros). The assembly kernels, where
// H is a multiple of their vector width, compute the bits of the Go loop.
func cellBackward[T float](k *kernels[T], H, rows int, G, tc, u, dh, dc, cp, zero []T) {
	if rows == 0 {
		return
	}
	H4 := 4 * H
	if k.bwd != nil && H%k.cellLanes == 0 {
		cpStride := H
		if cp == nil {
			cp, cpStride = zero, 0
		}
		if len(G) < rows*H4 || len(tc) < rows*H || len(u) < rows*H || len(dh) < rows*H || len(dc) < rows*H || len(cp) < (rows-1)*cpStride+H {
			panic("lstm: kernel operand out of range")
		}
		k.bwd(H, rows, &G[0], &tc[0], &u[0], &dh[0], &dc[0], &cp[0], cpStride)
		return
	}
	for b := range rows {
		gb := G[b*H4 : (b+1)*H4]
		gi, gf, gg, gO := gb[:H], gb[H:2*H], gb[2*H:3*H], gb[3*H:4*H]
		r := b * H
		tcb, ub, dhb, dcb := tc[r:r+H], u[r:r+H], dh[r:r+H], dc[r:r+H]
		cpb := zero[:H]
		if cp != nil {
			cpb = cp[r : r+H]
		}
		for j := range gi {
			i, f, g, o := gi[j], gf[j], gg[j], gO[j]
			tcv := tcb[j]
			dh := ub[j] + dhb[j]
			// Products rounded before a sum (T(…)), so that no GOAMD64
			// level fuses them and the kernels' bits stay the loop's.
			dc := dcb[j] + T(dh*o*(1-T(tcv*tcv)))
			gi[j] = dc * g * i * (1 - i)
			gf[j] = dc * cpb[j] * f * (1 - f)
			gg[j] = dc * i * (1 - T(g*g))
			gO[j] = dh * tcv * o * (1 - o)
			dcb[j] = dc * f
		}
	}
}

// gradCols is the number of columns of one task of the dense weight
// gradients. A multiple of 32, so that every element goes through the same
// kernel (and rounding) as when the whole row is computed at once: the
// blocks of gemm are 8, 16 or 32 columns wide and rows have no other kernel
// in float32. Every task reads the whole of h over the batch and steps, so
// wider tasks read it fewer times: 64 ran 4-6% faster than 32 on one core
// and no slower on two; 128 measured the same as 64.
const gradCols = 64

// denseGrad adds the gradients of W_hh and, above the first layer, W_ih of
// layer l, columns [j0, j0+gradCols), into e.g: every element summed over
// the steps from the last and, within a step, over the samples in order,
// as a single pass over the batch would. The slice of dA a task reads at a
// step stays in cache for all its products.
func (e *engine[T]) denseGrad(d *packed, B, l, j0 int) {
	k, a, H := e.n.k, e.a, e.m.hidden
	H4 := 4 * H
	C := min(gradCols, H4-j0)
	gl := &e.gv.lay[l]
	for t := d.T - 1; t >= 0; t-- {
		dA := a.gates[l][t][j0 : B*H4]
		if t > 0 {
			gemm(k, H, C, B, a.h[l][t-1][:B*H], 1, H, dA, H4, gl.whh[j0:], H4)
		}
		if l > 0 {
			gemm(k, H, C, B, a.h[l-1][t][:B*H], 1, H, dA, H4, gl.wih[j0:], H4)
		}
	}
}

// rowGrad adds the gradients of layer l's biases and, in the first layer,
// of the rows of W_ih that the batch's non-zero inputs select, in the same
// order as denseGrad. Whole rows at a time: the updates are many short
// axpys, whose calls would dominate on narrower slices.
func (e *engine[T]) rowGrad(d *packed, batch []int, l int) {
	k, a := e.n.k, e.a
	B, H := len(batch), e.m.hidden
	H4 := 4 * H
	gl := &e.gv.lay[l]
	for t := d.T - 1; t >= 0; t-- {
		dA := a.gates[l][t][:B*H4]
		for b := range B {
			ab := dA[b*H4 : (b+1)*H4]
			k.axpy(1, ab, gl.bih)
			k.axpy(1, ab, gl.bhh)
			if l == 0 {
				idx, val := d.row(batch[b], t)
				for n, f := range idx {
					k.axpy(T(val[n]), ab, gl.wih[int(f)*H4:(int(f)+1)*H4])
				}
			}
		}
	}
}
