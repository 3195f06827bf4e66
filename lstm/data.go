package lstm

import (
	"fmt"
	"math"
)

// Data is a labelled set of sequences: X[i] is sample i as steps × features
// (one-hot or count rows of event types), Y[i] is 1 when the held job was
// released and 0 when it was removed.
type Data struct {
	X [][][]float64
	Y []int
}

// Len returns the number of samples.
func (d Data) Len() int { return len(d.X) }

// packed is a validated data set in the layout the engines read: the
// non-zero entries of every row, in the order the model consumes the rows.
type packed struct {
	n, T, I int
	off     []int     // n·T+1 offsets into idx and val; row (s, t) is off[s·T+t]:off[s·T+t+1]
	idx     []int32   // feature index of each non-zero
	val     []float64 // its value
	y       []float64 // labels as 0 or 1
}

// pack validates d against the model's input width and packs it. Every
// sequence must have the same length; labels must be 0 or 1. needBoth also
// requires both classes to be present.
func pack(d Data, inputs int, newestFirst, needBoth bool) (*packed, error) {
	if len(d.X) != len(d.Y) {
		panic("lstm: len(X) != len(Y)")
	}
	if len(d.X) == 0 {
		return nil, ErrEmpty
	}
	p := &packed{n: len(d.X), T: len(d.X[0]), I: inputs}
	if p.T == 0 {
		return nil, fmt.Errorf("sample 0 has no steps: %w", ErrEmpty)
	}
	p.off = make([]int, 0, p.n*p.T+1)
	p.off = append(p.off, 0)
	p.y = make([]float64, p.n)
	var pos, neg int
	for i, seq := range d.X {
		if len(seq) != p.T {
			return nil, fmt.Errorf("sample %d has %d steps, sample 0 has %d: %w", i, len(seq), p.T, ErrLength)
		}
		switch d.Y[i] {
		case 0:
			neg++
		case 1:
			pos++
			p.y[i] = 1
		default:
			return nil, fmt.Errorf("sample %d has label %d: %w", i, d.Y[i], ErrLabel)
		}
		for s := range p.T {
			t := s
			if newestFirst {
				t = p.T - 1 - s
			}
			row := seq[t]
			if len(row) != inputs {
				return nil, fmt.Errorf("sample %d step %d has %d features, the model takes %d: %w", i, t, len(row), inputs, ErrWidth)
			}
			for k, v := range row {
				if v == 0 {
					continue
				}
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("sample %d step %d feature %d is %v: %w", i, t, k, v, ErrNaN)
				}
				p.idx = append(p.idx, int32(k))
				p.val = append(p.val, v)
			}
			p.off = append(p.off, len(p.idx))
		}
	}
	if needBoth && (pos == 0 || neg == 0) {
		return nil, fmt.Errorf("%d released and %d removed samples: %w", pos, neg, ErrSingleClass)
	}
	return p, nil
}

// packSeq packs one sequence without checking it: NaN inputs stay (and
// give NaN probabilities). The caller has checked the widths.
func packSeq(seq [][]float64, newestFirst bool) *packed {
	p := &packed{n: 1, T: len(seq), I: len(seq[0]), off: make([]int, 1, len(seq)+1), y: []float64{0}}
	for s := range p.T {
		row := seq[s]
		if newestFirst {
			row = seq[p.T-1-s]
		}
		for k, v := range row {
			if v != 0 {
				p.idx = append(p.idx, int32(k))
				p.val = append(p.val, v)
			}
		}
		p.off = append(p.off, len(p.idx))
	}
	return p
}

// row returns the non-zero entries of step t of sample s.
func (p *packed) row(s, t int) ([]int32, []float64) {
	a, b := p.off[s*p.T+t], p.off[s*p.T+t+1]
	return p.idx[a:b], p.val[a:b]
}
