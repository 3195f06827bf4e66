package plot

import (
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/crosscluster/crosscluster/internal/plottest"
)

func TestTraining(t *testing.T) {
	var es []EpochPoint
	for e := 1; e <= 30; e++ {
		x := float64(e)
		es = append(es, EpochPoint{Epoch: e, TrainLoss: 0.7 * math.Exp(-x/8), ValidLoss: 0.72*math.Exp(-x/9) + 0.002*x, ValidF1: 1 - 0.6*math.Exp(-x/6)})
	}
	es[3].ValidF1 = math.NaN()
	path := filepath.Join(t.TempDir(), "loss.png")
	if err := Training(path, "held-job LSTM", es, 21, "highest validation F1"); err != nil {
		t.Fatal(err)
	}
	plottest.Check(t, path, 600, 400)
	if err := Training(path, "x", nil, 0, ""); !errors.Is(err, ErrNoData) {
		t.Errorf("no epochs: %v", err)
	}
}

func TestValidationCurves(t *testing.T) {
	var cs []RunCurve
	for r := range 6 {
		var c RunCurve
		c.Name = "run" + string(rune('a'+r))
		for e := 1; e <= 10+r; e++ {
			c.Epoch = append(c.Epoch, float64(e))
			c.Value = append(c.Value, 0.6+0.04*float64(r)*(1-math.Exp(-float64(e)/3)))
		}
		c.Kept = 5
		cs = append(cs, c)
	}
	cs[2].Value[1] = math.NaN()
	path := filepath.Join(t.TempDir(), "curves.png")
	if err := ValidationCurves(path, "validation F1 of every run", "validation F1", cs, 5); err != nil {
		t.Fatal(err)
	}
	plottest.Check(t, path, 800, 400)
	if err := ValidationCurves(path, "x", "y", []RunCurve{{Name: "a", Epoch: []float64{1}, Value: []float64{math.NaN()}}}, 0); !errors.Is(err, ErrNoData) {
		t.Errorf("nothing finite: %v", err)
	}
}
