package overlap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"

	"github.com/crosscluster/crosscluster/stats"
)

// Metric scores a transfer model's predictions against the true values of
// the same jobs, e.g. AUCMetric. It returns an error (not a
// panic) for data it cannot score, such as one class for an AUC.
type Metric struct {
	Name string
	// HigherIsBetter says which direction improves the metric (reports
	// use it to phrase the in-band minus all difference).
	HigherIsBetter bool
	Fn             func(truth, pred []float64) (float64, error)
}

// AUCMetric is the ROC AUC of scores (pred) against truth 0 or 1, the
// metric of a held-job classifier; any other is a Metric value.
var AUCMetric = Metric{"ROC AUC", true, aucMetric}

func aucMetric(truth, pred []float64) (float64, error) {
	pos := make([]bool, len(truth))
	for i, t := range truth {
		pos[i] = t == 1
	}
	return stats.AUC(pred, pos, nil)
}

// Estimate is a metric on one set of jobs with its bootstrap percentile
// interval. Lo and Hi are NaN when too few resamples could be scored.
type Estimate struct {
	Value, Lo, Hi float64
	N             int // jobs
}

// MarshalJSON writes {"value", "lo", "hi", "n"} with null for NaN.
func (e Estimate) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Value *float64 `json:"value"`
		Lo    *float64 `json:"lo"`
		Hi    *float64 `json:"hi"`
		N     int      `json:"n"`
	}{fp(e.Value), fp(e.Lo), fp(e.Hi), e.N})
}

// TransferResult is a transfer model's metric on the target cluster's jobs:
// all of them, those in the overlap band and those outside it, and the
// in-band minus all difference, each with its interval.
type TransferResult struct {
	Metric    string   `json:"metric"`
	All       Estimate `json:"all"`
	InBand    Estimate `json:"in_band"`
	OutOfBand Estimate `json:"out_of_band"`
	Diff      Estimate `json:"in_band_minus_all"` // per resample
	Resamples int      `json:"resamples"`
	Level     float64  `json:"level"`
	Seed      uint64   `json:"seed"`
	// Unscored counts the resamples whose metric failed for a set (one
	// class drawn for an AUC, say), per set: all, in band, out of band.
	// Their intervals use the others; Notes say so.
	Unscored [3]int   `json:"unscored"`
	Notes    []string `json:"notes,omitempty"`
}

// Errors of EvaluateTransfer.
var (
	ErrTransferInput = errors.New("overlap: transfer evaluation input")
)

// EvaluateTransfer scores a transfer model's predictions on the target
// cluster's jobs against their true values, on all jobs, on the jobs in
// the overlap band (inBand, e.g. Result.InBand restricted to the target
// rows) and on the others, as the procedure asks ("only evaluate transfer
// models on jobs in the overlap region; report separately"). Each estimate
// has a stratified bootstrap percentile interval: every resample draws, with
// replacement, as many in-band jobs from the in-band jobs and as many
// out-of-band jobs from the out-of-band ones as there are, so the band's
// share is fixed and the in-band minus all difference is computed on the
// same resample. The resamples are stats.Bootstrap's with the in-band
// jobs as the first stratum and the others as the second: resample b uses a
// PCG generator seeded (seed, b), so the result does not depend on the
// number of cores. The intervals are the (1−level)/2 and (1+level)/2
// quantiles of the resamples' values; 1000 resamples at level 0.95 are the
// usual choice.
//
// Lengths that differ, NaN in truth or predictions, no in-band job, a
// metric without a function, fewer than one resample or a level outside
// (0, 1) are errors wrapping ErrTransferInput; ±Inf are ordinary values (a
// score may be infinite; an MAE is then +Inf). A metric that fails on all
// or on the in-band jobs (one class for an AUC) is an error wrapping the
// metric's; on the out-of-band jobs it leaves that estimate NaN with a
// note, as does an empty out-of-band set. Resamples a metric cannot score
// are left out of that interval and counted in Unscored with a note; with
// fewer than half of them scored the interval is NaN. Cancelling ctx stops
// the resampling; EvaluateTransfer then returns ctx.Err().
func EvaluateTransfer(ctx context.Context, truth, pred []float64, inBand []bool, metric Metric, resamples int, level float64, seed uint64) (*TransferResult, error) {
	n := len(truth)
	if len(pred) != n || len(inBand) != n {
		return nil, fmt.Errorf("%w: %d true values, %d predictions, %d band flags", ErrTransferInput, n, len(pred), len(inBand))
	}
	if metric.Fn == nil {
		return nil, fmt.Errorf("%w: metric %q has no function", ErrTransferInput, metric.Name)
	}
	for i := range truth {
		if math.IsNaN(truth[i]) || math.IsNaN(pred[i]) {
			return nil, fmt.Errorf("%w: job %d: true value %v, prediction %v", ErrTransferInput, i, truth[i], pred[i])
		}
	}
	if resamples < 1 {
		return nil, fmt.Errorf("%w: %d resamples", ErrTransferInput, resamples)
	}
	if !(level > 0 && level < 1) {
		return nil, fmt.Errorf("%w: interval level %v outside (0, 1)", ErrTransferInput, level)
	}
	var in, out []int
	for i, b := range inBand {
		if b {
			in = append(in, i)
		} else {
			out = append(out, i)
		}
	}
	if len(in) == 0 {
		return nil, fmt.Errorf("%w: no target job in the band", ErrTransferInput)
	}
	res := &TransferResult{Metric: metric.Name, Resamples: resamples, Level: level, Seed: seed}
	score := func(idx []int, tb, pb []float64) (float64, error) {
		tb, pb = tb[:0], pb[:0]
		for _, i := range idx {
			tb = append(tb, truth[i])
			pb = append(pb, pred[i])
		}
		return metric.Fn(tb, pb)
	}
	all := slices.Concat(in, out)
	var err error
	tb, pb := make([]float64, 0, n), make([]float64, 0, n)
	if res.All.Value, err = score(all, tb, pb); err != nil {
		return nil, fmt.Errorf("overlap: %s on all %d target jobs: %w", metric.Name, n, err)
	}
	if res.InBand.Value, err = score(in, tb, pb); err != nil {
		return nil, fmt.Errorf("overlap: %s on the %d in-band target jobs: %w", metric.Name, len(in), err)
	}
	res.OutOfBand.Value = math.NaN()
	if len(out) == 0 {
		res.Notes = append(res.Notes, "every target job is in the band: no out-of-band estimate")
	} else {
		if v, err := score(out, tb, pb); err == nil {
			res.OutOfBand.Value = v
		} else {
			res.Notes = append(res.Notes, fmt.Sprintf("%s not defined on the %d out-of-band jobs: %v", metric.Name, len(out), err))
		}
	}
	res.All.N, res.InBand.N, res.OutOfBand.N = n, len(in), len(out)
	res.Diff.Value, res.Diff.N = res.InBand.Value-res.All.Value, n

	B := resamples
	draws := [4][]float64{make([]float64, B), make([]float64, B), make([]float64, B), make([]float64, B)}
	nw := min(runtime.GOMAXPROCS(0), B)
	type scratch struct {
		ri, ro, ra []int
		tb, pb     []float64
	}
	scr := make([]scratch, nw)
	for w := range scr {
		scr[w] = scratch{make([]int, len(in)), make([]int, len(out)), make([]int, n), make([]float64, 0, n), make([]float64, 0, n)}
	}
	err = stats.Bootstrap(ctx, []int{len(in), len(out)}, B, nw, seed, func(w, b int, idx [][]int) {
		s := &scr[w]
		for k, j := range idx[0] {
			s.ri[k] = in[j]
		}
		for k, j := range idx[1] {
			s.ro[k] = out[j]
		}
		s.ra = append(append(s.ra[:0], s.ri...), s.ro...)
		vAll, eAll := score(s.ra, s.tb, s.pb)
		vIn, eIn := score(s.ri, s.tb, s.pb)
		vOut, eOut := math.NaN(), error(nil)
		if len(s.ro) > 0 {
			vOut, eOut = score(s.ro, s.tb, s.pb)
		}
		nan := math.NaN()
		if eAll != nil {
			vAll = nan
		}
		if eIn != nil {
			vIn = nan
		}
		if eOut != nil {
			vOut = nan
		}
		draws[0][b], draws[1][b], draws[2][b] = vAll, vIn, vOut
		draws[3][b] = vIn - vAll
	})
	if err != nil {
		return nil, err
	}
	for k, est := range []*Estimate{&res.All, &res.InBand, &res.OutOfBand, &res.Diff} {
		v := slices.DeleteFunc(draws[k], math.IsNaN)
		if k < 3 {
			res.Unscored[k] = B - len(v)
			if k == 2 && len(out) == 0 {
				res.Unscored[k] = 0
			}
		}
		est.Lo, est.Hi = percentileInterval(v, level, B)
	}
	for k, name := range []string{"all", "in-band", "out-of-band"} {
		if u := res.Unscored[k]; u > 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("%d of %d resamples of the %s jobs could not be scored (e.g. one class drawn) and are left out of its interval", u, B, name))
		}
	}
	return res, nil
}

// percentileInterval returns the (1−level)/2 and (1+level)/2 quantiles of
// v (linear interpolation, NumPy's default), or NaNs when fewer than half
// of the B resamples could be scored.
func percentileInterval(v []float64, level float64, B int) (lo, hi float64) {
	if len(v) == 0 || 2*len(v) < B {
		return math.NaN(), math.NaN()
	}
	slices.Sort(v)
	q := func(p float64) float64 {
		h := p * float64(len(v)-1)
		i := int(math.Floor(h))
		if i+1 >= len(v) {
			return v[len(v)-1]
		}
		return v[i] + (h-float64(i))*(v[i+1]-v[i])
	}
	return q((1 - level) / 2), q((1 + level) / 2)
}
