package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/crosscluster/crosscluster/examples/heldjobs/internal/heldjobs"
	"github.com/crosscluster/crosscluster/lstm"
	"github.com/crosscluster/crosscluster/stats"
	"gonum.org/v1/gonum/mat"
)

// A test score means something only beside what simpler rules get on the
// same test set. The baselines, all fitted on the training split only:
//
//   - majority: every job gets the training set's more frequent label;
//   - hold code: a job is released when, in the training set, at least the
//     threshold's share of the jobs held with its hold reason code were
//     released (an unseen code takes the training set's overall share), the
//     rule HTCondor's periodic_release policies express with HoldReasonCode;
//   - logistic regression: scikit-learn's default L2 logistic regression
//     (stats.LogisticRegression, exact optimum) on the same tensors, each
//     sample's rows summed over the frames (how often each job was in each
//     state in the window).

// scored is a rule's test F1 with its bootstrap interval.
type scored struct {
	name   string
	f1     float64
	lo, hi float64
}

// baselineRow formats a scored rule for the summary.
func (s scored) String() string {
	return fmt.Sprintf("%-22s F1 %.4f  [%.4f, %.4f]", s.name, s.f1, s.lo, s.hi)
}

// score returns the F1 of p on y at threshold with its 95% percentile
// bootstrap interval (heldjobs.BootstrapF1, 2,000 resamples, seed seed).
func score(name string, p []float64, y []int, threshold float64, seed uint64) scored {
	lo, hi := heldjobs.BootstrapF1(p, y, threshold, 2000, 0.95, seed)
	return scored{name: name, f1: lstm.Score(p, y, threshold).F1, lo: lo, hi: hi}
}

// baselines scores the three baselines on test, fitted on train; codes
// are the hold reason codes of the training and test samples.
func baselines(train, test lstm.Data, trainCodes, testCodes []int, threshold float64, seed uint64) ([]scored, error) {
	released := 0
	for _, y := range train.Y {
		released += y
	}
	rate := float64(released) / float64(len(train.Y))
	constant := func(v float64) []float64 {
		p := make([]float64, test.Len())
		for i := range p {
			p[i] = v
		}
		return p
	}
	majority := 0.0
	if 2*released >= len(train.Y) {
		majority = 1
	}
	out := []scored{score("majority class", constant(majority), test.Y, threshold, seed)}

	type count struct{ n, released int }
	byCode := map[int]*count{}
	for i, c := range trainCodes {
		k := byCode[c]
		if k == nil {
			k = &count{}
			byCode[c] = k
		}
		k.n++
		k.released += train.Y[i]
	}
	p := make([]float64, test.Len())
	for i, c := range testCodes {
		p[i] = rate
		if k := byCode[c]; k != nil {
			p[i] = float64(k.released) / float64(k.n)
		}
	}
	out = append(out, score("hold-code rule", p, test.Y, threshold, seed))

	lr, err := stats.LogisticRegression(counts(train), train.Y, stats.LogisticConfig{})
	if err != nil {
		return nil, fmt.Errorf("logistic regression baseline: %w", err)
	}
	out = append(out, score("logistic regression", lr.PredictProba(nil, counts(test)), test.Y, threshold, seed))
	return out, nil
}

// counts is d's samples as rows of per-feature sums over the steps.
func counts(d lstm.Data) *mat.Dense {
	width := len(d.X[0][0])
	x := mat.NewDense(d.Len(), width, nil)
	for i, seq := range d.X {
		row := x.RawRowView(i)
		for _, step := range seq {
			for k, v := range step {
				row[k] += v
			}
		}
	}
	return x
}

// printScores writes the model's test F1 and each baseline's, with
// intervals, one line each.
func printScores(w io.Writer, model scored, base []scored) {
	fmt.Fprintln(w, "test F1 with 95% bootstrap intervals (2,000 resamples), beside the baselines:")
	fmt.Fprintln(w, "  "+model.String())
	for _, b := range base {
		fmt.Fprintln(w, "  "+b.String())
	}
}

// timeOrder returns the indices 0..n-1 ordered by at (ties by index): a
// time-ordered split trains on the holds before a cut and tests on those
// after it.
func timeOrder(at []int64) []int {
	idx := make([]int, len(at))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(at[a], at[b]) })
	return idx
}
