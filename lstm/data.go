package lstm

import (
	"fmt"
	"math"
	"slices"

	"github.com/crosscluster/crosscluster/internal/par"
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

// sequenceSteps returns the length of X's first sequence, which every
// sequence must share, or ErrEmpty for no samples or no steps.
func sequenceSteps(X [][][]float64) (int, error) {
	if len(X) == 0 {
		return 0, ErrEmpty
	}
	if len(X[0]) == 0 {
		return 0, fmt.Errorf("sample 0 has no steps: %w", ErrEmpty)
	}
	return len(X[0]), nil
}

// pack validates d against the model's input width and packs it. Every
// sequence must have the same length; labels must be 0 or 1. needBoth also
// requires both classes to be present. Chunks of samples are packed on
// every core and joined in order; the error returned is the one of the
// first bad sample, as a sequential scan would find it.
func pack(d Data, inputs int, newestFirst, needBoth bool) (*packed, error) {
	if len(d.X) != len(d.Y) {
		panic("lstm: len(X) != len(Y)")
	}
	steps, err := sequenceSteps(d.X)
	if err != nil {
		return nil, err
	}
	p := &packed{n: len(d.X), T: steps, I: inputs}
	nc := (p.n + packChunk - 1) / packChunk
	chunks := make([]packedChunk, nc)
	par.For(nc, 0, func(_, c int) {
		chunks[c].pack(d, c*packChunk, min((c+1)*packChunk, p.n), p.T, inputs, newestFirst)
	})
	var pos, nnz int
	for c := range chunks {
		if chunks[c].err != nil {
			return nil, chunks[c].err
		}
		pos += chunks[c].pos
		nnz += len(chunks[c].view.idx)
	}
	if needBoth && (pos == 0 || pos == p.n) {
		return nil, fmt.Errorf("%d released and %d removed samples: %w", pos, p.n-pos, ErrSingleClass)
	}
	p.off = make([]int, 1, p.n*p.T+1)
	p.idx = make([]int32, 0, nnz)
	p.val = make([]float64, 0, nnz)
	p.y = make([]float64, p.n)
	for c := range chunks {
		ch := &chunks[c]
		base := len(p.idx)
		for _, o := range ch.view.off[1:] {
			p.off = append(p.off, base+o)
		}
		p.idx = append(p.idx, ch.view.idx...)
		p.val = append(p.val, ch.view.val...)
		copy(p.y[c*packChunk:], ch.view.y)
	}
	return p, nil
}

// packChunk is the number of samples one task of pack validates and packs.
const packChunk = 64

// packGuess is the number of non-zeros a row is expected to hold at most,
// for the first allocation of a chunk's slices (the published inputs hold
// five on average).
const packGuess = 8

// packedChunk is a run of samples packed on its own, its slices reused
// from one run to the next. Its view is a packed set of the run alone.
type packedChunk struct {
	view packed
	pos  int
	err  error
}

// pack packs samples [lo, hi) of d, stopping at the first bad one. A nil
// d.Y means unlabelled samples (every y 0, no check).
func (ch *packedChunk) pack(d Data, lo, hi, T, inputs int, newestFirst bool) {
	p := &ch.view
	p.n, p.T, p.I = hi-lo, T, inputs
	ch.pos, ch.err = 0, nil
	// Room for packGuess non-zeros a row up front: growing the slices row
	// by row cost more than the scan itself on sparse one-hot rows.
	if guess := (hi - lo) * T * packGuess; cap(p.idx) < guess {
		p.idx = make([]int32, 0, guess)
		p.val = make([]float64, 0, guess)
	}
	p.off = append(p.off[:0], 0)
	p.idx, p.val = p.idx[:0], p.val[:0]
	p.y = slices.Grow(p.y[:0], hi-lo)[:hi-lo]
	clear(p.y)
	for i := lo; i < hi; i++ {
		seq := d.X[i]
		if len(seq) != T {
			ch.err = fmt.Errorf("sample %d has %d steps, sample 0 has %d: %w", i, len(seq), T, ErrLength)
			return
		}
		if d.Y != nil {
			switch d.Y[i] {
			case 0:
			case 1:
				ch.pos++
				p.y[i-lo] = 1
			default:
				ch.err = fmt.Errorf("sample %d has label %d: %w", i, d.Y[i], ErrLabel)
				return
			}
		}
		for s := range T {
			t := s
			if newestFirst {
				t = T - 1 - s
			}
			row := seq[t]
			if len(row) != inputs {
				ch.err = fmt.Errorf("sample %d step %d has %d features, the model takes %d: %w", i, t, len(row), inputs, ErrWidth)
				return
			}
			var k int
			if p.idx, p.val, k = appendNonZero(p.idx, p.val, row, true); k >= 0 {
				ch.err = fmt.Errorf("sample %d step %d feature %d is %v: %w", i, t, k, row[k], ErrNaN)
				return
			}
			p.off = append(p.off, len(p.idx))
		}
	}
}

// appendNonZero appends the index and value of every non-zero of row to idx
// and val. With check it stops at the first NaN or infinite value and
// returns its index as bad; bad is -1 otherwise. Where the CPU has AVX2 an
// assembly scan (nonZero16) lists the non-zeros of the first len(row) &^ 15
// values, skipping sixteen zeros at a time; elsewhere, and for the rest,
// runs of four zeros are skipped with one test of their bits.
func appendNonZero(idx []int32, val, row []float64, check bool) (_ []int32, _ []float64, bad int) {
	k := 0
	if useFMA && len(row) >= 16 {
		k = len(row) &^ 15
		n0 := len(idx)
		idx = slices.Grow(idx, k)
		n := nonZero16(row[:k], idx[n0:n0+k])
		idx = idx[:n0+n]
		for j, i := range idx[n0:] {
			v := row[i]
			if check && (math.IsNaN(v) || math.IsInf(v, 0)) {
				return idx[:n0+j], val, int(i)
			}
			val = append(val, v)
		}
	}
	for ; k+4 <= len(row); k += 4 {
		r := row[k : k+4 : k+4]
		if math.Float64bits(r[0])|math.Float64bits(r[1])|math.Float64bits(r[2])|math.Float64bits(r[3]) == 0 {
			continue
		}
		for j, v := range r {
			if v == 0 {
				continue
			}
			if check && (math.IsNaN(v) || math.IsInf(v, 0)) {
				return idx, val, k + j
			}
			idx = append(idx, int32(k+j))
			val = append(val, v)
		}
	}
	for ; k < len(row); k++ {
		if v := row[k]; v != 0 {
			if check && (math.IsNaN(v) || math.IsInf(v, 0)) {
				return idx, val, k
			}
			idx = append(idx, int32(k))
			val = append(val, v)
		}
	}
	return idx, val, -1
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
		p.idx, p.val, _ = appendNonZero(p.idx, p.val, row, false)
		p.off = append(p.off, len(p.idx))
	}
	return p
}

// row returns the non-zero entries of step t of sample s.
func (p *packed) row(s, t int) ([]int32, []float64) {
	a, b := p.off[s*p.T+t], p.off[s*p.T+t+1]
	return p.idx[a:b], p.val[a:b]
}
