package lstm

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Optimizer selects the update rule.
type Optimizer int

const (
	Adam Optimizer = iota // Kingma & Ba (2015) with PyTorch's defaults: β1 0.9, β2 0.999, ε 1e-8
	SGD                   // plain stochastic gradient descent
)

// Monitor selects the validation quantity early stopping watches.
type Monitor int

const (
	MonitorF1   Monitor = iota // highest validation F1 wins
	MonitorLoss                // lowest validation loss wins
)

// Engine selects how gradients are computed.
type Engine int

const (
	Native Engine = iota // hand-derived BPTT in pure Go, float64 (fast, PyTorch-exact)
	// Native32 is the native engine in float32 arithmetic, with float64
	// master weights and optimiser state: about twice as fast, with the
	// float32 rounding PyTorch's default dtype has.
	Native32
)

// Defaults used when the corresponding Config field is zero.
const (
	defaultLR       = 1e-3
	defaultBatch    = 256
	defaultEpochs   = 100
	defaultPatience = 10
	defaultThresh   = 0.5
)

// Config holds training options. The zero value trains with Adam at a
// learning rate of 1e-3 in batches of 256 for at most 100 epochs, stopping
// after 10 epochs without a better validation F1, with seed 0.
type Config struct {
	Optimizer    Optimizer
	LearningRate float64 // 0 means 1e-3
	ClipNorm     float64 // clip the gradient's global L2 norm to this (as torch.nn.utils.clip_grad_norm_); 0 means no clipping
	BatchSize    int     // 0 means 256
	Epochs       int     // 0 means 100
	Patience     int     // epochs without improvement before stopping; 0 means 10, negative disables early stopping
	Monitor      Monitor // what early stopping watches
	Threshold    float64 // decision threshold of the metrics; 0 means 0.5
	Seed         uint64  // seeds the shuffling of mini-batches
	Engine       Engine
	// Reference, when set, computes the gradients instead of Engine (for
	// example lstm/gorgonia's expression graph, to check the native engine).
	Reference Reference
	// Workers is the number of goroutines a training step and the
	// validation pass run on; 0 means GOMAXPROCS. The results are the same,
	// bit for bit, whatever the number.
	Workers int

	// Checkpoint, if not empty, is the file Train keeps its state in at the
	// end of every epoch and resumes from (see Train).
	Checkpoint string

	// Progress, if not nil, receives one line per epoch.
	Progress io.Writer
	// OnEpoch, if not nil, is called after every epoch, before the
	// epoch's checkpoint is written: state a caller keeps beside the
	// checkpoint is then never behind it, and a resumed run calls OnEpoch
	// again for an epoch whose checkpoint a crash cut off.
	OnEpoch func(EpochStats)
}

func (c Config) withDefaults() Config {
	if c.LearningRate == 0 {
		c.LearningRate = defaultLR
	}
	if c.BatchSize == 0 {
		c.BatchSize = defaultBatch
	}
	if c.Epochs == 0 {
		c.Epochs = defaultEpochs
	}
	if c.Patience == 0 {
		c.Patience = defaultPatience
	}
	if c.Threshold == 0 {
		c.Threshold = defaultThresh
	}
	return c
}

// EpochStats describes one epoch of training.
type EpochStats struct {
	Epoch     int // from 1
	TrainLoss float64
	ValidLoss float64
	Train     Metrics // from the predictions made while training on each batch
	Valid     Metrics // on the whole validation set after the epoch
	Best      bool    // this epoch is the best so far
	Elapsed   time.Duration
}

// History is the record of a training run.
type History struct {
	Epochs    []EpochStats
	BestEpoch int  // the epoch whose weights the model holds, from 1; 0 if none finished
	Stopped   bool // early stopping ended the run
}

// Train fits n to train, monitoring valid after every epoch, and leaves n
// holding the weights of the best epoch. valid may be empty, in which case
// the training set is monitored instead. n is a *Model (an LSTM or a GRU,
// trained by this package's engines) or any other Network.
//
// Bad data is an error naming the sample: widths that do not match the
// model, sequences of different lengths, labels other than 0 and 1, an
// empty or single-class training set, NaN or infinite inputs. A NaN loss
// stops training with an error naming the epoch and batch. When ctx is
// cancelled Train returns the history so far, n holding the best weights so
// far, and ctx.Err().
//
// With Config.Checkpoint set, Train writes its whole state (weights, the
// best weights, the optimiser's moments, the shuffling generator, the
// early-stopping counters and the history) to that file at the end of every
// epoch, atomically, and a Train that finds the file continues after its
// last epoch instead of starting again: an interrupted and resumed run ends
// with the same bits as one never interrupted. A checkpoint written for
// another number of parameters or samples is an error wrapping ErrFormat.
//
// Train panics if a Config field is out of range (a learning rate or clip
// norm that is negative, NaN or infinite, a negative batch size, an unknown
// Optimizer).
func Train(ctx context.Context, n Network, cfg Config, train, valid Data) (_ *History, err error) {
	defer wrapErr(&err)
	cfg = cfg.withDefaults()
	if !(cfg.LearningRate > 0) || math.IsInf(cfg.LearningRate, 0) || !(cfg.ClipNorm >= 0) || math.IsInf(cfg.ClipNorm, 0) {
		panic("lstm: LearningRate or ClipNorm negative, NaN or infinite")
	}
	if cfg.BatchSize < 0 || cfg.Epochs < 0 || cfg.Workers < 0 {
		panic("lstm: negative Config value")
	}
	if cfg.Optimizer != Adam && cfg.Optimizer != SGD {
		panic("lstm: unknown Optimizer")
	}
	m, native := n.(*Model)
	inputs, newestFirst := 0, false
	if native {
		inputs, newestFirst = m.inputs, m.newestFirst
	} else if train.Len() > 0 && len(train.X[0]) > 0 {
		inputs = len(train.X[0][0]) // another Network checks its own width
	}
	tr, err := pack(train, inputs, newestFirst, true)
	if err != nil {
		return nil, fmt.Errorf("training set: %w", err)
	}
	va, vd := tr, train
	if valid.Len() > 0 {
		if va, err = pack(valid, inputs, newestFirst, false); err != nil {
			return nil, fmt.Errorf("validation set: %w", err)
		}
		if va.T != tr.T {
			return nil, fmt.Errorf("validation sequences have %d steps, training sequences %d: %w", va.T, tr.T, ErrLength)
		}
		vd = valid
	}
	params := n.Params()
	t := newTrainer(n, cfg, tr)
	st := &trainState{
		rng:       rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15),
		hist:      &History{},
		best:      slices.Clone(params),
		bestScore: math.Inf(-1),
		order:     make([]int, tr.n),
	}
	for i := range st.order {
		st.order[i] = i
	}
	if cfg.Checkpoint != "" {
		if err := st.resume(cfg.Checkpoint, params, t, va.n); err != nil {
			return nil, err
		}
	}
	rnd := rand.New(st.rng)
	hist := st.hist
	order := st.order
	trainP := make([]float64, tr.n)
	trainY := make([]int, tr.n)
	for epoch := len(hist.Epochs) + 1; epoch <= cfg.Epochs && !hist.Stopped; epoch++ {
		start := time.Now()
		rnd.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		var lossSum float64
		for bi, lo := 0, 0; lo < tr.n; bi, lo = bi+1, lo+cfg.BatchSize {
			if err := ctx.Err(); err != nil {
				copy(params, st.best)
				return hist, err
			}
			batch := order[lo:min(lo+cfg.BatchSize, tr.n)]
			loss, p, err := t.step(batch)
			if err != nil {
				return hist, err
			}
			if math.IsNaN(loss) || math.IsInf(loss, 0) {
				copy(params, st.best)
				return hist, fmt.Errorf("epoch %d batch %d: loss is %v: %w", epoch, bi+1, loss, ErrNaN)
			}
			lossSum += float64(loss * float64(len(batch))) // not fused: the same bits everywhere
			for b, s := range batch {
				trainP[lo+b] = p[b]
				trainY[lo+b] = int(tr.y[s])
			}
		}
		var vp []float64
		var vloss float64
		if native {
			vp, vloss = predictPacked(m, va, cfg.BatchSize, cfg.Workers)
		} else if vp, err = n.Probabilities(vd.X); err != nil {
			return hist, fmt.Errorf("epoch %d: validation: %w", epoch, err)
		} else {
			vloss = bce(vp, va.y)
		}
		vy := make([]int, va.n)
		for i, v := range va.y {
			vy[i] = int(v)
		}
		es := EpochStats{
			Epoch:     epoch,
			TrainLoss: lossSum / float64(tr.n),
			ValidLoss: vloss,
			Train:     Score(trainP, trainY, cfg.Threshold),
			Valid:     Score(vp, vy, cfg.Threshold),
			Elapsed:   time.Since(start),
		}
		score := es.Valid.F1
		if cfg.Monitor == MonitorLoss {
			score = -vloss
		}
		if score > st.bestScore {
			st.bestScore, st.sinceBest = score, 0
			es.Best = true
			hist.BestEpoch = epoch
			copy(st.best, params)
		} else {
			st.sinceBest++
		}
		hist.Epochs = append(hist.Epochs, es)
		hist.Stopped = cfg.Patience > 0 && st.sinceBest >= cfg.Patience
		if cfg.OnEpoch != nil {
			cfg.OnEpoch(es)
		}
		if cfg.Checkpoint != "" {
			if err := st.save(cfg.Checkpoint, params, t, va.n); err != nil {
				return hist, err
			}
		}
		if cfg.Progress != nil {
			mark := ""
			if es.Best {
				mark = " *"
			}
			fmt.Fprintf(cfg.Progress, "epoch %3d  train loss %.4f F1 %.4f  valid loss %.4f F1 %.4f  %s%s\n",
				epoch, es.TrainLoss, es.Train.F1, es.ValidLoss, es.Valid.F1, es.Elapsed.Round(time.Millisecond), mark)
		}
	}
	copy(params, st.best)
	return hist, nil
}

// trainer holds the optimiser state, which lives for the whole run.
type trainer struct {
	n     Network
	m     *Model // n when it is one, else nil
	w     []float64
	cfg   Config
	data  *packed
	eng   gradEngine
	grad  []float64
	mom   []float64 // Adam first moment
	vel   []float64 // Adam second moment
	steps int
}

func newTrainer(n Network, cfg Config, d *packed) *trainer {
	cfg = cfg.withDefaults()
	w := n.Params()
	m, _ := n.(*Model)
	t := &trainer{n: n, m: m, w: w, cfg: cfg, data: d, grad: make([]float64, len(w))}
	if cfg.Optimizer == Adam {
		t.mom = make([]float64, len(w))
		t.vel = make([]float64, len(w))
	}
	return t
}

// gradient computes the loss and gradient of batch with the configured
// engine, leaving the gradient in t.grad.
func (t *trainer) gradient(batch []int) (float64, []float64, error) {
	clear(t.grad)
	if t.m == nil {
		loss, p, err := t.n.Gradient(t.data.dense(batch), t.grad)
		if err != nil {
			return 0, nil, fmt.Errorf("network: %w", err)
		}
		return loss, p, nil
	}
	if ref := t.cfg.Reference; ref != nil {
		loss, p, err := ref.LossGrad(t.m, t.data.dense(batch), t.grad)
		if err != nil {
			return 0, nil, fmt.Errorf("reference engine: %w", err)
		}
		return loss, p, nil
	}
	if t.m.cell == GRU {
		loss, p := t.m.gruLossGrad(t.data.dense(batch), t.grad)
		return loss, p, nil
	}
	if t.eng == nil {
		t.eng = newGradEngine(t.m, t.cfg.Engine, min(t.cfg.BatchSize, t.data.n), t.data.T, t.cfg.Workers)
	}
	loss, p := t.eng.lossGrad(t.data, batch, t.grad)
	return loss, p, nil
}

// Adam's constants, PyTorch's defaults.
const (
	adamBeta1 = 0.9
	adamBeta2 = 0.999
	adamEps   = 1e-8
	// clipEps is the term torch.nn.utils.clip_grad_norm_ adds to the norm.
	clipEps = 1e-6
)

// step computes the gradient of batch and updates the weights.
func (t *trainer) step(batch []int) (float64, []float64, error) {
	loss, p, err := t.gradient(batch)
	if err != nil {
		return 0, nil, err
	}
	g := t.grad
	if c := t.cfg.ClipNorm; c > 0 {
		var ss float64
		for _, v := range g {
			ss += float64(v * v)
		}
		if coef := c / (math.Sqrt(ss) + clipEps); coef < 1 {
			for i := range g {
				g[i] *= coef
			}
		}
	}
	lr := t.cfg.LearningRate
	w := t.w
	switch t.cfg.Optimizer {
	case SGD:
		forBlocks(len(g), t.cfg.Workers, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				w[i] -= float64(lr * g[i]) // rounded first, as on every GOAMD64 level
			}
		})
	default:
		// The update as torch.optim.Adam writes it (amsgrad off, no weight
		// decay), element by element in blocks on every core.
		t.steps++
		bc1 := 1 - math.Pow(adamBeta1, float64(t.steps))
		bc2 := 1 - math.Pow(adamBeta2, float64(t.steps))
		stepSize := lr / bc1
		sq2 := math.Sqrt(bc2)
		forBlocks(len(g), t.cfg.Workers, func(lo, hi int) {
			adamUpdate(w[lo:hi], g[lo:hi], t.mom[lo:hi], t.vel[lo:hi], stepSize, sq2)
		})
	}
	return loss, p, nil
}

// adamUpdate applies one Adam step to w from the gradient g, updating the
// moments mom and vel, all of the same length: four at a time in AVX
// assembly where the CPU has it (adamAVX: the same operations in the same
// order, so the same bits), the rest and everything elsewhere in Go.
func adamUpdate(w, g, mom, vel []float64, stepSize, sq2 float64) {
	g, mom, vel = g[:len(w)], mom[:len(w)], vel[:len(w)]
	n := 0
	if useFMA {
		n = len(w) &^ 3
		k := [7]float64{adamBeta1, 1 - adamBeta1, adamBeta2, 1 - adamBeta2, stepSize, sq2, adamEps}
		adamAVX(w[:n], g, mom, vel, &k)
	}
	for i := n; i < len(w); i++ {
		v := g[i]
		// Products rounded before the sums (float64(…)): no GOAMD64
		// level fuses them, as adamAVX does not.
		mom[i] = float64(adamBeta1*mom[i]) + float64((1-adamBeta1)*v)
		vel[i] = float64(adamBeta2*vel[i]) + float64((1-adamBeta2)*v*v)
		w[i] -= stepSize * mom[i] / (math.Sqrt(vel[i])/sq2 + adamEps)
	}
}
