package plot

import (
	"errors"
	"math"
	"path/filepath"
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
	plottest.Check(t, path, 600, 400)
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
