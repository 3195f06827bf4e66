package overlap

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/gonum/mat"
)

// ErrClusters: Pairwise was given fewer than two clusters, a cluster
// without a name or with a name another has, or clusters whose feature
// counts differ.
var ErrClusters = errors.New("overlap: invalid cluster set")

// Cluster is one cluster's jobs for Pairwise: rows are jobs, columns the
// features, the same features in the same order for every cluster.
type Cluster struct {
	Name string
	X    mat.Matrix
}

// Pair compares two clusters by one domain classifier with Source's jobs
// as the source (y = 0) and Target's as the target (y = 1).
type Pair struct {
	Source, Target string
	// AUC is the classifier's in-sample AUC with its DeLong standard
	// error and 95% interval (Result.AUCInterval).
	AUC AUCInterval
	// Coverage is the share of the target's jobs in the band,
	// SourceCoverage the share of the source's.
	Coverage, SourceCoverage     float64
	NSource, NTarget             int
	NSourceInBand, NTargetInBand int
	// Notes are the fit's notes (separable domains, constant features).
	Notes []string
}

// PairMatrix holds the pairwise comparisons of k clusters.
type PairMatrix struct {
	Names []string
	Band  Band
	// Pairs[i][j] (i ≠ j) reads cluster j as seen from cluster i: its
	// Source is Names[i], its Target Names[j], its Coverage the share of
	// j's jobs in the band and its SourceCoverage the share of i's. The
	// diagonal is nil.
	Pairs [][]*Pair
	// Fits is the number of domain classifiers fitted: one per unordered
	// pair for a band symmetric about ½, one per ordered pair otherwise.
	Fits int
}

// Pairwise compares every pair of k ≥ 2 clusters (meant for k ≥ 3: for two,
// Fit says more) with Fit's procedure (opts as for Fit, band the propensity
// band): the domain classifier's in-sample AUC with its DeLong interval,
// and the coverage of the band in both directions, the share of each
// cluster's jobs in the band when compared with the other.
//
// For a band symmetric about ½ (Lo + Hi = 1, as the default [0.2, 0.8]) the
// classifier of i against j, whose propensity is P(j | x), is also the
// classifier of j against i (P(i | x) = 1 − P(j | x) lies in the band
// exactly when P(j | x) does), so one fit per unordered pair gives both
// cells: Pairs[j][i] is Pairs[i][j] with the roles swapped. For any other
// band both orders are fitted. Fits run one after another, each on all
// cores, with one Fitter. Cancelling ctx stops Pairwise before its next
// fit; it then returns ctx.Err().
//
// Fewer than two clusters, an empty or repeated name, or feature counts
// that differ are errors wrapping ErrClusters, a cluster without jobs
// ErrEmptyDomain; a fit's error (a non-finite value, say) is returned
// wrapped with the pair's names.
// Fit panics on mismatched feature names (WithFeatureNames) as it would for
// any pair.
func Pairwise(ctx context.Context, clusters []Cluster, band Band, opts ...Option) (*PairMatrix, error) {
	k := len(clusters)
	if k < 2 {
		return nil, fmt.Errorf("%w: %d clusters, need at least 2", ErrClusters, k)
	}
	if err := band.Check(); err != nil {
		return nil, err
	}
	seen := make(map[string]bool, k)
	_, d := clusters[0].X.Dims()
	for _, c := range clusters {
		if c.Name == "" || seen[c.Name] {
			return nil, fmt.Errorf("%w: cluster name %q empty or repeated", ErrClusters, c.Name)
		}
		seen[c.Name] = true
		if r, _ := c.X.Dims(); r == 0 {
			return nil, fmt.Errorf("%w: cluster %s has no jobs", ErrEmptyDomain, c.Name)
		}
		if _, dc := c.X.Dims(); dc != d {
			return nil, fmt.Errorf("%w: %s has %d features, %s %d", ErrClusters, c.Name, dc, clusters[0].Name, d)
		}
	}
	m := &PairMatrix{Band: band, Pairs: make([][]*Pair, k)}
	for i, c := range clusters {
		m.Names = append(m.Names, c.Name)
		m.Pairs[i] = make([]*Pair, k)
	}
	var ws pairSpace
	for i := range k {
		for j := range k {
			if !fitted(band, i, j) {
				continue
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			p, err := ws.compare(clusters[i], clusters[j], band, opts)
			if err != nil {
				return nil, err
			}
			m.Fits++
			m.Pairs[i][j] = p
			if !fitted(band, j, i) { // one fit serves both cells
				m.Pairs[j][i] = p.swapped()
			}
		}
	}
	return m, nil
}

// fitted reports whether Pairwise fits cluster i against cluster j: every
// ordered pair, or for a band symmetric about ½ (one classifier serves both
// orders) only i < j.
func fitted(band Band, i, j int) bool {
	return i != j && (band.Lo+band.Hi != 1 || i < j)
}

// FittedPairs returns the pairs Pairwise fitted, each once, in the order
// fitted and in the direction fitted (its Notes are that fit's): for a band
// symmetric about ½ the cells above the diagonal, otherwise every cell.
func (m *PairMatrix) FittedPairs() []*Pair {
	var out []*Pair
	for i, row := range m.Pairs {
		for j, p := range row {
			if p != nil && fitted(m.Band, i, j) {
				out = append(out, p)
			}
		}
	}
	return out
}

// pairSpace holds Pairwise's buffers from one pair to the next: the
// Fitter and the stacked rows and labels of the pair.
type pairSpace struct {
	f Fitter
	x []float64
	y []int
}

// compare fits a (source) against b (target).
func (ws *pairSpace) compare(a, b Cluster, band Band, opts []Option) (*Pair, error) {
	na, d := a.X.Dims()
	nb, _ := b.X.Dims()
	x := mat.NewDense(na+nb, d, take(&ws.x, (na+nb)*d))
	x.Slice(0, na, 0, d).(*mat.Dense).Copy(a.X)
	x.Slice(na, na+nb, 0, d).(*mat.Dense).Copy(b.X)
	y := take(&ws.y, na+nb)
	for i := range y {
		y[i] = Source
		if i >= na {
			y[i] = Target
		}
	}
	res, err := ws.f.Fit(x, y, band, opts...)
	if err != nil {
		return nil, fmt.Errorf("overlap: %s against %s: %w", a.Name, b.Name, err)
	}
	iv, err := res.AUCInterval()
	if err != nil {
		// A cluster of one job has no DeLong variance: keep the AUC.
		iv = AUCInterval{AUC: res.AUC, SE: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
		res.Notes = append(res.Notes, "no DeLong interval: "+err.Error())
	}
	return &Pair{Source: a.Name, Target: b.Name, AUC: iv,
		Coverage: res.Coverage, SourceCoverage: res.SourceCoverage,
		NSource: res.NSource, NTarget: res.NTarget, NSourceInBand: res.NSourceInBand, NTargetInBand: res.NTargetInBand,
		Notes: res.Notes}, nil
}

// swapped returns p seen from its target: the same fit, the roles named
// the other way round.
func (p *Pair) swapped() *Pair {
	return &Pair{Source: p.Target, Target: p.Source, AUC: p.AUC,
		Coverage: p.SourceCoverage, SourceCoverage: p.Coverage,
		NSource: p.NTarget, NTarget: p.NSource, NSourceInBand: p.NTargetInBand, NTargetInBand: p.NSourceInBand,
		Notes: p.Notes}
}

// WriteCSV writes one row per ordered pair (source, target): the AUC with
// its DeLong standard error and 95% interval, and the shares of the
// target's and the source's jobs in the band with their counts. Values
// that are NaN are written empty.
func (m *PairMatrix) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"source", "target", "band_lo", "band_hi", "auc", "auc_se_delong", "auc_ci95_lo", "auc_ci95_hi",
		"target_coverage", "n_target_in_band", "n_target", "source_coverage", "n_source_in_band", "n_source"})
	g := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 10, 64)
	}
	for i, row := range m.Pairs {
		for j, p := range row {
			if i == j || p == nil {
				continue
			}
			cw.Write([]string{p.Source, p.Target, g(m.Band.Lo), g(m.Band.Hi), g(p.AUC.AUC), g(p.AUC.SE), g(p.AUC.Lo), g(p.AUC.Hi),
				g(p.Coverage), strconv.Itoa(p.NTargetInBand), strconv.Itoa(p.NTarget),
				g(p.SourceCoverage), strconv.Itoa(p.NSourceInBand), strconv.Itoa(p.NSource)})
		}
	}
	cw.Flush()
	return cw.Error()
}
