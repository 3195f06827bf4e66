package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Standardizer centres and scales columns: Transform maps x to
// (x - Mean[j]) / Scale[j] in column j.
type Standardizer struct {
	Mean, Scale []float64
}

// FitStandardizer returns the column means and population standard
// deviations of X as scikit-learn's StandardScaler computes them: NaNs are
// ignored column by column, the variance uses the corrected two-pass
// algorithm, and a column that is constant up to rounding (variance ≤
// n·eps·var + (n·mean·eps)², scikit-learn's test) gets scale 1.
//
// It returns an error wrapping ErrEmpty if X has no rows or a column has
// no non-NaN value, and ErrNaN if X holds ±Inf (naming row and column).
// X is not modified.
func FitStandardizer(X mat.Matrix) (*Standardizer, error) {
	r, c := X.Dims()
	if r == 0 {
		return nil, fmt.Errorf("stats: FitStandardizer: no rows: %w", ErrEmpty)
	}
	at := rowAccessor(X)
	s := &Standardizer{Mean: make([]float64, c), Scale: make([]float64, c)}
	count := make([]int, c)
	sum := make([]float64, c)
	for i := 0; i < r; i++ {
		row := at(i)
		for j, v := range row {
			if math.IsNaN(v) {
				continue
			}
			if math.IsInf(v, 0) {
				return nil, fmt.Errorf("stats: FitStandardizer: row %d, column %d is %v: %w", i, j, v, ErrNaN)
			}
			count[j]++
			sum[j] += v
		}
	}
	for j := range sum {
		if count[j] == 0 {
			return nil, fmt.Errorf("stats: FitStandardizer: column %d has no non-NaN value: %w", j, ErrEmpty)
		}
		s.Mean[j] = sum[j] / float64(count[j])
	}
	corr := make([]float64, c)
	sq := make([]float64, c)
	for i := 0; i < r; i++ {
		row := at(i)
		for j, v := range row {
			if math.IsNaN(v) {
				continue
			}
			d := v - s.Mean[j]
			corr[j] += d
			sq[j] += d * d
		}
	}
	for j := range sq {
		n := float64(count[j])
		v := (sq[j] - corr[j]*corr[j]/n) / n
		ub := n*epsilon*v + math.Pow(n*s.Mean[j]*epsilon, 2)
		if v <= ub {
			s.Scale[j] = 1
		} else {
			s.Scale[j] = math.Sqrt(v)
		}
	}
	return s, nil
}

// Transform writes the standardised X into dst and returns it; a nil dst
// is allocated. NaN stays NaN. Transform panics if X's column count differs
// from len(s.Mean) or dst has the wrong shape.
func (s *Standardizer) Transform(dst *mat.Dense, X mat.Matrix) *mat.Dense {
	r, c := X.Dims()
	if c != len(s.Mean) || c != len(s.Scale) {
		panic("stats: Standardizer: column count mismatch")
	}
	if dst == nil {
		dst = mat.NewDense(r, c, nil)
	} else if dr, dc := dst.Dims(); dr != r || dc != c {
		panic("stats: Standardizer: destination shape mismatch")
	}
	at := rowAccessor(X)
	raw := dst.RawMatrix()
	for i := 0; i < r; i++ {
		row := at(i)
		out := raw.Data[i*raw.Stride : i*raw.Stride+c]
		for j, v := range row {
			out[j] = (v - s.Mean[j]) / s.Scale[j]
		}
	}
	return dst
}

// rowAccessor returns a function giving row i of X. For *mat.Dense it
// returns views of the backing array; otherwise it copies into one buffer
// that is overwritten by the next call.
func rowAccessor(X mat.Matrix) func(i int) []float64 {
	_, c := X.Dims()
	if d, ok := X.(mat.RawMatrixer); ok {
		raw := d.RawMatrix()
		return func(i int) []float64 { return raw.Data[i*raw.Stride : i*raw.Stride+c] }
	}
	buf := make([]float64, c)
	return func(i int) []float64 {
		for j := range buf {
			buf[j] = X.At(i, j)
		}
		return buf
	}
}
