package plot

import (
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/crosscluster/crosscluster/internal/plottest"
)

func TestDivergence(t *testing.T) {
	var cs []Curve
	for i, name := range []string{"a vs b", "a vs c", "b vs c"} {
		c := Curve{Name: name}
		for k := range 1500 {
			v := 1e-16 * math.Exp(float64(k)/60) * (1 + 0.3*float64(i))
			if k < 100 && k%7 == 0 {
				v = 0 // identical steps early on
			}
			c.Y = append(c.Y, v)
		}
		cs = append(cs, c)
	}
	cs[0].Y[5] = math.NaN()
	path := filepath.Join(t.TempDir(), "div.png")
	if err := Divergence(path, "z_b: per-step L2 divergence between boxes", "recorded step (10 ms)", "‖z_a(t) − z_b(t)‖", cs, 1e-4); err != nil {
		t.Fatal(err)
	}
	plottest.Check(t, path, 800, 500)
	if err := Divergence(path, "t", "x", "y", []Curve{{Name: "same", Y: []float64{0, 0}}}, 1e-4); !errors.Is(err, ErrNoData) {
		t.Errorf("identical runs: %v, want ErrNoData", err)
	}
}
