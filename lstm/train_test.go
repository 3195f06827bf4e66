package lstm

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// holdTask is the small synthetic task of the issue: one-hot event rows,
// label 1 (release) when event code holdCode appears in the last `recent`
// frames of the sequence.
func holdTask(rnd *rand.Rand, n, T, I, holdCode, recent int) Data {
	d := Data{X: make([][][]float64, n), Y: make([]int, n)}
	for i := range d.X {
		want := rnd.IntN(2)
		for {
			seq := make([][]float64, T)
			label := 0
			for t := range seq {
				row := make([]float64, I)
				k := rnd.IntN(I)
				row[k] = 1
				if k == holdCode && t >= T-recent {
					label = 1
				}
				seq[t] = row
			}
			if label == want {
				d.X[i], d.Y[i] = seq, label
				break
			}
		}
	}
	return d
}

// learnF1 is the acceptance bar for the synthetic task.
const learnF1 = 0.95

func TestTrainLearnsHoldTask(t *testing.T) {
	for _, engine := range []Engine{Native, Native32} {
		t.Run(map[Engine]string{Native: "float64", Native32: "float32"}[engine], func(t *testing.T) {
			testLearnsHoldTask(t, engine)
		})
	}
}

func testLearnsHoldTask(t *testing.T, engine Engine) {
	rnd := rand.New(rand.NewPCG(7, 7))
	const T, I = 8, 6
	train := holdTask(rnd, 1200, T, I, 2, 2)
	valid := holdTask(rnd, 300, T, I, 2, 2)
	test := holdTask(rnd, 300, T, I, 2, 2)
	m := New(Architecture{Inputs: I, Hidden: 16, Layers: 1}, rnd)
	var log bytes.Buffer
	epochs := 0
	hist, err := Train(context.Background(), m, Config{
		LearningRate: 0.02, BatchSize: 32, Epochs: 40, Patience: 8, Seed: 3, Engine: engine,
		Progress: &log, OnEpoch: func(EpochStats) { epochs++ },
	}, train, valid)
	if err != nil {
		t.Fatal(err)
	}
	met, _, err := Evaluate(m, test, 0)
	if err != nil {
		t.Fatal(err)
	}
	if met.F1 < learnF1 {
		t.Errorf("test F1 %.4f < %.2f\n%s", met.F1, learnF1, log.String())
	}
	if epochs != len(hist.Epochs) || strings.Count(log.String(), "\n") != epochs {
		t.Errorf("callback saw %d epochs, history %d, progress lines %d", epochs, len(hist.Epochs), strings.Count(log.String(), "\n"))
	}
	// The model holds the best epoch's weights: its validation F1 is the best one.
	vm, _, err := Evaluate(m, valid, 0)
	if err != nil {
		t.Fatal(err)
	}
	best := hist.Epochs[hist.BestEpoch-1].Valid.F1
	for _, e := range hist.Epochs {
		if e.Valid.F1 > best {
			t.Errorf("epoch %d has F1 %v above the best epoch's %v", e.Epoch, e.Valid.F1, best)
		}
	}
	if math.Abs(vm.F1-best) > 0 {
		t.Errorf("restored model has validation F1 %v, best epoch %d had %v", vm.F1, hist.BestEpoch, best)
	}
}

func TestTrainDeterministic(t *testing.T) {
	run := func(engine Engine) []float64 {
		rnd := rand.New(rand.NewPCG(1, 1))
		d := holdTask(rnd, 40, 4, 3, 1, 1)
		m := New(Architecture{Inputs: 3, Hidden: 4, Layers: 2}, rnd)
		cfg := Config{BatchSize: 8, Epochs: 3, Patience: -1, Seed: 9, Engine: engine, ClipNorm: 0.5}
		if _, err := Train(context.Background(), m, cfg, d, Data{}); err != nil {
			t.Fatal(err)
		}
		return m.params
	}
	a, b := run(Native), run(Native)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("param %d differs between identical runs: %v, %v", i, a[i], b[i])
		}
	}
}

func TestTrainCancel(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	d := holdTask(rnd, 64, 4, 3, 1, 1)
	m := New(Architecture{Inputs: 3, Hidden: 4, Layers: 1}, rnd)
	ctx, cancel := context.WithCancel(context.Background())
	hist, err := Train(ctx, m, Config{BatchSize: 8, Epochs: 50, Patience: -1, OnEpoch: func(e EpochStats) {
		if e.Epoch == 2 {
			cancel()
		}
	}}, d, d)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if len(hist.Epochs) != 2 {
		t.Fatalf("history has %d epochs, want the 2 done before cancellation", len(hist.Epochs))
	}
	// The model holds the best finished epoch's weights, not those of the
	// epoch cancellation interrupted.
	if _, loss, _ := Evaluate(m, d, 0); hist.BestEpoch == 0 || loss != hist.Epochs[hist.BestEpoch-1].ValidLoss {
		t.Errorf("after cancellation the model has validation loss %v, best epoch %d", loss, hist.BestEpoch)
	}
}

func TestTrainBadInput(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	good := holdTask(rnd, 10, 4, 3, 1, 1)
	m := New(Architecture{Inputs: 3, Hidden: 2, Layers: 1}, rnd)
	clone := func(d Data) Data {
		c := Data{Y: append([]int(nil), d.Y...)}
		for _, s := range d.X {
			var seq [][]float64
			for _, r := range s {
				seq = append(seq, append([]float64(nil), r...))
			}
			c.X = append(c.X, seq)
		}
		return c
	}
	for _, tc := range []struct {
		name   string
		mutate func(*Data)
		want   error
		where  string
	}{
		{"width", func(d *Data) { d.X[3][1] = []float64{1, 0} }, ErrWidth, "sample 3 step 1"},
		{"length", func(d *Data) { d.X[4] = d.X[4][:3] }, ErrLength, "sample 4"},
		{"nan", func(d *Data) { d.X[5][2][0] = math.NaN() }, ErrNaN, "sample 5 step 2 feature 0"},
		{"label", func(d *Data) { d.Y[6] = 2 }, ErrLabel, "sample 6"},
		{"single-class", func(d *Data) {
			for i := range d.Y {
				d.Y[i] = 1
			}
		}, ErrSingleClass, "10 released"},
		{"empty", func(d *Data) { d.X, d.Y = nil, nil }, ErrEmpty, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := clone(good)
			tc.mutate(&d)
			_, err := Train(context.Background(), m, Config{Epochs: 1}, d, Data{})
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.where) {
				t.Errorf("err = %v, want %v naming %q", err, tc.want, tc.where)
			}
		})
	}
	t.Run("nan-loss", func(t *testing.T) {
		bad := m.Clone()
		bad.fcB[0] = math.NaN() // a diverged model: every probability is NaN
		_, err := Train(context.Background(), bad, Config{Epochs: 1, BatchSize: 4}, good, Data{})
		if !errors.Is(err, ErrNaN) || !strings.Contains(err.Error(), "epoch 1 batch 1") {
			t.Errorf("err = %v, want ErrNaN naming epoch 1 batch 1", err)
		}
	})
}

func TestTrainMonitorLoss(t *testing.T) {
	rnd := rand.New(rand.NewPCG(16, 16))
	train, valid := holdTask(rnd, 200, 5, 4, 1, 1), holdTask(rnd, 100, 5, 4, 1, 1)
	m := New(Architecture{Inputs: 4, Hidden: 4, Layers: 1}, rnd)
	hist, err := Train(context.Background(), m, Config{Monitor: MonitorLoss, Patience: -1, Epochs: 12, BatchSize: 16, LearningRate: 0.05}, train, valid)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist.Epochs) != 12 || hist.Stopped {
		t.Errorf("%d epochs, stopped %v: a negative patience must run every epoch", len(hist.Epochs), hist.Stopped)
	}
	best := hist.Epochs[hist.BestEpoch-1].ValidLoss
	for _, e := range hist.Epochs {
		if e.ValidLoss < best {
			t.Errorf("epoch %d has validation loss %v below the best epoch's %v", e.Epoch, e.ValidLoss, best)
		}
	}
	if _, loss, _ := Evaluate(m, valid, 0); loss != best {
		t.Errorf("restored model has validation loss %v, best epoch %v", loss, best)
	}
}

// TestTrainEarlyStopRestoresBest trains on labels that are noise, so the
// validation loss bottoms out early and then rises: early stopping must end
// the run Patience epochs after the best epoch and leave the model holding
// that epoch's weights, not the last epoch's.
func TestTrainEarlyStopRestoresBest(t *testing.T) {
	for _, mon := range []Monitor{MonitorLoss, MonitorF1} {
		t.Run(map[Monitor]string{MonitorLoss: "loss", MonitorF1: "f1"}[mon], func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(21, 21))
			train, valid := holdTask(rnd, 120, 5, 4, 1, 2), holdTask(rnd, 90, 5, 4, 1, 2)
			for i := range train.Y {
				train.Y[i] = rnd.IntN(2)
			}
			for i := range valid.Y {
				valid.Y[i] = rnd.IntN(2)
			}
			m := New(Architecture{Inputs: 4, Hidden: 16, Layers: 1}, rnd)
			const patience = 3
			hist, err := Train(context.Background(), m, Config{
				Monitor: mon, Patience: patience, Epochs: 60, BatchSize: 16, LearningRate: 0.05, Seed: 2,
				OnEpoch: func(e EpochStats) {
					// Validation metrics cover the whole set, not its last batch.
					if n := e.Valid.TP + e.Valid.FP + e.Valid.TN + e.Valid.FN; n != valid.Len() {
						t.Errorf("epoch %d: validation confusion matrix counts %d samples, the set has %d", e.Epoch, n, valid.Len())
					}
				},
			}, train, valid)
			if err != nil {
				t.Fatal(err)
			}
			last := hist.Epochs[len(hist.Epochs)-1]
			if !hist.Stopped || len(hist.Epochs) != hist.BestEpoch+patience {
				t.Fatalf("%d epochs, best %d, stopped %v: want a stop %d epochs after the best", len(hist.Epochs), hist.BestEpoch, hist.Stopped, patience)
			}
			best := hist.Epochs[hist.BestEpoch-1]
			met, loss, err := Evaluate(m, valid, 0)
			if err != nil {
				t.Fatal(err)
			}
			if loss != best.ValidLoss || met != best.Valid {
				t.Errorf("restored model: loss %v %+v; best epoch %d: loss %v %+v", loss, met, best.Epoch, best.ValidLoss, best.Valid)
			}
			if loss == last.ValidLoss {
				t.Errorf("restored model has the last epoch's validation loss %v", loss)
			}
		})
	}
}

// TestAdamStatePersists checks that Train keeps one Adam state for the
// whole run: two epochs of one full batch each must equal two consecutive
// steps of one optimiser, and differ from two steps of fresh optimisers
// (the bug of the published project, which re-created Adam every epoch).
func TestAdamStatePersists(t *testing.T) {
	rnd := rand.New(rand.NewPCG(22, 22))
	d := holdTask(rnd, 24, 4, 3, 1, 1)
	m0 := New(Architecture{Inputs: 3, Hidden: 4, Layers: 2}, rnd)
	cfg := Config{BatchSize: d.Len(), Epochs: 2, Patience: -1, LearningRate: 0.01, Monitor: MonitorLoss}

	trained := m0.Clone()
	hist, err := Train(context.Background(), trained, cfg, d, Data{})
	if err != nil {
		t.Fatal(err)
	}
	// Train keeps the better epoch; the comparison below needs the second.
	if hist.BestEpoch != 2 {
		t.Fatalf("best epoch %d, want 2 (the training loss should fall on this task)", hist.BestEpoch)
	}
	pk, err := pack(d, 3, false, true)
	if err != nil {
		t.Fatal(err)
	}
	one := m0.Clone()
	tr := newTrainer(one, cfg, pk)
	fresh := m0.Clone()
	for range 2 {
		if _, _, err := tr.step(seqIndices(pk.n)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := newTrainer(fresh, cfg, pk).step(seqIndices(pk.n)); err != nil {
			t.Fatal(err)
		}
	}
	var worstOne, worstFresh float64
	for i := range trained.params {
		worstOne = max(worstOne, math.Abs(trained.params[i]-one.params[i]))
		worstFresh = max(worstFresh, math.Abs(trained.params[i]-fresh.params[i]))
	}
	// Train and the hand-driven trainer run the same arithmetic; Adam's
	// division by √v can still turn last-bit differences into 1e-9.
	const engineTrainTol = 1e-9
	if worstOne > engineTrainTol {
		t.Errorf("two epochs of Train differ from two steps of one Adam by %g", worstOne)
	}
	// A fresh Adam's first step moves every weight by about lr; the
	// persistent one's second step differs from that by a sizeable
	// fraction of lr.
	if worstFresh < 1e-2*cfg.LearningRate {
		t.Errorf("the test cannot tell a persistent Adam from a re-created one: they differ by %g", worstFresh)
	}
}

func TestTrainUnknownOptimizer(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 3))
	d := holdTask(rnd, 8, 3, 3, 1, 1)
	defer func() {
		if r := recover(); r != "lstm: unknown Optimizer" {
			t.Errorf("recovered %v, want the constant unknown-optimizer panic", r)
		}
	}()
	Train(context.Background(), New(Architecture{Inputs: 3, Hidden: 2, Layers: 1}, rnd), Config{Optimizer: 7, Epochs: 1}, d, Data{})
}

// TestTrainBadRates: a learning rate or clip norm that is negative, NaN or
// infinite is a caller's mistake and panics before any work (a NaN or +Inf
// learning rate used to train to NaN weights without a word).
func TestTrainBadRates(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 3))
	d := holdTask(rnd, 8, 3, 3, 1, 1)
	for name, cfg := range map[string]Config{
		"lr -1":    {LearningRate: -1},
		"lr NaN":   {LearningRate: math.NaN()},
		"lr +Inf":  {LearningRate: math.Inf(1)},
		"clip NaN": {ClipNorm: math.NaN()},
		"clip Inf": {ClipNorm: math.Inf(1)},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != "lstm: LearningRate or ClipNorm negative, NaN or infinite" {
					t.Errorf("recovered %v, want the constant rate panic", r)
				}
			}()
			cfg.Epochs = 1
			Train(context.Background(), New(Architecture{Inputs: 3, Hidden: 2, Layers: 1}, rnd), cfg, d, Data{})
		})
	}
}
