package lstm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/crosscluster/crosscluster/internal/par"
)

// Model is a stacked unidirectional LSTM with a linear head and a sigmoid,
// giving the probability that a held job should be released.
//
// All parameters live in one slice so that optimisers and gradient clipping
// treat them uniformly. Input-to-hidden and hidden-to-hidden matrices are kept
// transposed relative to PyTorch (in×4H rather than 4H×in) so that gathering
// the column of one active input feature reads contiguous memory; ImportTorch
// and ExportTorch convert.
//
// A Model is safe for concurrent use by several goroutines as long as none of
// them modifies it.
type Model struct {
	inputs, hidden, layers int
	newestFirst            bool
	cell                   Cell

	params []float64
	lay    []layerParams
	fcW    []float64 // H
	fcB    []float64 // 1
}

// Architecture describes the shape of a model.
type Architecture struct {
	Inputs int // features per time step (e, the number of event types)
	Hidden int // H, hidden units per layer
	Layers int // stacked LSTM layers

	// NewestFirst says the rows of a sequence are ordered newest first, as
	// some tensor builders write them. The model then reads the rows in
	// reverse so that its head sees the state after the latest frame.
	NewestFirst bool

	Cell Cell // the recurrent cell; the zero value is LSTM
}

// numParams is the length of the parameter vector of the architecture.
func (a Architecture) numParams() int {
	n := 0
	in := a.Inputs
	g := a.Cell.gates()
	for range a.Layers {
		n += in*g*a.Hidden + a.Hidden*g*a.Hidden + 2*g*a.Hidden
		in = a.Hidden
	}
	return n + a.Hidden + 1
}

// newModel allocates a zero model of the architecture.
func newModel(a Architecture) *Model {
	if a.Inputs <= 0 || a.Hidden <= 0 || a.Layers <= 0 {
		panic("lstm: non-positive model dimension")
	}
	if a.Cell != LSTM && a.Cell != GRU {
		panic("lstm: unknown Cell")
	}
	m := &Model{inputs: a.Inputs, hidden: a.Hidden, layers: a.Layers, newestFirst: a.NewestFirst, cell: a.Cell}
	m.params = make([]float64, a.numParams())
	m.bind()
	return m
}

// bind points the layer views at m.params.
func (m *Model) bind() {
	if m.cell == GRU {
		n := len(m.params)
		m.fcW, m.fcB = m.params[n-m.hidden-1:n-1:n-1], m.params[n-1:]
		return
	}
	v := bindParams(m.params, m.inputs, m.hidden, m.layers)
	m.lay, m.fcW, m.fcB = v.lay, v.fcW, v.fcB
}

// New returns a model of the given architecture initialised as PyTorch
// initialises nn.LSTM (or nn.GRU) and nn.Linear: every recurrent weight and
// bias from U(-1/√H, 1/√H), the head's weight and bias from U(-1/√H, 1/√H) (fan-in H).
// Draws come from rnd only. New panics if a dimension is not positive or rnd
// is nil.
func New(a Architecture, rnd *rand.Rand) *Model {
	if rnd == nil {
		panic("lstm: nil random generator")
	}
	m := newModel(a)
	bound := 1 / math.Sqrt(float64(m.hidden))
	for i := range m.params {
		// 2u rounded first: U(-bound, bound) with the same bits on every
		// GOAMD64 level and architecture (no fused multiply-add).
		m.params[i] = bound * (float64(2*rnd.Float64()) - 1)
	}
	return m
}

// Architecture returns the model's shape.
func (m *Model) Architecture() Architecture {
	return Architecture{Inputs: m.inputs, Hidden: m.hidden, Layers: m.layers, NewestFirst: m.newestFirst, Cell: m.cell}
}

// Clone returns a deep copy of m.
func (m *Model) Clone() *Model {
	c := newModel(m.Architecture())
	copy(c.params, m.params)
	return c
}

// Errors returned for bad data. They are wrapped with the place of the
// problem (sample, step, key, epoch); test with errors.Is.
var (
	ErrWidth       = errors.New("input width does not match the model")
	ErrLength      = errors.New("sequences have different lengths")
	ErrEmpty       = errors.New("empty data set")
	ErrSingleClass = errors.New("training labels hold a single class")
	ErrLabel       = errors.New("label is neither 0 nor 1")
	ErrNaN         = errors.New("NaN or infinite value")
	ErrFormat      = errors.New("malformed model file")
	ErrStateDict   = errors.New("state_dict does not describe a supported model")
)

// wrapErr prefixes an error leaving an exported function with the
// package name, once: the sentinels above carry none, and the functions
// that wrap them add only the place.
func wrapErr(err *error) {
	if *err != nil {
		*err = fmt.Errorf("lstm: %w", *err)
	}
}

// Predict returns P(release) for one sequence of steps × features.
//
// Predict panics if a row's width differs from the model's input width or
// seq is empty; use Probabilities for data that has not been checked. NaN
// inputs give a NaN probability. seq is not modified.
func (m *Model) Predict(seq [][]float64) float64 {
	if len(seq) == 0 {
		panic("lstm: empty sequence")
	}
	for _, row := range seq {
		if len(row) != m.inputs {
			panic("lstm: input width mismatch")
		}
	}
	var p [1]float64
	if m.cell == GRU {
		m.gruProbabilities([][][]float64{seq}, p[:])
		return p[0]
	}
	m.net().probabilities(packSeq(seq, m.newestFirst), 1, 1, p[:])
	return p[0]
}

// Probabilities returns P(release) for every sequence of X (samples × steps
// × features). Unlike Predict it reports bad data as errors: a row of the
// wrong width (ErrWidth), an empty sequence (ErrEmpty), or a NaN or infinite
// input (ErrNaN), each naming the sample and step. X is not modified. It
// runs on every core; the result does not depend on how many there are.
func (m *Model) Probabilities(X [][][]float64) (_ []float64, err error) {
	defer wrapErr(&err)
	if m.cell == GRU {
		if err := m.checkInputs(X, false); err != nil {
			return nil, err
		}
		p := make([]float64, len(X))
		m.gruProbabilities(X, p)
		return p, nil
	}
	same := true
	for _, seq := range X {
		same = same && len(seq) == len(X[0])
	}
	if same && len(X) > 1 {
		// Equal lengths: the batched forward pass, which runs the
		// matrix kernels on many samples at a time.
		p := make([]float64, len(X))
		if err := m.net().predict(X, m.inputs, m.newestFirst, inferBatch, p); err != nil {
			return nil, err
		}
		return p, nil
	}
	// predict has checked the batched path's input; check the rest here.
	if err := m.checkInputs(X, false); err != nil {
		return nil, err
	}
	n := m.net()
	p := make([]float64, len(X))
	par.For(len(X), 0, func(_, i int) {
		n.probabilities(packSeq(X[i], m.newestFirst), 1, 1, p[i:i+1])
	})
	return p, nil
}

// inferBatch is the batch size of Probabilities' batched forward pass.
const inferBatch = 256

// checkInputs validates the shape and values of X. sameLength also requires
// every sequence to have the length of the first.
func (m *Model) checkInputs(X [][][]float64, sameLength bool) error {
	for i, seq := range X {
		if len(seq) == 0 {
			return fmt.Errorf("sample %d has no steps: %w", i, ErrEmpty)
		}
		if sameLength && len(seq) != len(X[0]) {
			return fmt.Errorf("sample %d has %d steps, sample 0 has %d: %w", i, len(seq), len(X[0]), ErrLength)
		}
		for t, row := range seq {
			if len(row) != m.inputs {
				return fmt.Errorf("sample %d step %d has %d features, the model takes %d: %w", i, t, len(row), m.inputs, ErrWidth)
			}
			for k, v := range row {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("sample %d step %d feature %d is %v: %w", i, t, k, v, ErrNaN)
				}
			}
		}
	}
	return nil
}
