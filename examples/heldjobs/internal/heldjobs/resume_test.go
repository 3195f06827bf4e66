package heldjobs

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/internal/dagman"
	"github.com/crosscluster/crosscluster/sweep"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// firstPoint parses spec's data into dir/data and returns the first
// point of its search, its run configuration and its splits.
func firstPoint(t *testing.T, spec *Spec, dir string) (Point, RunConfig, *Splits) {
	t.Helper()
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
	return p, rc, sp
}

// TestTrainPointResume stops a training run at random epochs, again and
// again, each time starting it anew on the same checkpoint, and checks
// that it ends with the model (to the bit) and the epochs of a run never
// stopped, early stopping included; a run that had stopped early resumes
// to its result without training.
func TestTrainPointResume(t *testing.T) {
	dir := t.TempDir()
	spec := loadSpec(t, strings.NewReplacer("epochs: 3", "epochs: 12", "patience: 2", "patience: 4").Replace(smallSpec))
	p, rc, sp := firstPoint(t, spec, dir)
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

// TestCondorDAGEviction runs the small search's DAG with training jobs
// that exit with ExitCheckpoint after every epoch (condor.checkpoint 1ns)
// and evicts one of them twice: at once after its second start, and a
// moment into its fourth. HTCondor's self-checkpointing protocol, as
// dagman.Run emulates it, brings the evicted job back from the last
// checkpoint it stored, in a fresh sandbox, within the same attempt; every
// run must end with the model and the metrics of the in-process search,
// to the bit, and a metric log holding each epoch once.
func TestCondorDAGEviction(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a DAG of processes")
	}
	want := localSmall(t)
	victim := "train_" + want.Runs[0].ID
	dir := filepath.Join(t.TempDir(), "dag")
	spec := loadSpec(t, smallSpec+"condor: {checkpoint: 1ns}\n")
	f, err := (&Condor{Spec: spec, Dir: dir, Executable: os.Args[0], AllowDynamic: true}).Write()
	if err != nil {
		t.Fatal(err)
	}
	sum, err := dagman.Run(context.Background(), f.DAG, dagman.Config{Parallel: 2, Progress: testWriter{t}, Evict: func(node string, start int) time.Duration {
		switch {
		case node != victim:
			return 0
		case start == 1:
			return time.Millisecond
		case start == 3:
			return 150 * time.Millisecond
		}
		return 0
	}})
	if err != nil {
		errs, _ := filepath.Glob(filepath.Join(dir, "train", "*", "*.logs", "*.err"))
		for _, e := range errs {
			b, _ := os.ReadFile(e)
			t.Logf("%s:\n%s", e, b)
		}
		t.Fatal(err)
	}
	t.Logf("evictions %d, checkpoint exits %d, retries %d", sum.Evicted, sum.Checkpoints, sum.Retried)
	if sum.Evicted < 1 || sum.Checkpoints < len(want.Runs) || sum.Retried != 0 {
		t.Errorf("summary %+v: want an eviction, a checkpoint exit per run at least, no retry", sum)
	}
	l, err := sweep.OpenLedgerReadOnly(filepath.Join(f.Results, LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, pts, _ := spec.Sweep("")
	got, err := ledgerRecords(context.Background(), l, filepath.Join(f.Results, WorkDir), pts)
	if err != nil {
		t.Fatal(err)
	}
	sameRuns(t, "evicted DAG", got, want)
	for i, r := range got {
		m, _, err := LoadModel(r.ModelDir)
		if err != nil {
			t.Fatal(err)
		}
		w, _, err := LoadModel(want.Runs[i].ModelDir)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(m.Params(), w.Params()) {
			t.Errorf("run %s: the model differs from the uninterrupted run's", r.Slug)
		}
		ss, err := l.Series(context.Background(), r.ID)
		if err != nil || len(ss["valid_loss"].Step) != int(r.metric("epochs")) {
			t.Errorf("run %s: series of %d epochs for %v trained (%v)", r.Slug, len(ss["valid_loss"].Step), r.metric("epochs"), err)
		}
	}
	log, _ := os.ReadFile(filepath.Join(f.Results, "logs", victim+".log"))
	if !strings.Contains(string(log), "Job was evicted.") {
		t.Errorf("%s.log has no eviction:\n%s", victim, log)
	}
}

// testWriter logs each write.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestTrainPointResumeAfterLastEpoch stops a run just after its last
// epoch was checkpointed (a job evicted, or ending with its checkpoint
// exit, before it wrote its result): started again it has nothing left to
// train and must return the uninterrupted run's model and epochs. (It
// failed with "no epoch finished", so a DAG node retried it for good.)
func TestTrainPointResumeAfterLastEpoch(t *testing.T) {
	dir := t.TempDir()
	spec := loadSpec(t, smallSpec)
	p, rc, sp := firstPoint(t, spec, dir)
	plain, err := TrainPoint(context.Background(), p, rc, sp, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Stopped {
		t.Fatal("the point stops early; the test wants a run of every epoch")
	}
	ckpt := filepath.Join(dir, "train.ckpt")
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := TrainPoint(ctx, p, rc, sp, ckpt, func(e Epoch) {
		if e.Epoch == rc.Epochs {
			cancel()
		}
	}); err == nil {
		t.Fatal("the run was not stopped")
	}
	cancel()
	got, err := TrainPoint(context.Background(), p, rc, sp, ckpt, func(Epoch) { t.Error("trained again after the last epoch") })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Model.Params(), plain.Model.Params()) || got.BestEpoch != plain.BestEpoch || len(got.Epochs) != len(plain.Epochs) {
		t.Errorf("resumed after the last epoch: best %d/%d, %d/%d epochs, same model %v", got.BestEpoch, plain.BestEpoch,
			len(got.Epochs), len(plain.Epochs), slices.Equal(got.Model.Params(), plain.Model.Params()))
	}
}
