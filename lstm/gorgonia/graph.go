// Package gorgonia computes an LSTM's loss and gradient with a
// gorgonia.org/gorgonia expression graph: the network written as matrix
// expressions (dense inputs, x·W_ih + h·W_hh + b per gate block) and
// differentiated by gorgonia's symbolic Grad. It shares no code with
// package lstm's native engine, which makes it the reference the native
// backward pass is tested against:
//
//	cfg := lstm.Config{Reference: gorgonia.New()}
//	loss, grad, err := m.LossGrad(data, gorgonia.New())
//
// It is a package of its own so that programs that train or predict with
// lstm do not link gorgonia (about 60 packages and 9 MB of binary).
//
// gorgonia v0.9.18 needs go4.org/unsafe/assume-no-moving-gc at
// v0.0.0-20231121144256-b99613f794b6 or later on current Go (the module's
// go.mod pins it). Unlike the native engine, its loss does not clamp the log
// terms at -100, so a saturated probability gives an infinite loss here
// (and Train stops with lstm.ErrNaN) where the native engine would carry on.
package gorgonia

import (
	"errors"
	"fmt"
	"slices"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/crosscluster/crosscluster/lstm"
)

// Engine is an lstm.Reference. It builds one graph per architecture and
// batch shape and reuses it. An Engine is not safe for concurrent use.
type Engine struct {
	graphs map[shape]*graphEngine
}

type shape struct {
	arch    lstm.Architecture
	B, T, I int
}

// New returns an Engine.
func New() *Engine { return &Engine{graphs: map[shape]*graphEngine{}} }

// LossGrad implements lstm.Reference.
func (e *Engine) LossGrad(m *lstm.Model, b lstm.Batch, grad []float64) (float64, []float64, error) {
	a := m.Architecture()
	a.NewestFirst = false // the batch arrives in reading order
	if a.Cell != lstm.LSTM {
		return 0, nil, fmt.Errorf("gorgonia: the reference graph is an LSTM's, not a %v's", a.Cell)
	}
	if b.I != a.Inputs || len(b.X) != b.T || len(b.Y) != b.B || b.B == 0 || b.T == 0 {
		return 0, nil, fmt.Errorf("gorgonia: batch %d×%d×%d does not fit a model of %d inputs", b.B, b.T, b.I, a.Inputs)
	}
	if len(grad) != len(m.Params()) {
		return 0, nil, errors.New("gorgonia: gradient length differs from the model's parameters")
	}
	k := shape{a, b.B, b.T, b.I}
	g := e.graphs[k]
	if g == nil {
		var err error
		if g, err = buildGraph(a, b.B, b.T); err != nil {
			return 0, nil, fmt.Errorf("gorgonia: building the graph: %w", err)
		}
		e.graphs[k] = g
	}
	return g.lossGrad(m, b, grad)
}

// graphEngine is the graph of one architecture and batch shape.
type graphEngine struct {
	arch   lstm.Architecture
	B, T   int
	g      *G.ExprGraph
	xs     []*G.Node // T inputs, B×I
	y, yc  *G.Node   // B×1 labels and 1-labels
	params []*G.Node // in the order of Model.Params
	shapes [][2]int  // their shapes
	loss   *G.Node
	prob   *G.Node
	vm     G.VM

	lossVal, probVal G.Value
}

func buildGraph(a lstm.Architecture, B, T int) (*graphEngine, error) {
	H, I := a.Hidden, a.Inputs
	g := G.NewGraph()
	e := &graphEngine{arch: a, B: B, T: T, g: g}
	mat := func(r, c int, name string) *G.Node {
		return G.NewMatrix(g, tensor.Float64, G.WithShape(r, c), G.WithName(name))
	}
	for t := range T {
		e.xs = append(e.xs, mat(B, I, fmt.Sprintf("x%d", t)))
	}
	e.y, e.yc = mat(B, 1, "y"), mat(B, 1, "yc")
	type layer struct{ wih, whh, bih, bhh *G.Node }
	lays := make([]layer, a.Layers)
	in := I
	for l := range lays {
		lays[l] = layer{
			wih: mat(in, 4*H, fmt.Sprintf("wih%d", l)),
			whh: mat(H, 4*H, fmt.Sprintf("whh%d", l)),
			bih: mat(1, 4*H, fmt.Sprintf("bih%d", l)),
			bhh: mat(1, 4*H, fmt.Sprintf("bhh%d", l)),
		}
		e.params = append(e.params, lays[l].wih, lays[l].whh, lays[l].bih, lays[l].bhh)
		e.shapes = append(e.shapes, [2]int{in, 4 * H}, [2]int{H, 4 * H}, [2]int{1, 4 * H}, [2]int{1, 4 * H})
		in = H
	}
	fcW, fcB := mat(H, 1, "fcW"), mat(1, 1, "fcB")
	e.params = append(e.params, fcW, fcB)
	e.shapes = append(e.shapes, [2]int{H, 1}, [2]int{1, 1})

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

// lossGrad evaluates the graph on b with m's current weights and adds the
// gradient to grad.
func (e *graphEngine) lossGrad(m *lstm.Model, b lstm.Batch, grad []float64) (float64, []float64, error) {
	B, T, I := e.B, e.T, e.arch.Inputs
	let := func(n *G.Node, r, c int, data []float64) error {
		return G.Let(n, tensor.New(tensor.WithShape(r, c), tensor.WithBacking(slices.Clone(data))))
	}
	for t := range T {
		if err := let(e.xs[t], B, I, b.X[t]); err != nil {
			return 0, nil, err
		}
	}
	yc := make([]float64, B)
	for r, v := range b.Y {
		yc[r] = 1 - v
	}
	if err := let(e.y, B, 1, b.Y); err != nil {
		return 0, nil, err
	}
	if err := let(e.yc, B, 1, yc); err != nil {
		return 0, nil, err
	}
	p := m.Params()
	for k, n := range e.params {
		sz := e.shapes[k][0] * e.shapes[k][1]
		if err := let(n, e.shapes[k][0], e.shapes[k][1], p[:sz]); err != nil {
			return 0, nil, err
		}
		p = p[sz:]
	}
	if len(p) != 0 {
		return 0, nil, errors.New("gorgonia: the model's parameters do not match its architecture")
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
		for i, v := range gd {
			grad[off+i] += v
		}
		// The tape machine accumulates into the dual values, as gorgonia's
		// solvers expect to reset them after each step; do the same.
		clear(gd)
		off += len(gd)
	}
	loss := e.lossVal.Data().(float64)
	prob := slices.Clone(e.probVal.Data().([]float64))
	return loss, prob, nil
}
