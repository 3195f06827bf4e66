package overlap

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/crosscluster/crosscluster/stats"
)

// SweepRow is one band of a sweep: the coverage of both domains and the
// in-band comparison of every feature.
type SweepRow struct {
	Band                         Band
	Coverage, SourceCoverage     float64
	NSourceInBand, NTargetInBand int
	KS                           []stats.KSResult // per feature, in-band; NaN when a domain has no in-band job
	SMD                          []float64
}

// Sweep re-reads the fitted propensities for each band ([0.05,0.95],
// [0.1,0.9] and [0.2,0.8] when none are given) without refitting the classifier. An invalid band is an
// error wrapping ErrBand. Sweep on a Result without a fitted classifier (an
// empty domain) returns an error wrapping ErrEmptyDomain.
func (r *Result) Sweep(bands ...Band) ([]SweepRow, error) {
	if len(bands) == 0 {
		bands = defaultSweep()
	}
	if r.Propensity == nil {
		return nil, fmt.Errorf("%w: nothing was fitted", ErrEmptyDomain)
	}
	rows, err := r.coverages(bands...)
	if err != nil {
		return nil, err
	}
	for k := range rows {
		row := &rows[k]
		row.KS, row.SMD = make([]stats.KSResult, len(r.cols)), make([]float64, len(r.cols))
		for j := range r.cols {
			ks, smd, _, _, err := r.inBandCompare(j, row.Band)
			if err != nil {
				return nil, err
			}
			row.KS[j], row.SMD[j] = ks, smd
		}
	}
	return rows, nil
}

// coverages returns each band's coverage of both domains without the
// in-band comparisons that Sweep adds (KS and SMD are nil): one counting
// pass over the propensities per band, for curves over many bands. An
// invalid band is an error wrapping ErrBand; a Result without a fitted
// classifier gives ErrEmptyDomain.
func (r *Result) coverages(bands ...Band) ([]SweepRow, error) {
	if r.Propensity == nil {
		return nil, fmt.Errorf("%w: nothing was fitted", ErrEmptyDomain)
	}
	rows := make([]SweepRow, 0, len(bands))
	for _, b := range bands {
		if err := b.Check(); err != nil {
			return nil, err
		}
		row := SweepRow{Band: b}
		for i, p := range r.Propensity {
			if !b.contains(p) {
				continue
			}
			if r.y[i] == Target {
				row.NTargetInBand++
			} else {
				row.NSourceInBand++
			}
		}
		row.Coverage = float64(row.NTargetInBand) / float64(r.NTarget)
		row.SourceCoverage = float64(row.NSourceInBand) / float64(r.NSource)
		rows = append(rows, row)
	}
	return rows, nil
}

// Propensities returns the propensities of domain's rows (Source or
// Target), in row order; nil when nothing was fitted. It panics if domain
// is not Source or Target.
func (r *Result) Propensities(domain int) []float64 {
	if domain != Source && domain != Target {
		panic("overlap: domain must be Source or Target")
	}
	var p []float64
	for i, v := range r.Propensity {
		if int(r.y[i]) == domain {
			p = append(p, v)
		}
	}
	return p
}

// Mask returns, for every row, whether it belongs to domain (Source or
// Target) and lies in the band: the rows a transfer evaluation should use.
// It panics if domain is not Source or Target.
func (r *Result) Mask(domain int) []bool {
	if domain != Source && domain != Target {
		panic("overlap: domain must be Source or Target")
	}
	m := make([]bool, len(r.InBand))
	for i, in := range r.InBand {
		m[i] = in && int(r.y[i]) == domain
	}
	return m
}

// indices returns the indices of the true entries of mask, in order.
func indices(mask []bool) []int {
	var idx []int
	for i, m := range mask {
		if m {
			idx = append(idx, i)
		}
	}
	return idx
}

// Rows copies the rows of X whose mask entry is true into dst and returns
// it; a nil dst is allocated, otherwise it must have the right shape. It
// panics if len(mask) differs from X's rows. With no row selected it
// returns an empty matrix.
func Rows(dst *mat.Dense, X mat.Matrix, mask []bool) *mat.Dense {
	n, d := X.Dims()
	if len(mask) != n {
		panic("overlap: len(mask) != rows of X")
	}
	idx := indices(mask)
	if len(idx) == 0 {
		return &mat.Dense{}
	}
	if dst == nil {
		dst = mat.NewDense(len(idx), d, nil)
	} else if r, c := dst.Dims(); r != len(idx) || c != d {
		panic("overlap: dst has the wrong shape")
	}
	for k, i := range idx {
		for j := range d {
			dst.Set(k, j, X.At(i, j))
		}
	}
	return dst
}
