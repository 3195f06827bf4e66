package overlap

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/crosscluster/crosscluster/regime"
)

// gaussCluster returns n jobs of d standard normal features, the first
// shifted by shift.
func gaussCluster(n, d int, shift float64, seed uint64) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 5))
	x := mat.NewDense(n, d, nil)
	for i := range n {
		for j := range d {
			v := rng.NormFloat64()
			if j == 0 {
				v += shift
			}
			x.Set(i, j, v)
		}
	}
	return x
}

// stackPair is the input Fit gets for a against b.
func stackPair(a, b mat.Matrix) (*mat.Dense, []int) {
	na, d := a.Dims()
	nb, _ := b.Dims()
	x := mat.NewDense(na+nb, d, nil)
	y := make([]int, na+nb)
	for i := range na + nb {
		for j := range d {
			if i < na {
				x.Set(i, j, a.At(i, j))
			} else {
				x.Set(i, j, b.At(i-na, j))
				y[i] = Target
			}
		}
	}
	return x, y
}

// TestPairwise: every cell equals Fit on the stacked pair (AUC, its DeLong
// interval and the band counts, bit for bit); with a symmetric band one fit
// serves both cells of a pair, with the coverages swapped; with another
// band both orders are fitted; the AUCs order the clusters as their shifts
// do; the CSV has one row per ordered pair.
func TestPairwise(t *testing.T) {
	clusters := []Cluster{
		{"a", gaussCluster(300, 3, 0, 1)},
		{"b", gaussCluster(250, 3, 0.5, 2)},
		{"c", gaussCluster(200, 3, 2.5, 3)},
	}
	for _, band := range []Band{{0.2, 0.8}, {0.3, 0.9}} {
		m, err := Pairwise(context.Background(), clusters, band)
		if err != nil {
			t.Fatal(err)
		}
		symmetric := band.Lo+band.Hi == 1
		if want := map[bool]int{true: 3, false: 6}[symmetric]; m.Fits != want {
			t.Errorf("%v: %d fits, want %d", band, m.Fits, want)
		}
		// FittedPairs: each fit once, in its fitted direction (source
		// before target in cluster order for a symmetric band).
		fp := m.FittedPairs()
		seen := map[[2]string]bool{}
		for _, p := range fp {
			seen[[2]string{p.Source, p.Target}] = true
			if symmetric && p.Source > p.Target { // clusters are named in order
				t.Errorf("%v: fitted pair %s → %s is the swapped view", band, p.Source, p.Target)
			}
		}
		if len(fp) != m.Fits || len(seen) != m.Fits {
			t.Errorf("%v: FittedPairs gave %d pairs (%d distinct), want %d", band, len(fp), len(seen), m.Fits)
		}
		for i, ci := range clusters {
			if m.Pairs[i][i] != nil {
				t.Errorf("diagonal %d is not nil", i)
			}
			for j, cj := range clusters {
				if i == j {
					continue
				}
				p := m.Pairs[i][j]
				if p.Source != ci.Name || p.Target != cj.Name {
					t.Fatalf("cell %d,%d compares %s with %s", i, j, p.Source, p.Target)
				}
				// The fit that made the cell: i against j, or j against i
				// with the roles swapped.
				fa, fb, swap := ci.X, cj.X, symmetric && j < i
				if swap {
					fa, fb = cj.X, ci.X
				}
				x, y := stackPair(fa, fb)
				res, err := Fit(x, y, band)
				if err != nil {
					t.Fatal(err)
				}
				iv, _ := res.AUCInterval()
				cov, srcCov, nIn, nSrcIn := res.Coverage, res.SourceCoverage, res.NTargetInBand, res.NSourceInBand
				if swap {
					cov, srcCov, nIn, nSrcIn = srcCov, cov, nSrcIn, nIn
				}
				if p.AUC != iv || p.Coverage != cov || p.SourceCoverage != srcCov || p.NTargetInBand != nIn || p.NSourceInBand != nSrcIn {
					t.Errorf("%v cell %s→%s: %+v, Fit gives AUC %+v coverage %v (%d) source %v (%d)", band, p.Source, p.Target, p, iv, cov, nIn, srcCov, nSrcIn)
				}
			}
		}
		// The shifts 0, 0.5 and 2.5 on one feature: a and c are the most
		// separable, a and b the least.
		if ab, ac, bc := m.Pairs[0][1].AUC.AUC, m.Pairs[0][2].AUC.AUC, m.Pairs[1][2].AUC.AUC; !(ab < bc && bc < ac) {
			t.Errorf("AUCs a-b %v, b-c %v, a-c %v: want increasing", ab, bc, ac)
		}
		var buf bytes.Buffer
		if err := m.WriteCSV(&buf); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&buf).ReadAll()
		if err != nil || len(recs) != 1+6 || recs[0][0] != "source" || len(recs[1]) != len(recs[0]) {
			t.Errorf("CSV: %d records (%v)", len(recs), err)
		}
	}
}

// TestPairwiseBadInput: clear typed errors, never a panic.
func TestPairwiseBadInput(t *testing.T) {
	a, b := gaussCluster(20, 2, 0, 1), gaussCluster(20, 2, 1, 2)
	nan := mat.DenseCopyOf(b)
	nan.Set(3, 1, math.NaN())
	for name, c := range map[string]struct {
		clusters []Cluster
		band     Band
		want     error
	}{
		"one cluster":    {[]Cluster{{"a", a}}, Band{0.2, 0.8}, ErrClusters},
		"no name":        {[]Cluster{{"a", a}, {"", b}}, Band{0.2, 0.8}, ErrClusters},
		"repeated name":  {[]Cluster{{"a", a}, {"a", b}}, Band{0.2, 0.8}, ErrClusters},
		"feature counts": {[]Cluster{{"a", a}, {"b", gaussCluster(5, 3, 0, 3)}}, Band{0.2, 0.8}, ErrClusters},
		"empty cluster":  {[]Cluster{{"a", a}, {"b", &mat.Dense{}}}, Band{0.2, 0.8}, ErrEmptyDomain},
		"non-finite":     {[]Cluster{{"a", a}, {"b", nan}, {"c", a}}, Band{0.2, 0.8}, ErrNonFinite},
		"band":           {[]Cluster{{"a", a}, {"b", b}}, Band{0.8, 0.2}, ErrBand},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Pairwise(context.Background(), c.clusters, c.band); !errors.Is(err, c.want) {
				t.Errorf("error %v, want %v", err, c.want)
			}
		})
	}
	// A cluster of one job has no DeLong variance: a note, not an error.
	m, err := Pairwise(context.Background(), []Cluster{{"a", a}, {"one", gaussCluster(1, 2, 0, 4)}}, Band{0.2, 0.8})
	if err != nil {
		t.Fatal(err)
	}
	if p := m.Pairs[0][1]; !math.IsNaN(p.AUC.SE) || len(p.Notes) == 0 {
		t.Errorf("one-job cluster: %+v", p)
	}
}

// TestPairwiseStampede compares Stampede's February and March 2018 as three
// periods (February's first and second half by submit time, March), and as
// the two months, where the pair must reproduce the reference AUC and band
// counts of SOURCES.md (TestStampedeReference).
func TestPairwiseStampede(t *testing.T) {
	feb, mar := stampedeMonths(t)
	names := regime.JobFeatures()
	matrix := func(jobs []regime.Job) mat.Matrix {
		x, err := regime.Matrix(jobs, names)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	m, err := Pairwise(context.Background(), []Cluster{{"feb", matrix(feb)}, {"mar", matrix(mar)}}, Band{0.2, 0.8}, WithFeatureNames(names...))
	if err != nil {
		t.Fatal(err)
	}
	p := m.Pairs[0][1]
	if math.Abs(p.AUC.AUC-0.5773640500807415) > aucExactTol || p.NTargetInBand != 809 || p.NSourceInBand != 2098 {
		t.Errorf("feb→mar: %+v, want SOURCES.md's AUC 0.5773640500807415, 809 and 2098 in band", p)
	}
	if q := m.Pairs[1][0]; q.NTargetInBand != 2098 || q.NSourceInBand != 809 || q.AUC != p.AUC {
		t.Errorf("mar→feb: %+v", q)
	}

	mid := time.Date(2018, 2, 15, 0, 0, 0, 0, time.UTC)
	var early, late []regime.Job
	for _, j := range feb {
		if j.Submit.Before(mid) {
			early = append(early, j)
		} else {
			late = append(late, j)
		}
	}
	m, err = Pairwise(context.Background(), []Cluster{{"feb1", matrix(early)}, {"feb2", matrix(late)}, {"mar", matrix(mar)}}, Band{0.2, 0.8}, WithFeatureNames(names...))
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range m.Pairs {
		for j, p := range row {
			if i == j {
				continue
			}
			if !(p.AUC.Lo <= p.AUC.AUC && p.AUC.AUC <= p.AUC.Hi) || p.NSource+p.NTarget == 0 {
				t.Errorf("%s→%s: %+v", p.Source, p.Target, p)
			}
			t.Logf("%s→%s: AUC %.4f [%.4f, %.4f], %d of %d target jobs in band", p.Source, p.Target, p.AUC.AUC, p.AUC.Lo, p.AUC.Hi, p.NTargetInBand, p.NTarget)
		}
	}
	if n := len(early) + len(late); n != len(feb) || len(early) == 0 || len(late) == 0 {
		t.Errorf("February split %d + %d of %d", len(early), len(late), len(feb))
	}
}
