package lstm

// Predictor is a float32 copy of a Model for fast batched inference: the
// weights and the arithmetic are float32, as in a PyTorch model in its
// default dtype, so its probabilities differ from the Model's float64 ones
// by about 1e-7. It does not change when the Model is trained further.
//
// A Predictor is safe for concurrent use.
type Predictor struct {
	inputs      int
	newestFirst bool
	n           *net[float32]
}

// Predictor returns a float32 snapshot of m. It panics for a GRU, which
// has only the float64 path.
func (m *Model) Predictor() *Predictor {
	if m.cell != LSTM {
		panic("lstm: Predictor of a GRU")
	}
	w := make([]float32, len(m.params))
	for i, v := range m.params {
		w[i] = float32(v)
	}
	v := bindParams(w, m.inputs, m.hidden, m.layers)
	n := &net[float32]{k: kernelsFor[float32](), H: m.hidden, lay: v.lay,
		head: func(h []float32) float64 { return head32(v.fcW, v.fcB[0], h) }}
	for _, lp := range m.lay {
		// The biases are summed in float64, then rounded once.
		bias := make([]float32, len(lp.bih))
		for j := range bias {
			bias[j] = float32(lp.bih[j] + lp.bhh[j])
		}
		n.bias = append(n.bias, bias)
	}
	return &Predictor{inputs: m.inputs, newestFirst: m.newestFirst, n: n}
}

// predictorBatch is the number of sequences of one batch of the Predictor
// (cut into shards that run in parallel).
const predictorBatch = 256

// Probabilities returns P(release) for every sequence of X (samples × steps
// × features), which must all have the same number of steps. Bad data is
// an error naming the sample and step, as for Model.Probabilities. X is not
// modified. It runs on every core; the result does not depend on how many
// there are.
func (p *Predictor) Probabilities(X [][][]float64) (_ []float64, err error) {
	defer wrapErr(&err)
	out := make([]float64, len(X))
	if err := p.n.predict(X, p.inputs, p.newestFirst, predictorBatch, out); err != nil {
		return nil, err
	}
	return out, nil
}
