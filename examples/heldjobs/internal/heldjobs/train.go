package heldjobs

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/crosscluster/crosscluster/lstm"
	"github.com/crosscluster/crosscluster/stats"
	"github.com/crosscluster/crosscluster/sweep"
)

// RunConfig is what a run's training depends on besides its point: the
// base parameters of the search's sweep spec.
type RunConfig struct {
	E                int
	Forward          bool
	Train, Valid     float64
	Seed             uint64
	Epochs, Patience int
	Metric           Metric
	Threshold        float64
	Engine           string
	Cell             lstm.Cell // the "model" parameter, LSTM when absent
}

// cellOf reads a spec's model name.
func cellOf(name string) (lstm.Cell, error) {
	for _, c := range []lstm.Cell{lstm.LSTM, lstm.GRU} {
		if name == c.String() {
			return c, nil
		}
	}
	return 0, fmt.Errorf("model %q: want lstm or gru", name)
}

// runConfigOf reads the base parameters back from a run's parameters.
func runConfigOf(p map[string]sweep.Value) (RunConfig, error) {
	for _, k := range []string{"e", "forward", "split_train", "split_valid", "seed", "epochs", "patience", "metric", "threshold", "engine"} {
		if _, ok := p[k]; !ok {
			return RunConfig{}, fmt.Errorf("heldjobs: %w: run parameters have no %q (not a held-job search run)", ErrSpec, k)
		}
	}
	rc := RunConfig{E: int(p["e"].Int()), Forward: p["forward"].Bool(), Train: p["split_train"].Float(), Valid: p["split_valid"].Float(),
		Seed: uint64(p["seed"].Int()), Epochs: int(p["epochs"].Int()), Patience: int(p["patience"].Int()),
		Metric: Metric(p["metric"].Lit), Threshold: p["threshold"].Float(), Engine: p["engine"].Lit}
	if v, ok := p["model"]; ok {
		c, err := cellOf(v.Lit)
		if err != nil {
			return RunConfig{}, fmt.Errorf("heldjobs: %w: %w", ErrSpec, err)
		}
		rc.Cell = c
	}
	if !rc.Metric.valid() || rc.Epochs < 1 || rc.Patience < 1 || rc.E < 1 || (rc.Engine != "native" && rc.Engine != "native32") {
		return RunConfig{}, fmt.Errorf("heldjobs: %w: run parameters %+v", ErrSpec, rc)
	}
	return rc, nil
}

// Epoch is one epoch of a run as tracked: training and validation metrics
// and the time it took (training pass plus validation scoring).
type Epoch struct {
	Epoch                                           int
	TrainLoss, TrainF1                              float64
	ValidLoss, ValidF1, ValidPrecision, ValidRecall float64
	ValidAccuracy, ValidAUC                         float64
	Seconds                                         float64
	Best                                            bool // the best epoch so far by the run's metric
}

// value is the epoch's validation value of metric m.
func (e Epoch) value(m Metric) float64 {
	switch m {
	case F1:
		return e.ValidF1
	case Precision:
		return e.ValidPrecision
	case Recall:
		return e.ValidRecall
	case Accuracy:
		return e.ValidAccuracy
	case ROCAUC:
		return e.ValidAUC
	}
	return e.ValidLoss
}

// better reports whether a beats b on metric m; a NaN never beats
// anything and anything beats a NaN.
func better(m Metric, a, b float64) bool {
	switch {
	case math.IsNaN(a):
		return false
	case math.IsNaN(b):
		return true
	case m.Lower():
		return a < b
	}
	return a > b
}

// epochSeries names each tracked per-epoch series (sweep metric log and
// result series) and reads it from an Epoch.
var epochSeries = []struct {
	name string
	get  func(Epoch) float64
}{
	{"train_loss", func(e Epoch) float64 { return e.TrainLoss }},
	{"train_f1", func(e Epoch) float64 { return e.TrainF1 }},
	{"valid_loss", func(e Epoch) float64 { return e.ValidLoss }},
	{"valid_f1", func(e Epoch) float64 { return e.ValidF1 }},
	{"valid_precision", func(e Epoch) float64 { return e.ValidPrecision }},
	{"valid_recall", func(e Epoch) float64 { return e.ValidRecall }},
	{"valid_accuracy", func(e Epoch) float64 { return e.ValidAccuracy }},
	{"valid_roc_auc", func(e Epoch) float64 { return e.ValidAUC }},
	{"epoch_seconds", func(e Epoch) float64 { return e.Seconds }},
}

// Trained is a trained run: the model of its best epoch and its history.
type Trained struct {
	Model     *lstm.Model
	Epochs    []Epoch
	BestEpoch int
	Stopped   bool // early stopping ended it before Epochs
	Seconds   float64
}

// TrainPoint trains the model of point p on the splits, watching rc.Metric
// on the validation set after every epoch: the model kept is the one of the
// first epoch with the best value, and training stops after rc.Patience
// epochs without a strictly better one. The weights and the mini-batches
// are seeded with rc.Seed, as in a run without a search, so the same point
// trains the same model on every engine. onEpoch, if not nil, is called
// after every epoch. Cancelling ctx returns ctx.Err().
//
// With ckpt set, the training survives being killed: lstm's checkpoint is
// kept in ckpt and this function's own state (the epochs so far, the kept
// model, whether early stopping ended the run) in ckpt+".run", written
// before lstm's after every epoch; a TrainPoint that finds them continues
// after the last checkpointed epoch and ends with the same model, bit for
// bit, and the same epochs (their Seconds aside) as one never killed.
func TrainPoint(ctx context.Context, p Point, rc RunConfig, sp *Splits, ckpt string, onEpoch func(Epoch)) (*Trained, error) {
	arch := lstm.Architecture{Inputs: p.Shape.J * rc.E, Hidden: p.Hidden, Layers: p.Layers, NewestFirst: !rc.Forward, Cell: rc.Cell}
	m := lstm.New(arch, rand.New(rand.NewPCG(rc.Seed, 2)))
	cfg := lstm.Config{LearningRate: p.LearningRate, BatchSize: p.Batch, Epochs: rc.Epochs, Patience: -1,
		Threshold: rc.Threshold, Seed: rc.Seed, Checkpoint: ckpt}
	if rc.Engine == "native32" {
		cfg.Engine = lstm.Native32
	}
	positive := make([]bool, len(sp.Valid.Y))
	for i, y := range sp.Valid.Y {
		positive[i] = y == 1
	}
	tr := &Trained{}
	var (
		best      *lstm.Model
		bestValue = math.NaN()
		since     int
		cbErr     error
		saved     runState
		resumed   bool
	)
	if ckpt != "" {
		ok, err := saved.load(ckpt + ".run")
		if err != nil {
			return nil, err
		}
		resumed = ok
		if ok && saved.Stopped {
			// Early stopping had ended the run: nothing left to train.
			tr.Epochs, tr.Stopped, tr.Seconds = saved.Epochs, true, saved.Seconds
			if best, err = saved.best(); err != nil {
				return nil, err
			}
			tr.BestEpoch = saved.bestEpoch()
			tr.Model = best
			return tr, nil
		}
	}
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	cfg.OnEpoch = func(st lstm.EpochStats) {
		t0 := time.Now()
		if resumed {
			// The first epoch after a restart: keep the saved epochs
			// before it (a crash may have saved this one's too, which is
			// now done again to the same bits).
			resumed = false
			saved.Epochs = saved.Epochs[:min(len(saved.Epochs), st.Epoch-1)]
			tr.Epochs = slices.Clone(saved.Epochs)
			if tr.BestEpoch = saved.bestEpoch(); tr.BestEpoch > 0 {
				var err error
				if best, err = saved.best(); err != nil {
					cbErr = err
					cancel()
					return
				}
				bestValue = tr.Epochs[tr.BestEpoch-1].value(rc.Metric)
				since = len(tr.Epochs) - tr.BestEpoch
			}
		}
		auc := math.NaN()
		probs, err := m.Probabilities(sp.Valid.X)
		if err != nil {
			cbErr = err
			cancel()
			return
		}
		if a, err := stats.AUC(probs, positive, nil); err == nil {
			auc = a
		}
		e := Epoch{Epoch: st.Epoch, TrainLoss: st.TrainLoss, TrainF1: st.Train.F1, ValidLoss: st.ValidLoss,
			ValidF1: st.Valid.F1, ValidPrecision: st.Valid.Precision, ValidRecall: st.Valid.Recall,
			ValidAccuracy: st.Valid.Accuracy, ValidAUC: auc, Seconds: (st.Elapsed + time.Since(t0)).Seconds()}
		if v := e.value(rc.Metric); best == nil || better(rc.Metric, v, bestValue) {
			best, bestValue, since = m.Clone(), v, 0
			e.Best, tr.BestEpoch = true, e.Epoch
		} else {
			since++
		}
		tr.Epochs = append(tr.Epochs, e)
		if onEpoch != nil {
			onEpoch(e)
		}
		if since >= rc.Patience && e.Epoch < rc.Epochs {
			tr.Stopped = true
			cancel()
		}
		if ckpt != "" {
			if err := saved.save(ckpt+".run", tr, best, e.Best); err != nil {
				cbErr = err
				cancel()
			}
		}
	}
	t0 := time.Now()
	_, err := lstm.Train(stop, m, cfg, sp.Train, sp.Valid)
	tr.Seconds = saved.Seconds + time.Since(t0).Seconds()
	if resumed && err == nil && ctx.Err() == nil && len(saved.Epochs) > 0 {
		// The checkpoint held every epoch (the run was stopped after its
		// last epoch was stored): nothing was left to train.
		tr.Epochs, tr.BestEpoch = saved.Epochs, saved.bestEpoch()
		best, cbErr = saved.best()
	}
	switch {
	case cbErr != nil:
		return nil, fmt.Errorf("heldjobs: scoring the validation set: %w", cbErr)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil && !(tr.Stopped && errors.Is(err, context.Canceled)):
		return nil, fmt.Errorf("heldjobs: training %s: %w", p, err)
	case best == nil:
		return nil, fmt.Errorf("heldjobs: training %s: no epoch finished", p)
	}
	tr.Model = best
	return tr, nil
}

// runState is TrainPoint's state beside lstm's checkpoint.
type runState struct {
	Epochs  []Epoch
	Stopped bool
	Seconds float64
	Best    []byte // the kept model, lstm.Save
}

// bestEpoch is the last epoch marked best, 0 if none.
func (s *runState) bestEpoch() int {
	b := 0
	for _, e := range s.Epochs {
		if e.Best {
			b = e.Epoch
		}
	}
	return b
}

func (s *runState) best() (*lstm.Model, error) {
	if len(s.Best) == 0 {
		return nil, fmt.Errorf("heldjobs: %w: training state without a kept model", ErrModelDir)
	}
	m, err := lstm.Load(bytes.NewReader(s.Best))
	if err != nil {
		return nil, fmt.Errorf("heldjobs: training state: %w", err)
	}
	return m, nil
}

// load reads the state at path; a missing file is a fresh start (false).
func (s *runState) load(path string) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err == nil {
		err = gob.NewDecoder(bytes.NewReader(b)).Decode(s)
	}
	if err != nil {
		return false, fmt.Errorf("heldjobs: training state %s: %w", path, err)
	}
	return true, nil
}

// save writes the state after an epoch: the epochs of tr, and best when
// it changed (newBest) or was never written.
func (s *runState) save(path string, tr *Trained, best *lstm.Model, newBest bool) error {
	s.Epochs, s.Stopped = tr.Epochs, tr.Stopped
	if newBest || len(s.Best) == 0 {
		var buf bytes.Buffer
		if err := best.Save(&buf); err != nil {
			return err
		}
		s.Best = buf.Bytes()
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(s); err != nil {
		return err
	}
	return writeAtomic(path, buf.Bytes())
}

// bootstrapResamples and bootstrapLevel are the test-F1 interval's
// settings.
const (
	bootstrapResamples = 2000
	bootstrapLevel     = 0.95
)

// BootstrapF1 returns the percentile bootstrap interval of the F1 score of
// probabilities p against labels y at threshold: b resamples of the jobs
// with replacement drawn by stats.Bootstrap (resample i from a PCG
// generator seeded (seed, i)), and the (1-level)/2 and (1+level)/2
// quantiles of their F1 (linear interpolation, NumPy's default). It panics
// if the lengths differ; empty input gives NaN.
func BootstrapF1(p []float64, y []int, threshold float64, b int, level float64, seed uint64) (lo, hi float64) {
	if len(p) != len(y) {
		panic("heldjobs: BootstrapF1 lengths differ")
	}
	if len(p) == 0 || b < 1 {
		return math.NaN(), math.NaN()
	}
	f1s := make([]float64, b)
	pb, yb := make([]float64, len(p)), make([]int, len(p))
	// One worker: the resamples are the same on any number, and a
	// training node asks its scheduler for few cores.
	_ = stats.Bootstrap(context.Background(), []int{len(p)}, b, 1, seed, func(_, i int, idx [][]int) {
		for k, j := range idx[0] {
			pb[k], yb[k] = p[j], y[j]
		}
		f1s[i] = lstm.Score(pb, yb, threshold).F1
	})
	return stats.Quantile(f1s, (1-level)/2), stats.Quantile(f1s, (1+level)/2)
}

// CheckpointFile is the training checkpoint in a run's directory
// (lstm.Config.Checkpoint; TrainPoint keeps its own state beside it, in
// CheckpointFile+".run"). On the DAG the run directory comes back with the
// node's outputs, so a retried training node continues from its last epoch.
const CheckpointFile = "train.ckpt"

// ModelDirName is the directory, in a run's attempt directory, that holds
// its model (SaveModel).
const ModelDirName = "model"

// TrainRun is the worker of a search run: it reads the run's point and
// configuration from t.Params, loads its shape from the dataset directory
// dataDir, trains (TrainPoint), streams every epoch's metrics to
// t.Dir/metrics.jsonl as it goes, saves the model of the best epoch to
// modelDir (t.Dir/model when empty) and returns the run's result: the
// validation metrics at the best epoch, the test metrics of that model
// with a bootstrap interval of its F1, timing, and every per-epoch series.
// The caller writes the result (sweep.WriteResult) into t.Dir.
func TrainRun(ctx context.Context, t sweep.Task, dataDir, modelDir string, progress io.Writer) (*sweep.Result, error) {
	p, err := PointOf(t.Params)
	if err != nil {
		return nil, err
	}
	if t.Slug == "" {
		t.Slug = slugOf(t.Params) // for the model's heldjobs-model.json and the progress lines
	}
	rc, err := runConfigOf(t.Params)
	if err != nil {
		return nil, err
	}
	d, err := ReadDataset(dataDir)
	if err != nil {
		return nil, err
	}
	if d.E != rc.E || d.Forward != rc.Forward || d.Seed != rc.Seed || d.Train != rc.Train || d.Valid != rc.Valid {
		return nil, fmt.Errorf("heldjobs: %w: %s was built with e=%d forward=%v seed=%d split [%v, %v]; run %s wants e=%d forward=%v seed=%d split [%v, %v]",
			ErrDataset, dataDir, d.E, d.Forward, d.Seed, d.Train, d.Valid, t.RunID, rc.E, rc.Forward, rc.Seed, rc.Train, rc.Valid)
	}
	sp, err := LoadShape(dataDir, d, p.Shape)
	if err != nil {
		return nil, err
	}
	ml, err := sweep.OpenMetricLog(t.Dir)
	if err != nil {
		return nil, fmt.Errorf("heldjobs: %w", err)
	}
	defer ml.Close()
	var logErr error
	tr, err := TrainPoint(ctx, p, rc, sp, filepath.Join(t.Dir, CheckpointFile), func(e Epoch) {
		for _, s := range epochSeries {
			if err := ml.Log(s.name, float64(e.Epoch), s.get(e)); err != nil && logErr == nil {
				logErr = err
			}
		}
		_ = sweep.TouchHeartbeat()
		if progress != nil {
			mark := ""
			if e.Best {
				mark = " *"
			}
			fmt.Fprintf(progress, "run %s epoch %d: train loss %.4f, valid loss %.4f F1 %.4f AUC %.4f (%.1fs)%s\n",
				t.Slug, e.Epoch, e.TrainLoss, e.ValidLoss, e.ValidF1, e.ValidAUC, e.Seconds, mark)
		}
	})
	if err != nil {
		return nil, err
	}
	if logErr != nil {
		return nil, fmt.Errorf("heldjobs: metric log: %w", logErr)
	}
	res := &sweep.Result{RunID: t.RunID, Attempt: t.Attempt, Metrics: map[string]float64{}, Series: map[string]sweep.Series{}}
	be := tr.Epochs[tr.BestEpoch-1]
	for _, s := range epochSeries {
		var ser sweep.Series
		for _, e := range tr.Epochs {
			ser.Step = append(ser.Step, float64(e.Epoch))
			ser.Value = append(ser.Value, s.get(e))
		}
		res.Series[s.name] = ser
		if s.name != "epoch_seconds" && s.name[:6] == "valid_" {
			res.Metrics[s.name] = s.get(be)
		}
	}
	res.Metrics["train_loss"], res.Metrics["train_f1"] = be.TrainLoss, be.TrainF1
	res.Metrics["best_epoch"] = float64(tr.BestEpoch)
	res.Metrics["epochs"] = float64(len(tr.Epochs))
	res.Metrics["stopped"] = b2f(tr.Stopped)
	res.Metrics["seconds"] = tr.Seconds
	res.Metrics["train_n"], res.Metrics["valid_n"], res.Metrics["test_n"] = float64(sp.Train.Len()), float64(sp.Valid.Len()), float64(sp.Test.Len())
	res.Metrics["n_params"] = float64(len(tr.Model.Params()))

	// The test set, scored once with the kept model; never used to choose.
	probs, err := tr.Model.Probabilities(sp.Test.X)
	if err != nil {
		return nil, fmt.Errorf("heldjobs: test set: %w", err)
	}
	tm := lstm.Score(probs, sp.Test.Y, rc.Threshold)
	res.Metrics["test_f1"], res.Metrics["test_precision"], res.Metrics["test_recall"], res.Metrics["test_accuracy"] = tm.F1, tm.Precision, tm.Recall, tm.Accuracy
	res.Metrics["test_loss"] = bce(probs, sp.Test.Y)
	pos := make([]bool, len(sp.Test.Y))
	for i, y := range sp.Test.Y {
		pos[i] = y == 1
	}
	res.Metrics["test_roc_auc"] = math.NaN()
	if a, err := stats.AUC(probs, pos, nil); err == nil {
		res.Metrics["test_roc_auc"] = a
	}
	res.Metrics["test_f1_lo"], res.Metrics["test_f1_hi"] = BootstrapF1(probs, sp.Test.Y, rc.Threshold, bootstrapResamples, bootstrapLevel, rc.Seed)

	if modelDir == "" {
		modelDir = filepath.Join(t.Dir, ModelDirName)
	}
	info := ModelInfo{Shape: p.Shape.String(), J: p.Shape.J, M: p.Shape.M, FrameSeconds: p.Shape.Frame.Seconds(), E: rc.E,
		Forward: rc.Forward, Threshold: rc.Threshold, Seed: rc.Seed, RunID: t.RunID, Slug: t.Slug, Dataset: d.ID,
		Metric: rc.Metric, Value: res.Metrics[rc.Metric.Key()], BestEpoch: tr.BestEpoch}
	n, err := SaveModel(modelDir, tr.Model, info)
	if err != nil {
		return nil, err
	}
	res.Metrics["model_bytes"] = float64(n)
	// The run is complete: its checkpoint has served (a retry of a
	// finished run trains it again, to the same bits).
	for _, f := range []string{CheckpointFile, CheckpointFile + ".run"} {
		os.Remove(filepath.Join(t.Dir, f))
	}
	return res, nil
}

// bce is the mean binary cross-entropy of probabilities against labels,
// each log clamped at -100 as torch.nn.BCELoss does.
func bce(p []float64, y []int) float64 {
	if len(p) == 0 {
		return math.NaN()
	}
	var s float64
	for i, pi := range p {
		if y[i] == 1 {
			s -= max(math.Log(pi), -100)
		} else {
			s -= max(math.Log(1-pi), -100)
		}
	}
	return s / float64(len(p))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// seriesNames are the per-epoch series every run tracks, in order.
func seriesNames() []string {
	out := make([]string, len(epochSeries))
	for i, s := range epochSeries {
		out[i] = s.name
	}
	return slices.Clip(out)
}
