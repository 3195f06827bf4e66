package lstm

import "fmt"

// Network is what Train fits and Evaluate and Decide use: a model giving
// P(release) of a sequence from parameters held in one slice. *Model (an
// LSTM or a GRU) is one; another network plugs in by implementing these
// three methods, and Train then runs its loop (batches, optimiser,
// clipping, early stopping, checkpoints) over it.
type Network interface {
	// Params returns the parameters as one slice, a view: Train updates
	// them in place.
	Params() []float64
	// Probabilities returns P(release) of every sequence of X (samples ×
	// steps × features, rows in the order the data has them), or an error
	// for bad input.
	Probabilities(X [][][]float64) ([]float64, error)
	// Gradient returns the mean binary cross-entropy of the batch and
	// each sample's probability, and adds the gradient with respect to
	// Params to grad.
	Gradient(b Batch, grad []float64) (loss float64, prob []float64, err error)
}

// Gradient returns the mean binary cross-entropy of b under m and each
// sample's probability and adds the gradient with respect to Params to
// grad, with the native float64 engine; b's steps are in the order the
// model reads them (reversed for a newest-first model), as Train passes
// them. A batch that does not fit the model is an error.
func (m *Model) Gradient(b Batch, grad []float64) (_ float64, _ []float64, err error) {
	defer wrapErr(&err)
	if len(grad) != len(m.params) {
		panic("lstm: Gradient: len(grad) differs from the parameters'")
	}
	if b.I != m.inputs || len(b.X) != b.T || len(b.Y) != b.B {
		return 0, nil, fmt.Errorf("batch %d×%d×%d for a model of %d inputs: %w", b.B, b.T, b.I, m.inputs, ErrWidth)
	}
	if m.cell == GRU {
		loss, p := m.gruLossGrad(b, grad)
		return loss, p, nil
	}
	d := Data{X: make([][][]float64, b.B), Y: make([]int, b.B)}
	for s := range d.X {
		d.X[s] = make([][]float64, b.T)
		for t := range b.T {
			d.X[s][t] = b.X[t][s*b.I : (s+1)*b.I]
		}
		d.Y[s] = int(b.Y[s])
	}
	pk, err := pack(d, m.inputs, false, false)
	if err != nil {
		return 0, nil, err
	}
	loss, p := newGradEngine(m, Native, pk.n, pk.T, 0).lossGrad(pk, seqOf(pk.n), grad)
	return loss, p, nil
}

// seqOf returns 0, 1, ..., n-1.
func seqOf(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
