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
