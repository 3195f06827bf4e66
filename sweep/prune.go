package sweep

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"
)

// Pruner decides, from the metrics runs stream while they train, whether a
// running run should stop because it cannot catch up: ASHA or MedianRule.
// The controller asks on every poll, cancels a run on the backend when the
// pruner gives a reason, and records the run as pruned with that reason.
//
// A decision is a function of the streamed metrics alone, not of when the
// controller polls nor of a controller's restart: both pruners replay every
// value of their series in the order the workers logged them (by the
// worker's clock, then run id, then step), checking each run at every step
// it logged, and a run the replay prunes takes no part in what comes after
// its pruning step. A value is judged once the controller has read the
// metric logs at least 250 ms after the value's time (worker clocks must
// agree with the controller's that closely), when no earlier value can
// still arrive; until then the decision waits.
type Pruner interface {
	// decideAll replays the series and returns every run it prunes, with
	// the reason.
	decideAll(ctx context.Context, l *Ledger) (map[string]string, error)
}

// ASHA is asynchronous successive halving (Li et al., "A System for
// Massively Parallel Hyperparameter Tuning", MLSys 2020) as Optuna's
// SuccessiveHalvingPruner states it: rung k is at step MinStep·Eta^k
// (Optuna's min_resource·reduction_factor^(min_early_stopping_rate+k):
// MinStep takes the place of min_resource·reduction_factor^rate). When a
// run first logs a value at or beyond a rung's step, that value (not its
// best so far) joins the rung's values, those of every run that reached the
// rung before it included; the run goes on to the next rung only if its
// value is among the top ⌊n/Eta⌋ of the n values there (at least the best
// one), else it is pruned. A NaN value at a rung prunes. No rung is at or
// beyond MaxStep when it is positive.
type ASHA struct {
	Series   string  // metric to compare, e.g. "val_loss"
	Maximize bool    // higher is better (accuracy); default lower (loss)
	MinStep  float64 // first rung (> 0)
	Eta      float64 // reduction factor (≥ 2); 0 means 3
	MaxStep  float64 // no rung at or beyond this step (the full budget); 0: none
}

// decideAll replays the series and returns every run it prunes, with the
// reason.
func (a ASHA) decideAll(ctx context.Context, l *Ledger) (map[string]string, error) {
	eta := a.Eta
	if eta == 0 {
		eta = 3
	}
	if a.Series == "" || !(a.MinStep > 0) || !(eta >= 2) || math.IsInf(eta, 0) {
		panic("sweep: ASHA needs Series, MinStep > 0 and a finite Eta ≥ 2")
	}
	v, err := l.prunerView(ctx, a.Series)
	if err != nil {
		return nil, err
	}
	rung := map[string]int{}
	var values [][]float64 // per rung, in the order runs reached it
	for _, p := range v.decidable() {
		if _, out := v.pruned[p.run]; out {
			continue
		}
		for {
			k := rung[p.run]
			at := a.MinStep * math.Pow(eta, float64(k))
			if p.step < at || a.MaxStep > 0 && at >= a.MaxStep {
				break
			}
			if math.IsNaN(p.value) {
				v.pruned[p.run] = fmt.Sprintf("ASHA: %s is NaN at step %g, rung %d (step %g)", a.Series, p.step, k, at)
				break
			}
			if k == len(values) {
				values = append(values, nil)
			}
			values[k] = append(values[k], p.value)
			n := len(values[k])
			keep := max(1, int(float64(n)/eta))
			sorted := slices.Clone(values[k])
			slices.Sort(sorted)
			if a.Maximize {
				slices.Reverse(sorted)
			}
			if better(sorted[keep-1], p.value, a.Maximize) {
				v.pruned[p.run] = fmt.Sprintf("ASHA: %s %.6g at step %g, rung %d (step %g), is not among the top %d of the %d runs that reached the rung (eta %g)",
					a.Series, p.value, p.step, k, at, keep, n, eta)
				break
			}
			rung[p.run] = k + 1
		}
	}
	return v.pruned, nil
}

// MedianRule is the median stopping rule (Golovin et al., "Google Vizier",
// KDD 2017) as Optuna's MedianPruner states it: at a step s of a run, after
// warm-up, at every step, the run is pruned when its best value so far is
// worse than the median of the values at exactly step s of the runs that
// had completed by then; it is not judged while fewer than Startup runs
// have completed or none of them has a value at s. A
// run whose values so far are all NaN is pruned at its first check.
type MedianRule struct {
	Series   string
	Maximize bool
	Warmup   float64 // no check at a step below this (Optuna's n_warmup_steps)
	interval float64 // tests: a check in each interval of steps after Warmup; 0 means 1 (interval_steps)
	Startup  int     // completed runs needed before any check; 0 means 5 (n_startup_trials)
	minRuns  int     // tests: completed runs with a value at the step; 0 means 1 (n_min_trials)
}

// decideAll replays the series and returns every run it prunes, with the
// reason.
func (m MedianRule) decideAll(ctx context.Context, l *Ledger) (map[string]string, error) {
	if m.Series == "" {
		panic("sweep: MedianRule needs Series")
	}
	interval := m.interval
	if interval <= 0 {
		interval = 1
	}
	startup := m.Startup
	if startup <= 0 {
		startup = 5
	}
	minRuns := max(m.minRuns, 1)
	v, err := l.prunerView(ctx, m.Series)
	if err != nil {
		return nil, err
	}
	// A run completes, for the others, when it logs its last value.
	atStep := map[float64][]float64{} // values at each step of the completed runs, by step
	completed := 0
	type hist struct {
		best     float64
		prevStep float64
		vals     map[float64]float64
	}
	h := map[string]*hist{}
	done := func(id string) {
		for s, x := range h[id].vals {
			atStep[s] = append(atStep[s], x)
		}
		completed++
	}
	pts := v.decidable()
	for i, p := range pts {
		r := h[p.run]
		if r == nil {
			r = &hist{best: math.NaN(), prevStep: -1, vals: map[float64]float64{}}
			h[p.run] = r
		}
		prev := r.prevStep
		r.vals[p.step] = p.value
		if !math.IsNaN(p.value) && (math.IsNaN(r.best) || better(p.value, r.best, m.Maximize)) {
			r.best = p.value
		}
		r.prevStep = max(r.prevStep, p.step)
		_, out := v.pruned[p.run]
		if !out {
			if reason := m.check(p, prev, r.best, completed, startup, minRuns, interval, atStep[p.step]); reason != "" {
				v.pruned[p.run] = reason
			}
		}
		if v.lastIndex[p.run] == i && v.state[p.run] == Completed {
			if _, out := v.pruned[p.run]; !out {
				done(p.run)
			}
		}
	}
	return v.pruned, nil
}

// check is one MedianRule check of run p.run at p.step.
func (m MedianRule) check(p metricEvent, prevStep, best float64, completed, startup, minRuns int, interval float64, vals []float64) string {
	if p.step < m.Warmup || completed == 0 || completed < startup {
		return ""
	}
	// Optuna checks a step only when the run logged nothing since the
	// start of the interval it falls in.
	lower := math.Floor((p.step-m.Warmup)/interval)*interval + m.Warmup
	if prevStep >= lower {
		return ""
	}
	if math.IsNaN(best) {
		return fmt.Sprintf("median rule: every %s value up to step %g is NaN", m.Series, p.step)
	}
	if len(vals) < minRuns {
		return ""
	}
	med := nanMedian(vals)
	if math.IsNaN(med) || !better(med, best, m.Maximize) {
		return ""
	}
	return fmt.Sprintf("median rule: best %s %.6g by step %g is worse than the median %.6g of the %d completed runs' values at that step",
		m.Series, best, p.step, med, len(vals))
}

// nanMedian is the median of the non-NaN values (NaN if none), as NumPy's
// nanpercentile(x, 50) computes it.
func nanMedian(x []float64) float64 {
	var v []float64
	for _, f := range x {
		if !math.IsNaN(f) {
			v = append(v, f)
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

func better(a, b float64, maximize bool) bool {
	if maximize {
		return a > b
	}
	return a < b
}

// metricEvent is one value of a pruner's series, as a worker logged it.
type metricEvent struct {
	run               string
	step, value, time float64
}

// pruneView is what a pruner reads from the ledger: every value of its
// series logged by the current attempts of the runs, in logging order, and
// the runs' states.
type pruneView struct {
	events    []metricEvent
	state     map[string]State
	lastIndex map[string]int    // index of each run's last event
	pruned    map[string]string // runs the replay pruned, with the reason
	readAt    time.Time         // when the controller last began reading the metric logs
}

// clockSlack is how far a worker's clock may lag the controller's: a value
// is judged once the metric logs were read at least this long after its
// time, when no earlier value can still arrive.
const clockSlack = 250 * time.Millisecond

// decidable returns the events a pruner may judge: all of them when no run
// is running; otherwise those logged at least clockSlack before the
// controller last started reading the metric logs (before now, for a
// ledger no controller of this process ingests into). Later values may
// still be preceded by values not read yet.
func (v *pruneView) decidable() []metricEvent {
	running := false
	for _, s := range v.state {
		running = running || s == Running
	}
	if !running {
		return v.events
	}
	w := v.readAt.Add(-clockSlack)
	wsec := float64(w.UnixNano()) / 1e9
	i, _ := slices.BinarySearchFunc(v.events, wsec, func(e metricEvent, t float64) int {
		if e.time <= t {
			return -1
		}
		return 1
	})
	return v.events[:i]
}
