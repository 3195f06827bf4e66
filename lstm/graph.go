package lstm

import (
	"fmt"
	"slices"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// graphEngine computes the loss and gradient of a fixed batch size with a
// gorgonia expression graph: the network written as matrix expressions
// (dense inputs, x·W_ih + h·W_hh + b per gate block) and differentiated by
// gorgonia's symbolic Grad. It shares no code with the native engine, which
// makes it the reference the native backward pass is tested against.
// Unlike the native engine its loss does not clamp the log terms at -100,
// so a saturated probability gives an infinite loss there (and Train stops
// with ErrNaN) where the native engine would carry on.
type graphEngine struct {
	m      *Model
	B, T   int
	g      *G.ExprGraph
	xs     []*G.Node // T inputs, B×I
	y, yc  *G.Node   // B×1 labels and 1-labels
	params []*G.Node // in the order of Model.params
	loss   *G.Node
	prob   *G.Node
	vm     G.VM

	lossVal, probVal G.Value
}

func newGraphEngine(m *Model, B, T int) *graphEngine {
	e, err := buildGraph(m, B, T)
	if err != nil {
		// The graph's shapes are derived from the model's own dimensions;
		// a failure here is a bug in this package, not a data problem.
		panic("lstm: building the gorgonia graph: " + err.Error())
	}
	return e
}

func buildGraph(m *Model, B, T int) (*graphEngine, error) {
	H, I := m.hidden, m.inputs
	g := G.NewGraph()
	e := &graphEngine{m: m, B: B, T: T, g: g}
	mat := func(r, c int, name string) *G.Node {
		return G.NewMatrix(g, tensor.Float64, G.WithShape(r, c), G.WithName(name))
	}
	for t := range T {
		e.xs = append(e.xs, mat(B, I, fmt.Sprintf("x%d", t)))
	}
	e.y, e.yc = mat(B, 1, "y"), mat(B, 1, "yc")
	type layer struct{ wih, whh, bih, bhh *G.Node }
	lays := make([]layer, m.layers)
	in := I
	for l := range lays {
		lays[l] = layer{
			wih: mat(in, 4*H, fmt.Sprintf("wih%d", l)),
			whh: mat(H, 4*H, fmt.Sprintf("whh%d", l)),
			bih: mat(1, 4*H, fmt.Sprintf("bih%d", l)),
			bhh: mat(1, 4*H, fmt.Sprintf("bhh%d", l)),
		}
		e.params = append(e.params, lays[l].wih, lays[l].whh, lays[l].bih, lays[l].bhh)
		in = H
	}
	fcW, fcB := mat(H, 1, "fcW"), mat(1, 1, "fcB")
	e.params = append(e.params, fcW, fcB)

	var err error
	must := func(n *G.Node, e error) *G.Node {
		if err == nil {
			err = e
		}
		return n
	}
	seq := slices.Clone(e.xs)
	for l := range lays {
		ly := lays[l]
		bias := must(G.Add(ly.bih, ly.bhh))
		var h, c *G.Node
		for t := range T {
			pre := must(G.Mul(seq[t], ly.wih))
			if h != nil {
				pre = must(G.Add(pre, must(G.Mul(h, ly.whh))))
			}
			pre = must(G.BroadcastAdd(pre, bias, nil, []byte{0}))
			block := func(k int) *G.Node { return must(G.Slice(pre, nil, G.S(k*H, (k+1)*H))) }
			ig := must(G.Sigmoid(block(0)))
			fg := must(G.Sigmoid(block(1)))
			gg := must(G.Tanh(block(2)))
			og := must(G.Sigmoid(block(3)))
			nc := must(G.HadamardProd(ig, gg))
			if c != nil {
				nc = must(G.Add(must(G.HadamardProd(fg, c)), nc))
			}
			c = nc
			h = must(G.HadamardProd(og, must(G.Tanh(c))))
			seq[t] = h
		}
		if err != nil {
			return nil, err
		}
	}
	z := must(G.BroadcastAdd(must(G.Mul(seq[T-1], fcW)), fcB, nil, []byte{0}))
	e.prob = must(G.Sigmoid(z))
	// log(1-σ(z)) is written log σ(-z) so that no constant node is needed.
	logq := must(G.Log(must(G.Sigmoid(must(G.Neg(z))))))
	ll := must(G.Add(must(G.HadamardProd(e.y, must(G.Log(e.prob)))), must(G.HadamardProd(e.yc, logq))))
	e.loss = must(G.Neg(must(G.Mean(ll))))
	if err != nil {
		return nil, err
	}
	G.Read(e.loss, &e.lossVal)
	G.Read(e.prob, &e.probVal)
	if _, err := G.Grad(e.loss, e.params...); err != nil {
		return nil, err
	}
	e.vm = G.NewTapeMachine(g, G.BindDualValues(e.params...))
	return e, nil
}

// lossGrad evaluates the graph on batch (exactly e.B samples) with the
// model's current weights and adds the gradient to grad.
func (e *graphEngine) lossGrad(d *packed, batch []int, grad []float64) (float64, []float64, error) {
	m := e.m
	B, T, H, I := e.B, e.T, m.hidden, m.inputs
	if len(batch) != B {
		panic("lstm: batch size differs from the graph's")
	}
	let := func(n *G.Node, r, c int, data []float64) error {
		return G.Let(n, tensor.New(tensor.WithShape(r, c), tensor.WithBacking(slices.Clone(data))))
	}
	for t := range T {
		x := make([]float64, B*I)
		for b, s := range batch {
			idx, val := d.row(s, t)
			for n, k := range idx {
				x[b*I+int(k)] = val[n]
			}
		}
		if err := let(e.xs[t], B, I, x); err != nil {
			return 0, nil, err
		}
	}
	y, yc := make([]float64, B), make([]float64, B)
	for b, s := range batch {
		y[b], yc[b] = d.y[s], 1-d.y[s]
	}
	if err := let(e.y, B, 1, y); err != nil {
		return 0, nil, err
	}
	if err := let(e.yc, B, 1, yc); err != nil {
		return 0, nil, err
	}
	in := I
	pi := 0
	for l := range m.lay {
		lp := &m.lay[l]
		for _, v := range []struct {
			r, c int
			data []float64
		}{{in, 4 * H, lp.wih}, {H, 4 * H, lp.whh}, {1, 4 * H, lp.bih}, {1, 4 * H, lp.bhh}} {
			if err := let(e.params[pi], v.r, v.c, v.data); err != nil {
				return 0, nil, err
			}
			pi++
		}
		in = H
	}
	if err := let(e.params[pi], H, 1, m.fcW); err != nil {
		return 0, nil, err
	}
	if err := let(e.params[pi+1], 1, 1, m.fcB); err != nil {
		return 0, nil, err
	}
	e.vm.Reset()
	if err := e.vm.RunAll(); err != nil {
		return 0, nil, err
	}
	off := 0
	for _, n := range e.params {
		gv, err := n.Grad()
		if err != nil {
			return 0, nil, err
		}
		gd := gv.Data().([]float64)
		axpy(1, gd, grad[off:off+len(gd)])
		// The tape machine accumulates into the dual values, as gorgonia's
		// solvers expect to reset them after each step; do the same.
		clear(gd)
		off += len(gd)
	}
	if off != len(grad) {
		panic("lstm: graph gradient length mismatch")
	}
	loss := e.lossVal.Data().(float64)
	p := slices.Clone(e.probVal.Data().([]float64))
	return loss, p, nil
}
