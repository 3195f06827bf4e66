package lstm

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// trainState is what a training run carries from one epoch to the next
// besides the weights and the optimiser: the shuffling generator and the
// order it permutes, the best weights and the early-stopping counters,
// and the history.
type trainState struct {
	rng       *rand.PCG
	order     []int
	best      []float64
	bestScore float64
	sinceBest int
	hist      *History
}

// checkpointFormat identifies a checkpoint file; the version changes with
// its layout.
const (
	checkpointFormat  = "crosscluster-lstm-checkpoint"
	checkpointVersion = 1
)

// checkpoint is a checkpoint file's content, gob-encoded (exact for every
// float64, -Inf and NaN included).
type checkpoint struct {
	Format         string
	Version        int
	Params, Best   []float64
	Mom, Vel       []float64
	Steps          int
	RNG            []byte
	Order          []int
	BestScore      float64
	SinceBest      int
	TrainN, ValidN int
	Hist           History
}

// save writes the state after an epoch to path: to a temporary file in the
// same directory, synced, then renamed over path, so that path always
// holds a whole checkpoint.
func (st *trainState) save(path string, params []float64, t *trainer, validN int) error {
	rng, err := st.rng.MarshalBinary()
	if err != nil {
		return err
	}
	c := checkpoint{Format: checkpointFormat, Version: checkpointVersion, Params: params, Best: st.best,
		Mom: t.mom, Vel: t.vel, Steps: t.steps, RNG: rng, Order: st.order, BestScore: st.bestScore,
		SinceBest: st.sinceBest, TrainN: len(st.order), ValidN: validN, Hist: *st.hist}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&c); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// resume loads the checkpoint at path, if there is one, into st, params and
// t. No file is a fresh start.
func (st *trainState) resume(path string, params []float64, t *trainer, validN int) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	var c checkpoint
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&c); err != nil {
		return fmt.Errorf("checkpoint %s: %w: %v", path, ErrFormat, err)
	}
	switch {
	case c.Format != checkpointFormat || c.Version != checkpointVersion:
		return fmt.Errorf("checkpoint %s: %w: format %q version %d, want %q version %d", path, ErrFormat, c.Format, c.Version, checkpointFormat, checkpointVersion)
	case len(c.Params) != len(params) || len(c.Best) != len(params) || len(c.Mom) != len(t.mom) || len(c.Vel) != len(t.vel):
		return fmt.Errorf("checkpoint %s: %w: %d parameters, the model has %d (another model or optimiser)", path, ErrFormat, len(c.Params), len(params))
	case c.TrainN != len(st.order) || c.ValidN != validN:
		return fmt.Errorf("checkpoint %s: %w: written for %d training and %d validation samples, not %d and %d",
			path, ErrFormat, c.TrainN, c.ValidN, len(st.order), validN)
	case !isPermutation(c.Order, len(st.order)) || len(c.Hist.Epochs) == 0 || c.Hist.BestEpoch > len(c.Hist.Epochs):
		return fmt.Errorf("checkpoint %s: %w: inconsistent state", path, ErrFormat)
	}
	if err := st.rng.UnmarshalBinary(c.RNG); err != nil {
		return fmt.Errorf("checkpoint %s: %w: %v", path, ErrFormat, err)
	}
	copy(params, c.Params)
	copy(st.best, c.Best)
	copy(t.mom, c.Mom)
	copy(t.vel, c.Vel)
	copy(st.order, c.Order)
	t.steps = c.Steps
	st.bestScore, st.sinceBest = c.BestScore, c.SinceBest
	h := c.Hist
	st.hist = &h
	return nil
}

// isPermutation reports whether p is a permutation of 0, 1, ..., n-1.
func isPermutation(p []int, n int) bool {
	if len(p) != n {
		return false
	}
	seen := make([]bool, n)
	for _, v := range p {
		if v < 0 || v >= n || seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
}
