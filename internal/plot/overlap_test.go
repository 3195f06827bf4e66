package plot

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/crosscluster/crosscluster/internal/plottest"
	"github.com/crosscluster/crosscluster/overlap"
)

// twoDomains returns n source and n target jobs of d standard normal
// features, the target's first feature shifted by shift and its second by
// shift/3.
func twoDomains(seed uint64, n, d int, shift float64) (*mat.Dense, []int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := mat.NewDense(2*n, d, nil)
	y := make([]int, 2*n)
	for i := range 2 * n {
		s := 0.0
		if i >= n {
			y[i], s = overlap.Target, shift
		}
		for j := range d {
			v := rng.NormFloat64()
			switch j {
			case 0:
				v += s
			case 1:
				v += s / 3
			}
			x.Set(i, j, v)
		}
	}
	return x, y
}

// TestPropensity renders both domains' histograms of a fitted result and
// the figure of an empty domain, each checked for size and ink.
func TestPropensity(t *testing.T) {
	x, y := twoDomains(3, 400, 2, 0.8)
	res, err := overlap.Fit(x, y, overlap.Band{Lo: 0.2, Hi: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, d := range []int{overlap.Source, overlap.Target} {
		path := filepath.Join(dir, "p.png")
		if err := Propensity(path, res, d, "anvil"); err != nil {
			t.Fatal(err)
		}
		plottest.Check(t, path, 600, 400)
	}
	if err := Propensity(filepath.Join(dir, "x.png"), res, 7, "anvil"); err == nil {
		t.Error("domain 7 accepted")
	}
	empty, _ := overlap.Fit(mat.NewDense(2, 1, []float64{1, 2}), []int{0, 0}, overlap.Band{Lo: 0.2, Hi: 0.8})
	if empty == nil {
		t.Fatal("no result for an empty target")
	}
	path := filepath.Join(dir, "empty.png")
	if err := Propensity(path, empty, overlap.Target, "conte"); err != nil {
		t.Fatal(err)
	}
	plottest.Check(t, path, 600, 400)
}

// TestPairwise renders the many-cluster heatmaps of three and of eight
// clusters (narrow cells drop the second line) and rejects a matrix of one.
func TestPairwise(t *testing.T) {
	dir := t.TempDir()
	for _, k := range []int{3, 8} {
		rng := rand.New(rand.NewPCG(uint64(k), 2))
		var clusters []overlap.Cluster
		for c := range k {
			x := mat.NewDense(150, 2, nil)
			for i := range 150 {
				x.Set(i, 0, rng.NormFloat64()+0.4*float64(c))
				x.Set(i, 1, rng.NormFloat64())
			}
			clusters = append(clusters, overlap.Cluster{Name: string(rune('a' + c)), X: x})
		}
		m, err := overlap.Pairwise(context.Background(), clusters, overlap.Band{Lo: 0.2, Hi: 0.8})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "pairwise.png")
		if err := Pairwise(path, m); err != nil {
			t.Fatal(err)
		}
		plottest.Check(t, path, 1100, 500)
		if err := Pairwise(filepath.Join(dir, "pairwise.svg"), m); err != nil {
			t.Fatal(err)
		}
	}
	if err := Pairwise(filepath.Join(dir, "one.png"), &overlap.PairMatrix{Names: []string{"a"}}); !errors.Is(err, ErrNoData) {
		t.Errorf("one cluster: %v", err)
	}
}

// TestOverlapFigures renders the density, balance and band-width figures
// of a fitted result (and of one whose band holds no target job, which
// leaves the in-band SMDs NaN), each checked for size and ink; a result
// without propensities is ErrNoData.
func TestOverlapFigures(t *testing.T) {
	x, y := twoDomains(8, 500, 3, 1.2)
	dir := t.TempDir()
	for _, band := range []overlap.Band{{Lo: 0.2, Hi: 0.8}, {Lo: 0.999, Hi: 1}} {
		res, err := overlap.Fit(x, y, band, overlap.WithFeatureNames("a", "b", "c"))
		if err != nil {
			t.Fatal(err)
		}
		sweep, err := res.Sweep()
		if err != nil {
			t.Fatal(err)
		}
		for name, draw := range map[string]func(string) error{
			"density.png":   func(p string) error { return Densities(p, res, "anvil", "conte") },
			"balance.png":   func(p string) error { return Balance(p, res) },
			"bandwidth.png": func(p string) error { return BandWidth(p, res, sweep, "anvil", "conte") },
			"bandwidth.svg": func(p string) error { return BandWidth(p, res, nil, "anvil", "conte") },
		} {
			path := filepath.Join(dir, name)
			if err := draw(path); err != nil {
				t.Fatalf("%v %s: %v", band, name, err)
			}
			if filepath.Ext(name) == ".png" {
				plottest.Check(t, path, 600, 400)
			}
		}
	}
	empty, _ := overlap.Fit(mat.NewDense(2, 1, []float64{1, 2}), []int{0, 0}, overlap.Band{Lo: 0.2, Hi: 0.8})
	for name, err := range map[string]error{
		"density":   Densities(filepath.Join(dir, "e1.png"), empty, "a", "b"),
		"balance":   Balance(filepath.Join(dir, "e2.png"), &overlap.Result{}),
		"bandwidth": BandWidth(filepath.Join(dir, "e3.png"), empty, nil, "a", "b"),
	} {
		if !errors.Is(err, ErrNoData) {
			t.Errorf("%s of an empty result: %v, want ErrNoData", name, err)
		}
	}
}
