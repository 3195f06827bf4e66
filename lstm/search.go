package lstm

import (
	"context"
	"fmt"
	"math/rand/v2"
)

// Shape is one way of building the tensors (for example a choice of j jobs,
// m frames and frame length), with its training and validation sets.
type Shape struct {
	Name         string
	Train, Valid Data
	// NewestFirst says the rows run newest to oldest (eventlog's SeedCompat
	// tensors); the trial's model then reads the first row as the latest.
	NewestFirst bool
}

// Space is a hyperparameter search space. A nil or empty dimension takes the
// single default value (hidden 64, 2 layers, learning rate 1e-3, batch 256;
// Shapes must not be empty).
type Space struct {
	Hidden       []int
	Layers       []int
	LearningRate []float64
	BatchSize    []int
	Shapes       []Shape

	// Random, when positive, samples that many distinct points of the grid
	// with a generator seeded by Seed instead of visiting all of them.
	Random int
	Seed   uint64
}

// Trial is one point of a search space.
type Trial struct {
	Hidden, Layers int
	LearningRate   float64
	BatchSize      int
	Shape          string
}

// String formats the trial as key=value pairs.
func (t Trial) String() string {
	return fmt.Sprintf("shape=%s hidden=%d layers=%d lr=%g batch=%d", t.Shape, t.Hidden, t.Layers, t.LearningRate, t.BatchSize)
}

// TrialResult is the outcome of training one trial.
type TrialResult struct {
	Trial     Trial
	Valid     Metrics // at the best epoch
	ValidLoss float64
	History   *History
	Model     *Model
	Err       error // a trial that failed on its data; the search goes on
}

// SearchResult holds every trial in the order run and the index of the best.
type SearchResult struct {
	Trials []TrialResult
	Best   int // index into Trials of the highest validation F1 (lowest loss on ties); -1 if every trial failed
}

// Search trains one model per point of space (or per sampled point) with
// cfg, every trial seeding its weights and batches with cfg.Seed (common
// random numbers: trials differ only in their hyperparameters, and the best
// one is reproduced by a plain Train with the same seed), and picks the
// highest validation F1. It runs in-process, one trial after another;
// examples/heldjobs runs the same search as a sweep (each trial a sweep run
// with a ledger), and this function is the in-process fallback. Progress (cfg.Progress) gets a line per trial on top
// of the per-epoch lines.
//
// Search panics if space has no shape or two shapes share a name. Cancelling ctx stops the search and
// returns the trials finished so far with ctx.Err().
func Search(ctx context.Context, space Space, cfg Config) (*SearchResult, error) {
	if len(space.Shapes) == 0 {
		panic("lstm: search space without a shape")
	}
	or := func(v []int, d int) []int {
		if len(v) == 0 {
			return []int{d}
		}
		return v
	}
	lrs := space.LearningRate
	if len(lrs) == 0 {
		lrs = []float64{defaultLR}
	}
	var grid []Trial
	for _, sh := range space.Shapes {
		for _, h := range or(space.Hidden, 64) {
			for _, l := range or(space.Layers, 2) {
				for _, lr := range lrs {
					for _, bs := range or(space.BatchSize, defaultBatch) {
						grid = append(grid, Trial{Hidden: h, Layers: l, LearningRate: lr, BatchSize: bs, Shape: sh.Name})
					}
				}
			}
		}
	}
	if space.Random > 0 && space.Random < len(grid) {
		rnd := rand.New(rand.NewPCG(space.Seed, 0x5eed))
		perm := rnd.Perm(len(grid))[:space.Random]
		pick := make([]Trial, len(perm))
		for i, p := range perm {
			pick[i] = grid[p]
		}
		grid = pick
	}
	shapes := map[string]Shape{}
	for _, sh := range space.Shapes {
		if _, dup := shapes[sh.Name]; dup {
			panic("lstm: two search shapes with the same name")
		}
		shapes[sh.Name] = sh
	}
	res := &SearchResult{Best: -1}
	for i, tr := range grid {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		sh := shapes[tr.Shape]
		c := cfg
		c.LearningRate, c.BatchSize = tr.LearningRate, tr.BatchSize
		out := TrialResult{Trial: tr}
		if sh.Train.Len() == 0 || len(sh.Train.X[0]) == 0 {
			out.Err = fmt.Errorf("lstm: shape %q: %w", tr.Shape, ErrEmpty)
		} else if len(sh.Train.X[0][0]) == 0 {
			// New would panic on a zero input width; this is bad data.
			out.Err = fmt.Errorf("lstm: shape %q: sample 0 step 0 has no features: %w", tr.Shape, ErrWidth)
		} else {
			rnd := rand.New(rand.NewPCG(c.Seed, 1))
			m := New(Architecture{Inputs: len(sh.Train.X[0][0]), Hidden: tr.Hidden, Layers: tr.Layers, NewestFirst: sh.NewestFirst}, rnd)
			hist, err := Train(ctx, m, c, sh.Train, sh.Valid)
			out.History, out.Model, out.Err = hist, m, err
			if err == nil && hist.BestEpoch > 0 {
				b := hist.Epochs[hist.BestEpoch-1]
				out.Valid, out.ValidLoss = b.Valid, b.ValidLoss
			}
			if ctx.Err() != nil {
				res.Trials = append(res.Trials, out)
				return res, ctx.Err()
			}
		}
		if cfg.Progress != nil {
			if out.Err != nil {
				fmt.Fprintf(cfg.Progress, "trial %d/%d %v: %v\n", i+1, len(grid), tr, out.Err)
			} else {
				fmt.Fprintf(cfg.Progress, "trial %d/%d %v: valid F1 %.4f loss %.4f\n", i+1, len(grid), tr, out.Valid.F1, out.ValidLoss)
			}
		}
		res.Trials = append(res.Trials, out)
		if out.Err == nil && (res.Best < 0 || better(out, res.Trials[res.Best])) {
			res.Best = len(res.Trials) - 1
		}
	}
	return res, nil
}

func better(a, b TrialResult) bool {
	if a.Valid.F1 != b.Valid.F1 {
		return a.Valid.F1 > b.Valid.F1
	}
	return a.ValidLoss < b.ValidLoss
}
