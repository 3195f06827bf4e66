package heldjobs

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestTrainPointResume stops a training run at random epochs, again and
// again, each time starting it anew on the same checkpoint, and checks
// that it ends with the model (to the bit) and the epochs of a run never
// stopped, early stopping included; a run that had stopped early resumes
// to its result without training.
func TestTrainPointResume(t *testing.T) {
	dir := t.TempDir()
	spec := loadSpec(t, strings.NewReplacer("epochs: 3", "epochs: 12", "patience: 2", "patience: 4").Replace(smallSpec))
	d, err := Parse(spec, filepath.Join(dir, "data"), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, pts, err := spec.Sweep(d.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, err := PointOf(pts[0].Params)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := runConfigOf(pts[0].Params)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := LoadShape(filepath.Join(dir, "data"), d, p.Shape)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := TrainPoint(context.Background(), p, rc, sp, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ckpt := filepath.Join(dir, "train.ckpt")
	rnd := rand.New(rand.NewPCG(3, 3))
	var got *Trained
	var stops []int
	for start := 0; got == nil; start++ {
		if start > 30 {
			t.Fatal("no result in 30 starts")
		}
		ctx, cancel := context.WithCancel(context.Background())
		left := 1 + rnd.IntN(3)
		last := 0
		tr, err := TrainPoint(ctx, p, rc, sp, ckpt, func(e Epoch) {
			last = e.Epoch
			if left--; left == 0 {
				cancel()
			}
		})
		cancel()
		if err == nil {
			got = tr
		} else {
			stops = append(stops, last)
		}
	}
	t.Logf("stopped after epochs %v; %d epochs, best %d, early stop %v", stops, len(got.Epochs), got.BestEpoch, got.Stopped)
	if len(stops) < 2 {
		t.Fatalf("stopped %d times, want at least 2", len(stops))
	}
	if !slices.Equal(got.Model.Params(), plain.Model.Params()) {
		t.Error("resumed model differs from the uninterrupted one")
	}
	if diff := cmp.Diff(plain.Epochs, got.Epochs, cmpopts.IgnoreFields(Epoch{}, "Seconds"), cmpopts.EquateNaNs()); diff != "" || got.BestEpoch != plain.BestEpoch || got.Stopped != plain.Stopped {
		t.Errorf("epochs (-uninterrupted +resumed):\n%s\nbest %d/%d stopped %v/%v", diff, plain.BestEpoch, got.BestEpoch, plain.Stopped, got.Stopped)
	}
	if plain.Stopped {
		again, err := TrainPoint(context.Background(), p, rc, sp, ckpt, func(Epoch) { t.Error("trained again after early stopping") })
		if err != nil || !slices.Equal(again.Model.Params(), plain.Model.Params()) || again.BestEpoch != plain.BestEpoch {
			t.Errorf("resuming a run that had stopped: %v", err)
		}
	}
}
