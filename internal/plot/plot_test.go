package plot

import (
	"path/filepath"
	"testing"

	"github.com/crosscluster/crosscluster/internal/plottest"
	"gonum.org/v1/plot/plotter"
)

func TestIntTicks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lo, hi float64
		first  float64
		step   float64
	}{
		{"epochs", 1, 18, 5, 5},
		{"few", 0, 4, 0, 1},
		{"counts", 0, 9000, 0, 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ticks := IntTicks{}.Ticks(tc.lo, tc.hi)
			if len(ticks) == 0 || len(ticks) > 9 {
				t.Fatalf("%d ticks, want 1..9", len(ticks))
			}
			if ticks[0].Value != tc.first {
				t.Errorf("first tick %v, want %v", ticks[0].Value, tc.first)
			}
			if len(ticks) > 1 && ticks[1].Value-ticks[0].Value != tc.step {
				t.Errorf("step %v, want %v", ticks[1].Value-ticks[0].Value, tc.step)
			}
			for _, k := range ticks {
				if k.Value != float64(int64(k.Value)) {
					t.Errorf("tick %v is not an integer", k.Value)
				}
			}
		})
	}
}

func TestSave(t *testing.T) {
	p := New("a title that must not be clipped", "epoch", "loss")
	p.X.Tick.Marker = IntTicks{}
	l, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 3}, {X: 2, Y: 1}, {X: 10, Y: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	l.Color = Color(0)
	p.Add(l)
	path := filepath.Join(t.TempDir(), "f.png")
	if err := Save(p, Width, Height, path); err != nil {
		t.Fatal(err)
	}
	plottest.Check(t, path, 600, 400)
	if err := Save(p, Width, Height, filepath.Join(t.TempDir(), "f.gif")); err == nil {
		t.Error("Save accepted a .gif path")
	}
}
