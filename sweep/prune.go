package sweep

import (
	"context"
	"fmt"
	"math"
	"slices"
)

// Pruner decides, from the metrics runs stream while they train, whether a
// running run should stop because it cannot catch up. The controller asks
// after a run logs new values, cancels the run on the backend when Decide
// gives a reason, and records the run as pruned with that reason. A
// decision reads the ledger only, so a restarted controller goes on
// deciding from what was recorded; it depends on which runs have reached a
// step when it is made, as in any asynchronous scheme.
type Pruner interface {
	Decide(ctx context.Context, l *Ledger, runID string) (reason string, err error)
}

// best returns the best value of s at steps ≤ at (lowest, or highest with
// maximize), ignoring NaN, and whether there is one.
func best(s Series, at float64, maximize bool) (float64, bool) {
	b, ok := math.NaN(), false
	for i, st := range s.Step {
		if st > at {
			break
		}
		v := s.Value[i]
		if math.IsNaN(v) {
			continue
		}
		if !ok || (maximize && v > b) || (!maximize && v < b) {
			b, ok = v, true
		}
	}
	return b, ok
}

func lastStep(s Series) float64 {
	if len(s.Step) == 0 {
		return math.Inf(-1)
	}
	return slices.Max(s.Step)
}

// ASHA is asynchronous successive halving (Li et al., "A System for
// Massively Parallel Hyperparameter Tuning", MLSys 2020): rungs at steps
// MinStep·Eta^k below MaxStep; when a run has reached rung k, its best
// value of Series up to that step is ranked among the best values up to
// the same step of every run that has reached it (running, completed or
// pruned), and the run goes on only if it is in the top 1/Eta (at least
// the best one). A rung with fewer than Eta runs decides nothing yet.
// Each decision is made at the highest rung the run has reached.
type ASHA struct {
	Series   string  // metric to compare, e.g. "val_loss"
	Maximize bool    // higher is better (accuracy); default lower (loss)
	MinStep  float64 // first rung (> 0)
	Eta      float64 // reduction factor (≥ 2); 0 means 3
	MaxStep  float64 // no rung at or beyond this step (the full budget); 0: none
}

// Decide implements Pruner.
func (a ASHA) Decide(ctx context.Context, l *Ledger, runID string) (string, error) {
	eta := a.Eta
	if eta == 0 {
		eta = 3
	}
	if a.Series == "" || !(a.MinStep > 0) || !(eta >= 2) {
		panic("sweep: ASHA needs Series, MinStep > 0 and Eta ≥ 2")
	}
	all, err := l.stepValues(ctx, a.Series)
	if err != nil {
		return "", err
	}
	me, ok := all[runID]
	if !ok {
		return "", nil
	}
	top := lastStep(me)
	rung := math.Inf(-1)
	for r := a.MinStep; r <= top && (a.MaxStep <= 0 || r < a.MaxStep); r *= eta {
		rung = r
	}
	if math.IsInf(rung, -1) {
		return "", nil
	}
	mine, ok := best(me, rung, a.Maximize)
	if !ok {
		return "", nil
	}
	var vals []float64
	for _, s := range all {
		if lastStep(s) < rung {
			continue
		}
		if v, ok := best(s, rung, a.Maximize); ok {
			vals = append(vals, v)
		}
	}
	n := len(vals)
	if float64(n) < eta {
		return "", nil
	}
	keep := max(1, int(float64(n)/eta))
	better := 0
	for _, v := range vals {
		if (a.Maximize && v > mine) || (!a.Maximize && v < mine) {
			better++
		}
	}
	if better < keep {
		return "", nil
	}
	return fmt.Sprintf("ASHA: best %s %.6g by step %g ranks %d of %d runs at that rung; only the top %d go on (eta %g)",
		a.Series, mine, rung, better+1, n, keep, eta), nil
}

// MedianRule is the median stopping rule (Golovin et al., "Google Vizier",
// KDD 2017), as Optuna's MedianPruner applies it: after Warmup steps, a run
// stops when its best value of Series so far is worse than the median of
// the best values up to the same step of the other runs that have reached
// it, once there are at least MinRuns of them.
type MedianRule struct {
	Series   string
	Maximize bool
	Warmup   float64 // no decision before this step
	MinRuns  int     // other runs needed at a step; 0 means 5
}

// Decide implements Pruner.
func (m MedianRule) Decide(ctx context.Context, l *Ledger, runID string) (string, error) {
	if m.Series == "" {
		panic("sweep: MedianRule needs Series")
	}
	minRuns := m.MinRuns
	if minRuns <= 0 {
		minRuns = 5
	}
	all, err := l.stepValues(ctx, m.Series)
	if err != nil {
		return "", err
	}
	me, ok := all[runID]
	if !ok {
		return "", nil
	}
	at := lastStep(me)
	if at < m.Warmup {
		return "", nil
	}
	mine, ok := best(me, at, m.Maximize)
	if !ok {
		return "", nil
	}
	var vals []float64
	for id, s := range all {
		if id == runID || lastStep(s) < at {
			continue
		}
		if v, ok := best(s, at, m.Maximize); ok {
			vals = append(vals, v)
		}
	}
	if len(vals) < minRuns {
		return "", nil
	}
	slices.Sort(vals)
	med := vals[len(vals)/2]
	if len(vals)%2 == 0 {
		med = (vals[len(vals)/2-1] + vals[len(vals)/2]) / 2
	}
	if (m.Maximize && mine >= med) || (!m.Maximize && mine <= med) {
		return "", nil
	}
	return fmt.Sprintf("median rule: best %s %.6g by step %g is worse than the median %.6g of %d other runs at that step",
		m.Series, mine, at, med, len(vals)), nil
}
