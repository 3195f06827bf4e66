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
// deciding from what was recorded.
//
// Both pruners here compare a run at a step only with the runs that
// reached that step before it did (by the clock of the workers that logged
// the values), as the asynchronous algorithms they implement do: a
// decision does not depend on when the controller happens to poll, and a
// run that passed a step is not failed at it later because slower runs
// caught up.
type Pruner interface {
	Decide(ctx context.Context, l *Ledger, runID string) (reason string, err error)
}

// earlier returns the standing of the run and of the runs that reached the
// step before it (ties broken by run id), or ok false when the run has not
// reached it or has no value up to it.
func earlier(stats []stepStat, id string) (me stepStat, others []stepStat, ok bool) {
	i := slices.IndexFunc(stats, func(s stepStat) bool { return s.id == id })
	if i < 0 || !stats[i].ok {
		return stepStat{}, nil, false
	}
	me = stats[i]
	for _, s := range stats {
		if s.id != id && s.ok && (s.reached < me.reached || s.reached == me.reached && s.id < id) {
			others = append(others, s)
		}
	}
	return me, others, true
}

func better(a, b float64, maximize bool) bool {
	if maximize {
		return a > b
	}
	return a < b
}

// ASHA is asynchronous successive halving (Li et al., "A System for
// Massively Parallel Hyperparameter Tuning", MLSys 2020): rungs at steps
// MinStep·Eta^k below MaxStep. At each rung the run has reached, its best
// value of Series up to the rung is ranked among the values of the runs
// that reached the rung before it; it goes on only if it is in the top
// 1/Eta of them (at least the best one). A rung that fewer than Eta runs
// (this one included) have reached decides nothing.
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
	top, ok, err := l.lastStepOf(ctx, runID, a.Series)
	if err != nil || !ok {
		return "", err
	}
	for r := a.MinStep; r <= top && (a.MaxStep <= 0 || r < a.MaxStep); r *= eta {
		stats, err := l.atStep(ctx, a.Series, r, a.Maximize)
		if err != nil {
			return "", err
		}
		me, others, ok := earlier(stats, runID)
		if !ok {
			continue
		}
		n := len(others) + 1
		if float64(n) < eta {
			continue
		}
		keep := max(1, int(float64(n)/eta))
		ahead := 0
		for _, o := range others {
			if better(o.best, me.best, a.Maximize) {
				ahead++
			}
		}
		if ahead >= keep {
			return fmt.Sprintf("ASHA: best %s %.6g by step %g ranks %d of the %d runs that reached it first; only the top %d go on (eta %g)",
				a.Series, me.best, r, ahead+1, n, keep, eta), nil
		}
	}
	return "", nil
}

// MedianRule is the median stopping rule (Golovin et al., "Google Vizier",
// KDD 2017), as Optuna's MedianPruner applies it: after Warmup steps, a run
// stops when its best value of Series so far is worse than the median of
// the best values, up to the same step, of the runs that reached that step
// before it, once there are at least MinRuns of them.
type MedianRule struct {
	Series   string
	Maximize bool
	Warmup   float64 // no decision before this step
	MinRuns  int     // earlier runs needed at a step; 0 means 5
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
	at, ok, err := l.lastStepOf(ctx, runID, m.Series)
	if err != nil || !ok || at < m.Warmup {
		return "", err
	}
	stats, err := l.atStep(ctx, m.Series, at, m.Maximize)
	if err != nil {
		return "", err
	}
	me, others, ok := earlier(stats, runID)
	if !ok || len(others) < minRuns {
		return "", nil
	}
	vals := make([]float64, len(others))
	for i, o := range others {
		vals[i] = o.best
	}
	slices.Sort(vals)
	med := vals[len(vals)/2]
	if len(vals)%2 == 0 {
		med = (vals[len(vals)/2-1] + vals[len(vals)/2]) / 2
	}
	if !better(med, me.best, m.Maximize) || math.IsNaN(med) {
		return "", nil
	}
	return fmt.Sprintf("median rule: best %s %.6g by step %g is worse than the median %.6g of the %d runs that reached that step first",
		m.Series, me.best, at, med, len(vals)), nil
}
