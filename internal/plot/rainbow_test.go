package plot

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/crosscluster/crosscluster/internal/plottest"
)

func TestBars(t *testing.T) {
	dir := t.TempDir()
	cats := []string{"none", "arch", "arch+compiler", "arch+compiler+versions"}
	path := filepath.Join(dir, "bars.png")
	err := Bars(path, "reliabuild: Build success (expected)", "mean build success", cats, []BarSeries{
		{Name: "expected", Values: []float64{0.31, 0.52, 0.77, 1}, Err: []float64{0.04, 0.03, 0.02, 0}},
		{Name: "seeded draw", Values: []float64{0.29, 0.55, 0.75, math.NaN()}},
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	plottest.Check(t, path, 600, 0) // taller than 400: room for the slanted long names
	counts := filepath.Join(dir, "counts.png")
	if err := Bars(counts, "Unmatched submissions", "count", cats[:2], []BarSeries{{Name: "expected", Values: []float64{3, 0}}}, true); err != nil {
		t.Fatal(err)
	}
	plottest.Check(t, counts, 600, 400)
	if err := Bars(filepath.Join(dir, "x.png"), "x", "y", nil, nil, false); !errors.Is(err, ErrNoData) {
		t.Errorf("no categories: %v", err)
	}
	if err := Bars(filepath.Join(dir, "x.png"), "x", "y", cats, []BarSeries{{Name: "short", Values: []float64{1}}}, false); err == nil {
		t.Error("a series shorter than the categories accepted")
	}
}

func TestPoints(t *testing.T) {
	dir := t.TempDir()
	cats := []string{"none", "arch-subsystem", "arch-compiler-compiler-version-memory"}
	path := filepath.Join(dir, "points.png")
	err := Points(path, "spack-build: build success", "share", cats, []BarSeries{
		{Name: "published (one draw)", Values: []float64{0.06, math.NaN(), 1}},
		{Name: "ours: expected ±1 SE", Values: []float64{0.063, 0.478, 1}, Err: []float64{0.0014, 0.0026, 0}},
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	plottest.Check(t, path, 0, 0)
	if err := Points(path, "t", "y", cats, []BarSeries{{Name: "short", Values: []float64{1}}}, false); err == nil {
		t.Error("a series shorter than the categories accepted")
	}
	if err := Points(path, "t", "y", cats[:1], []BarSeries{{Name: "nan", Values: []float64{math.NaN()}}}, false); !errors.Is(err, ErrNoData) {
		t.Errorf("no finite value: %v, want ErrNoData", err)
	}
}

func TestHistogramAndCounts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hist.png")
	vals := []float64{0, 0.1, 0.25, 0.5, 0.5, 0.99, 1, 1.5, math.NaN()}
	if err := Histogram(path, "share matched", "share", "jobs", "%.2f", []float64{0, 0.5, 1}, []HistSeries{{Name: "a", Values: vals}}); err != nil {
		t.Fatal(err)
	}
	plottest.Check(t, path, 0, 0)
	cpath := filepath.Join(dir, "counts.png")
	if err := Counts(cpath, "unmatched_at", "subsystems", "jobs", []HistSeries{{Name: "published", Values: []float64{2, 2, 3}}, {Name: "ours", Values: []float64{2, 3, 3, 2.5}}}); err != nil {
		t.Fatal(err)
	}
	plottest.Check(t, cpath, 0, 0)
	if err := Counts(cpath, "x", "x", "y", []HistSeries{{Name: "none", Values: []float64{0.5}}}); !errors.Is(err, ErrNoData) {
		t.Errorf("no integer value: %v, want ErrNoData", err)
	}
}

// TestHistogramBins: a value on an inner edge counts in the bin it opens,
// the last edge closes the last bin, and values outside are not counted.
func TestHistogramBins(t *testing.T) {
	edges := []float64{0, 0.5, 1}
	var got []int
	for _, v := range []float64{0, 0.25, 0.5, 0.75, 1, -0.1, 1.1} {
		got = append(got, binOf(edges, v))
	}
	want := []int{0, 0, 1, 1, 1, -1, -1}
	if !slices.Equal(got, want) {
		t.Errorf("bins %v, want %v", got, want)
	}
}

// TestPercentile against numpy.percentile (NumPy 1.24, default linear
// interpolation): np.percentile([1, 2, 3, 4, 10], [0, 5, 25, 50, 75, 95,
// 100]) = [1, 1.2, 2, 3, 4, 8.8, 10].
func TestPercentile(t *testing.T) {
	s := boxStats([]float64{1, 2, 3, 4, 10})
	want := [7]float64{1, 1.2, 2, 3, 4, 8.8, 10}
	for i := range s {
		if math.Abs(s[i]-want[i]) > 1e-12 {
			t.Errorf("percentile %d: %v, want %v", i, s[i], want[i])
		}
	}
	if !math.IsNaN(percentile(nil, 0.5)) {
		t.Error("percentile of nothing is not NaN")
	}
}

func TestBoxesAndPanels(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "boxes.png")
	var groups []BoxGroup
	for i := range 30 {
		v := make([]float64, 200)
		for k := range v {
			v[k] = float64(i) + math.Sin(float64(k))*float64(i%5+1)
		}
		groups = append(groups, BoxGroup{Name: fmt.Sprintf("package-%02d", i), Values: v})
	}
	groups = append(groups, BoxGroup{Name: "empty"})
	if err := Boxes(path, "additional runtime by package", "seconds", groups); err != nil {
		t.Fatal(err)
	}
	plottest.Check(t, path, 0, 0)
	if err := Boxes(path, "t", "x", []BoxGroup{{Name: "nan", Values: []float64{math.NaN()}}}); !errors.Is(err, ErrNoData) {
		t.Errorf("no value: %v, want ErrNoData", err)
	}
	ppath := filepath.Join(dir, "panels.png")
	panels := []Panel{{Title: "none", Values: groups[3].Values}, {Title: "arch", Values: groups[7].Values}, {Title: "nothing"}, {Title: "memory", Values: groups[9].Values}}
	if err := HistogramPanels(ppath, "per-job cost by level", "dollars", panels, 3, 20); err != nil {
		t.Fatal(err)
	}
	plottest.Check(t, ppath, 0, 0)
}
