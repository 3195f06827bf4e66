package lstm

import (
	"math"
	"runtime"

	"github.com/crosscluster/crosscluster/internal/par"
)

// One forward pass serves every path: training in float64 and float32,
// Model.Predict and Model.Probabilities (float64) and the Predictor
// (float32). A net is the network in one precision; acts are the buffers
// the pass writes, all steps for training or one step updated in place for
// inference.

// layerOf is one LSTM layer's parameters, views into a parameter vector laid
// out as Model.params.
type layerOf[T float] struct {
	in       int
	wih, whh []T // in×4H and H×4H, row k holds the four gate weights of input k
	bih, bhh []T // 4H each
}

// layerParams are the float64 views of a Model.
type layerParams = layerOf[float64]

// paramsOf are the views of a whole parameter vector.
type paramsOf[T float] struct {
	lay      []layerOf[T]
	fcW, fcB []T // H and 1
}

// bindParams lays p out as the parameters of a model of the shape.
func bindParams[T float](p []T, inputs, hidden, layers int) paramsOf[T] {
	take := func(n int) []T {
		s := p[:n:n]
		p = p[n:]
		return s
	}
	h4 := 4 * hidden
	v := paramsOf[T]{lay: make([]layerOf[T], layers)}
	in := inputs
	for l := range v.lay {
		v.lay[l] = layerOf[T]{in: in, wih: take(in * h4), whh: take(hidden * h4), bih: take(h4), bhh: take(h4)}
		in = hidden
	}
	v.fcW = take(hidden)
	v.fcB = take(1)
	return v
}

// net is the network in precision T.
type net[T float] struct {
	k    *kernels[T]
	H    int
	lay  []layerOf[T]
	bias [][]T // per layer, b_ih + b_hh as the owner of the weights sums them
	// head returns P(release) from the last layer's final hidden state.
	head func(h []T) float64
}

// sumBias sets n.bias[l] = b_ih + b_hh in precision T.
func (n *net[T]) sumBias() {
	for l, lp := range n.lay {
		for j := range n.bias[l] {
			n.bias[l][j] = lp.bih[j] + lp.bhh[j]
		}
	}
}

// net returns the float64 network over m's own parameters.
func (m *Model) net() *net[float64] {
	n := &net[float64]{k: kernelsFor[float64](), H: m.hidden, lay: m.lay,
		head: func(h []float64) float64 { return head64(m.fcW, m.fcB[0], h) }}
	n.bias = make([][]float64, m.layers)
	for l := range n.bias {
		n.bias[l] = make([]float64, 4*m.hidden)
	}
	n.sumBias()
	return n
}

// The heads: Linear(H, 1) and the sigmoid. The float64 engine and Model
// use head64; the float32 training engine sums its float32 products in
// float64 (headWide); the Predictor sums in float32 (head32), as a PyTorch
// model in float32 does.
func head64(w []float64, b float64, h []float64) float64 { return sigmoid(b + dot(w, h)) }

func headWide(w []float32, b float32, h []float32) float64 {
	z := float64(b)
	for j, v := range h {
		z += float64(w[j]) * float64(v)
	}
	return sigmoid(z)
}

func head32(w []float32, b float32, h []float32) float64 {
	z := b
	for j, v := range h {
		z += float32(w[j] * v) // rounded first: not fused on any GOAMD64 level
	}
	return sigmoid(float64(z))
}

func sigmoid(x float64) float64 {
	return 1 / (1 + math.Exp(-x))
}

// acts are the activations of a batch of rows: per layer and step, the
// activated gates (rows×4H, i f g o), the cell state, its tanh and the
// hidden state (rows×H). With keep false only one step is held per layer,
// updated in place, which is all inference needs.
type acts[T float] struct {
	keep            bool
	gates, c, tc, h [][][]T // [layer][step]
}

func newActs[T float](layers, hidden, rows, steps int, keep bool) *acts[T] {
	if !keep {
		steps = 1
	}
	buf := make([]T, layers*steps*rows*7*hidden) // 4H gates, c, tc and h
	alloc := func(n int) [][][]T {
		out := make([][][]T, layers)
		for l := range out {
			out[l] = make([][]T, steps)
			for t := range out[l] {
				out[l][t], buf = buf[:rows*n:rows*n], buf[rows*n:]
			}
		}
		return out
	}
	a := &acts[T]{keep: keep, gates: alloc(4 * hidden)}
	a.c, a.tc, a.h = alloc(hidden), alloc(hidden), alloc(hidden)
	return a
}

// forward runs the samples of d listed in samples through rows r0,
// r0+1, ... of a and writes their probabilities to out. Step by step, each
// layer consumes the previous layer's hidden state of the same step. The
// first layer gathers the weight rows of the non-zero inputs instead of
// multiplying by a sparse row.
func (n *net[T]) forward(a *acts[T], r0 int, d *packed, samples []int, out []float64) {
	B, H, L := len(samples), n.H, len(n.lay)
	H4 := 4 * H
	at := func(x [][][]T, l, t, width int) []T {
		if !a.keep {
			t = 0
		}
		return x[l][t][r0*width : (r0+B)*width]
	}
	for t := range d.T {
		for l := range n.lay {
			lp := &n.lay[l]
			G := at(a.gates, l, t, H4)
			if l == 0 {
				n.input(d, samples, t, lp, G)
			} else {
				for b := range B {
					copy(G[b*H4:(b+1)*H4], n.bias[l])
				}
				gemm(n.k, B, H4, H, at(a.h, l-1, t, H), H, 1, lp.wih, H4, G, H4)
			}
			var cp []T
			if t > 0 {
				gemm(n.k, B, H4, H, at(a.h, l, t-1, H), H, 1, lp.whh, H4, G, H4)
				cp = at(a.c, l, t-1, H)
			}
			cells(n.k, H, B, G, cp, at(a.c, l, t, H), at(a.tc, l, t, H), at(a.h, l, t, H))
		}
	}
	last := at(a.h, L-1, d.T-1, H)
	for b := range B {
		out[b] = n.head(last[b*H : (b+1)*H])
	}
}

// input sets the rows of G to the first layer's bias plus its input
// product at step t of the samples: the weight rows of the non-zero inputs
// gathered, one axpy each, in order.
func (n *net[T]) input(d *packed, samples []int, t int, lp *layerOf[T], G []T) {
	H4 := 4 * n.H
	for b, s := range samples {
		gb := G[b*H4 : (b+1)*H4]
		copy(gb, n.bias[0])
		idx, val := d.row(s, t)
		for i, k := range idx {
			n.k.axpy(T(val[i]), lp.wih[int(k)*H4:(int(k)+1)*H4], gb)
		}
	}
}

// cells runs the cell of rows rows of G (4H a row) and of cp (nil for
// zero), c, tc and h (H a row): in one assembly call where the kernels have
// a fused cell for this H (cell_amd64.s, whose activations are a Padé
// approximant's, within a few ulps of package math's), else cellForward,
// whose activations are package vmath's.
func cells[T float](k *kernels[T], H, rows int, G, cp, c, tc, h []T) {
	if rows == 0 {
		return
	}
	cell := k.cell
	if cell != nil && H%k.cellLanes != 0 {
		cell = nil
	}
	if cell != nil {
		if len(G) < rows*4*H || len(c) < rows*H || len(tc) < rows*H || len(h) < rows*H || cp != nil && len(cp) < rows*H {
			panic("lstm: kernel operand out of range")
		}
		var cpp *T
		if cp != nil {
			cpp = &cp[0]
		}
		cell(H, rows, &G[0], cpp, &c[0], &tc[0], &h[0])
		return
	}
	H4 := 4 * H
	for b := range rows {
		var cpb []T
		if cp != nil {
			cpb = cp[b*H : (b+1)*H]
		}
		cellForward(k, G[b*H4:(b+1)*H4], cpb, c[b*H:(b+1)*H], tc[b*H:(b+1)*H], h[b*H:(b+1)*H])
	}
}

// cellForward turns the pre-activations g (blocks i, f, g, o of H) into
// the activated gates in place and computes the new cell state c, tanh(c)
// into tc and the hidden state h from the previous cell state cp (nil for
// zero). cp may be c itself.
func cellForward[T float](k *kernels[T], g, cp, c, tc, h []T) {
	H := len(c)
	k.sigmoid(g[:2*H])
	k.tanh(g[2*H : 3*H])
	k.sigmoid(g[3*H : 4*H])
	gi, gf, gg, gO := g[:H], g[H:2*H], g[2*H:3*H], g[3*H:4*H]
	if cp == nil {
		for j := range c {
			c[j] = gi[j] * gg[j]
		}
	} else {
		cp = cp[:H]
		for j := range c {
			// Each product rounded (T(…)): no compiler fuses them into a
			// multiply-add, so the Go loop and the kernels agree on every
			// GOAMD64 level.
			c[j] = T(gf[j]*cp[j]) + T(gi[j]*gg[j])
		}
	}
	copy(tc, c)
	k.tanh(tc)
	for j := range h {
		h[j] = gO[j] * tc[j]
	}
}

// shardRows is the number of samples one task of the parallel passes runs
// through the kernels at once. It is a multiple of four (see kernel.go), so
// the results do not depend on how the shards are spread over cores, and
// it is independent of GOMAXPROCS. Sixteen rather than 32: a shard's
// float64 gates then take 32 KiB (16 KiB in float32), this core's
// first-level cache, and 16 tasks a batch of 256
// balance two cores better than 8.
const shardRows = 16

// shards cuts [0, n) into batches of bs and every batch into pieces of at
// most shardRows from its start; it returns the [lo, hi) ranges in order.
func shards(n, bs int) [][2]int {
	var out [][2]int
	for start := 0; start < n; start += bs {
		end := min(start+bs, n)
		for lo := start; lo < end; lo += shardRows {
			out = append(out, [2]int{lo, min(lo+shardRows, end)})
		}
	}
	return out
}

// predict writes P(release) of every sequence of X (samples × steps ×
// inputs, all of the same length) to out, in batches of bs samples cut in
// shards as probabilities cuts them, on every core. Each shard is validated
// and packed by the worker that then runs it forward: reading the dense
// input is bound by memory bandwidth, which one core's scan nearly
// saturates, so the scans are spread over the pass instead of running on
// both cores at once before it. The error is the one of the first bad
// sample, as pack reports it; out is then incomplete.
func (n *net[T]) predict(X [][][]float64, inputs int, newestFirst bool, bs int, out []float64) error {
	steps, err := sequenceSteps(X)
	if err != nil {
		return err
	}
	chunks := make([]packedChunk, runtime.GOMAXPROCS(0)) // one per worker
	return n.runShards(len(X), bs, 0, out, func(w, lo, hi int) (*packed, int, error) {
		ch := &chunks[w]
		if ch.pack(Data{X: X}, lo, hi, steps, inputs, newestFirst); ch.err != nil {
			return nil, 0, ch.err
		}
		return &ch.view, 0, nil
	})
}

// probabilities writes P(release) of every sample of d to out, running
// batches of bs samples (cut in shards) on workers goroutines (≤ 0:
// GOMAXPROCS). Every sample's result is the same whatever the number of
// workers.
func (n *net[T]) probabilities(d *packed, bs, workers int, out []float64) {
	n.runShards(d.n, bs, workers, out, func(_, lo, _ int) (*packed, int, error) { return d, lo, nil })
}

// runShards runs samples [0, count) forward into out, in batches of bs cut
// in shards, on workers goroutines (≤ 0: GOMAXPROCS), each with its own
// activations. source(w, lo, hi) gives worker w the packed data holding
// shard [lo, hi) and the index of the shard's first sample in it. The
// error returned is the first shard's in sample order.
func (n *net[T]) runShards(count, bs, workers int, out []float64, source func(w, lo, hi int) (*packed, int, error)) error {
	sh := shards(count, bs)
	nw := par.Workers(len(sh), workers)
	type scratch struct {
		a       *acts[T]
		samples []int
	}
	ws := make([]scratch, nw)
	errs := make([]error, len(sh))
	par.For(len(sh), nw, func(w, k int) {
		lo, hi := sh[k][0], sh[k][1]
		d, first, err := source(w, lo, hi)
		if err != nil {
			errs[k] = err
			return
		}
		s := &ws[w]
		if s.a == nil {
			rows := min(shardRows, count)
			s.a = newActs[T](len(n.lay), n.H, rows, 1, false)
			s.samples = make([]int, rows)
		}
		samples := s.samples[:hi-lo]
		for i := range samples {
			samples[i] = first + i
		}
		n.forward(s.a, 0, d, samples, out[lo:hi])
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
