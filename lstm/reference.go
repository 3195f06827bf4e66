package lstm

import "fmt"

// Reference computes the loss and gradient of a mini-batch by a method other
// than this package's native engines. Package lstm/gorgonia provides one, the
// network as a gorgonia expression graph differentiated symbolically, which
// the native backward pass is tested against; it lives in its own package so
// that programs that only train or predict do not link gorgonia.
type Reference interface {
	// LossGrad returns the mean binary cross-entropy of the batch under m
	// and each sample's probability, and adds the gradient with respect to
	// m.Params() to grad.
	LossGrad(m *Model, b Batch, grad []float64) (loss float64, prob []float64, err error)
}

// Batch is a mini-batch in dense form, for a Reference: X[t] is the B×I
// input matrix of step t (row-major, steps in the order the model reads
// them, so newest-first data arrive reversed), Y the B labels (0 or 1).
type Batch struct {
	B, T, I int
	X       [][]float64
	Y       []float64
}

// Params returns the model's parameters as one slice, a view: writing to it
// changes the model. For an LSTM, per layer l in order: W_ih (in×4H,
// row-major, the transpose of PyTorch's weight_ih_l<l>), W_hh (H×4H), b_ih
// (4H), b_hh (4H), with the gates in PyTorch's order i, f, g, o; for a GRU,
// per layer PyTorch's own weight_ih_l<l> (3H×in), weight_hh_l<l> (3H×H),
// bias_ih_l<l> and bias_hh_l<l> (3H), gates r, z, n; then the head's weight
// (H) and bias (1).
func (m *Model) Params() []float64 { return m.params }

// LossGrad returns the mean binary cross-entropy of d under m and its
// gradient with respect to Params, computed by ref, or by the native
// float64 engine when ref is nil. The sequences are read as Train reads
// them (newest-first when the model says so).
func (m *Model) LossGrad(d Data, ref Reference) (_ float64, _ []float64, err error) {
	defer wrapErr(&err)
	pk, err := pack(d, m.inputs, m.newestFirst, false)
	if err != nil {
		return 0, nil, err
	}
	batch := make([]int, pk.n)
	for i := range batch {
		batch[i] = i
	}
	grad := make([]float64, len(m.params))
	if ref == nil && m.cell == GRU {
		loss, _ := m.gruLossGrad(pk.dense(batch), grad)
		return loss, grad, nil
	}
	if ref == nil {
		loss, _ := newGradEngine(m, Native, pk.n, pk.T, 0).lossGrad(pk, batch, grad)
		return loss, grad, nil
	}
	loss, _, err := ref.LossGrad(m, pk.dense(batch), grad)
	if err != nil {
		return 0, nil, fmt.Errorf("reference engine: %w", err)
	}
	return loss, grad, nil
}

// dense returns the samples of batch as a dense Batch.
func (p *packed) dense(batch []int) Batch {
	B, T, I := len(batch), p.T, p.I
	b := Batch{B: B, T: T, I: I, X: make([][]float64, T), Y: make([]float64, B)}
	for t := range T {
		x := make([]float64, B*I)
		for r, s := range batch {
			idx, val := p.row(s, t)
			for n, k := range idx {
				x[r*I+int(k)] = val[n]
			}
		}
		b.X[t] = x
	}
	for r, s := range batch {
		b.Y[r] = p.y[s]
	}
	return b
}
