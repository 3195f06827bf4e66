package lstm

import "fmt"

// Metrics is a confusion matrix at a threshold and the scores derived from
// it, with "release" (label 1) as the positive class.
type Metrics struct {
	TP, FP, TN, FN int

	Accuracy  float64 // (TP+TN)/n
	Precision float64 // TP/(TP+FP), 0 when nothing is predicted positive (scikit-learn's zero_division=0)
	Recall    float64 // TP/(TP+FN), 0 when there is no positive sample
	F1        float64 // harmonic mean of precision and recall, 0 when both are 0
}

// Score returns the metrics of probabilities p against labels y (0 or 1),
// predicting release when p ≥ threshold. It panics if the lengths differ.
// Empty input gives all-zero metrics.
func Score(p []float64, y []int, threshold float64) Metrics {
	if len(p) != len(y) {
		panic("lstm: len(p) != len(y)")
	}
	var m Metrics
	for i, pi := range p {
		pos := pi >= threshold
		switch {
		case pos && y[i] == 1:
			m.TP++
		case pos:
			m.FP++
		case y[i] == 1:
			m.FN++
		default:
			m.TN++
		}
	}
	m.finish()
	return m
}

func (m *Metrics) finish() {
	n := m.TP + m.FP + m.TN + m.FN
	if n > 0 {
		m.Accuracy = float64(m.TP+m.TN) / float64(n)
	}
	if m.TP+m.FP > 0 {
		m.Precision = float64(m.TP) / float64(m.TP+m.FP)
	}
	if m.TP+m.FN > 0 {
		m.Recall = float64(m.TP) / float64(m.TP+m.FN)
	}
	if m.Precision+m.Recall > 0 {
		m.F1 = 2 * m.Precision * m.Recall / (m.Precision + m.Recall)
	}
}

// String formats the confusion matrix and scores on two lines.
func (m Metrics) String() string {
	return fmt.Sprintf("confusion [actual × predicted]: remove→remove %d  remove→release %d  release→remove %d  release→release %d\n"+
		"accuracy %.4f  precision %.4f  recall %.4f  F1 %.4f",
		m.TN, m.FP, m.FN, m.TP, m.Accuracy, m.Precision, m.Recall, m.F1)
}

// Evaluate scores the model on a whole data set at threshold (0.5 when
// threshold is 0) and returns the metrics and the mean binary cross-entropy.
// Bad data (widths, lengths, labels, NaN) is an error naming the sample.
func Evaluate(n Network, d Data, threshold float64) (_ Metrics, _ float64, err error) {
	defer wrapErr(&err)
	if threshold == 0 {
		threshold = 0.5
	}
	m, ok := n.(*Model)
	if !ok {
		if len(d.X) != len(d.Y) {
			panic("lstm: len(X) != len(Y)")
		}
		y := make([]float64, len(d.Y))
		for i, v := range d.Y {
			if v != 0 && v != 1 {
				return Metrics{}, 0, fmt.Errorf("sample %d: label %d: %w", i, v, ErrLabel)
			}
			y[i] = float64(v)
		}
		p, err := n.Probabilities(d.X)
		if err != nil {
			return Metrics{}, 0, err
		}
		return Score(p, d.Y, threshold), bce(p, y), nil
	}
	pk, err := pack(d, m.inputs, m.newestFirst, false)
	if err != nil {
		return Metrics{}, 0, err
	}
	p, loss := predictPacked(m, pk, defaultBatch, 0)
	return Score(p, d.Y, threshold), loss, nil
}

// predictPacked returns the probabilities and mean BCE of every sample of
// pk, computed in batches of size bs (cut in shards run on workers
// goroutines, ≤ 0 meaning GOMAXPROCS) with the batched forward pass.
func predictPacked(m *Model, pk *packed, bs, workers int) ([]float64, float64) {
	if m.cell == GRU {
		return m.gruPacked(pk)
	}
	out := make([]float64, pk.n)
	m.net().probabilities(pk, bs, workers, out)
	return out, bce(out, pk.y)
}
