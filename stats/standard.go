package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/crosscluster/crosscluster/internal/logit"
	"github.com/crosscluster/crosscluster/internal/par"
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
// Column-major data can be passed as m.T() of a features × rows
// *mat.Dense m: the columns are then summed on all cores, each in row
// order, with results identical to the row-major matrix.
//
// It returns an error wrapping ErrEmpty if X has no rows or a column has
// no non-NaN value, and ErrNaN if X holds ±Inf (naming row and column).
// X is not modified.
func FitStandardizer(X mat.Matrix) (*Standardizer, error) {
	r, c := X.Dims()
	if r == 0 {
		return nil, fmt.Errorf("stats: FitStandardizer: no rows: %w", ErrEmpty)
	}
	if data, stride, ok := logit.ColMajor(X); ok {
		return fitStandardizerCols(data, stride, r, c)
	}
	at := logit.Rows(X)
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
			sq[j] += float64(d * d) // rounded before the sum: the same bits as the column paths wherever multiply-adds fuse
		}
	}
	for j := range sq {
		s.Scale[j] = stdScale(sq[j], corr[j], count[j], s.Mean[j])
	}
	return s, nil
}

// epsilon is the float64 machine epsilon, 2⁻⁵².
const epsilon = 0x1p-52

// stdScale is the population standard deviation from the two-pass sums, or
// 1 for a column that is constant up to rounding (scikit-learn's test).
func stdScale(sq, corr float64, count int, mean float64) float64 {
	n := float64(count)
	v := (sq - corr*corr/n) / n
	ub := n*epsilon*v + math.Pow(n*mean*epsilon, 2)
	if v <= ub {
		return 1
	}
	return math.Sqrt(v)
}

// fitStandardizerCols is FitStandardizer for column-major data (column j
// is data[j*stride:][:r]). Each column's sums run over the rows in order,
// as in the row-major loop, so the results are identical; the columns are
// shared out among goroutines.
func fitStandardizerCols(data []float64, stride, r, c int) (*Standardizer, error) {
	s := &Standardizer{Mean: make([]float64, c), Scale: make([]float64, c)}
	infRow := make([]int, c) // first ±Inf row per column, or -1
	count := make([]int, c)
	// Each column's sums are one dependency chain, whose latency bounds
	// the loop: the fast path runs the chains of three columns side by
	// side (each still in row order, so with identical results); a column
	// with a NaN or ±Inf, or outside a complete group, takes the general
	// loop.
	nGroups := (c + stdGroup - 1) / stdGroup
	par.For(nGroups, 0, func(_, g int) {
		lo, hi := g*stdGroup, min((g+1)*stdGroup, c)
		col := func(j int) []float64 { return data[j*stride : j*stride+r] }
		ok := [3]bool{}
		if hi-lo == stdGroup && r > 0 {
			ok = fitCols3(col(lo), col(lo+1), col(lo+2), s.Mean[lo:hi], s.Scale[lo:hi])
		}
		for j := lo; j < hi; j++ {
			if ok[j-lo] {
				infRow[j], count[j] = -1, r
			} else {
				fitStandardizerCol(col(j), j, s, infRow, count)
			}
		}
	})
	// The errors the row-major loop would meet first: the first ±Inf in
	// row order, then the first column without a value.
	bi, bj := -1, -1
	for j, i := range infRow {
		if i >= 0 && (bi < 0 || i < bi) {
			bi, bj = i, j
		}
	}
	if bi >= 0 {
		return nil, fmt.Errorf("stats: FitStandardizer: row %d, column %d is %v: %w", bi, bj, data[bj*stride+bi], ErrNaN)
	}
	for j, n := range count {
		if n == 0 {
			return nil, fmt.Errorf("stats: FitStandardizer: column %d has no non-NaN value: %w", j, ErrEmpty)
		}
	}
	return s, nil
}

// fitStandardizerCol fits column j (col) of fitStandardizerCols into s,
// recording its first ±Inf row (or -1) and its count of non-NaN values.
func fitStandardizerCol(col []float64, j int, s *Standardizer, infRow, count []int) {
	infRow[j] = -1
	n, sum := 0, 0.0
	for i, v := range col {
		if math.IsNaN(v) {
			continue
		}
		if math.IsInf(v, 0) {
			infRow[j] = i
			return
		}
		n++
		sum += v
	}
	count[j] = n
	if n == 0 {
		return
	}
	mean := sum / float64(n)
	var corr, sq float64
	for _, v := range col {
		if math.IsNaN(v) {
			continue
		}
		d := v - mean
		corr += d
		sq += float64(d * d)
	}
	s.Mean[j] = mean
	s.Scale[j] = stdScale(sq, corr, n, mean)
}

// stdGroup is the number of columns whose sums fitCols3 runs side by side.
const stdGroup = 3

// fitCols3 computes the mean and scale of each of the columns a, b, c (of
// the same length r ≥ 1) as fitStandardizerCol does, with the sums of the
// three in one loop over the rows, and reports per column whether it was
// all finite; the mean and scale of the others are not set.
func fitCols3(a, b, c []float64, mean, scale []float64) (ok [3]bool) {
	r := len(a)
	b, c = b[:r], c[:r]
	var sa, sb, sc, za, zb, zc float64
	for i, va := range a {
		vb, vc := b[i], c[i]
		sa += va
		sb += vb
		sc += vc
		// 0, or NaN once a value is NaN or ±Inf.
		za += va - va
		zb += vb - vb
		zc += vc - vc
	}
	fr := float64(r)
	ma, mb, mc := sa/fr, sb/fr, sc/fr
	var ca, cb, cc, qa, qb, qc float64
	for i, va := range a {
		da, db, dc := va-ma, b[i]-mb, c[i]-mc
		ca += da
		cb += db
		cc += dc
		qa += float64(da * da)
		qb += float64(db * db)
		qc += float64(dc * dc)
	}
	ok = [3]bool{za == 0, zb == 0, zc == 0}
	for j, v := range [3][3]float64{{ma, ca, qa}, {mb, cb, qb}, {mc, cc, qc}} {
		if ok[j] {
			mean[j] = v[0]
			scale[j] = stdScale(v[2], v[1], r, v[0])
		}
	}
	return ok
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
	at := logit.Rows(X)
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
