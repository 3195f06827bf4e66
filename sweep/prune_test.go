package sweep

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// seedMetrics records, for run ids[i], the series "loss" with value
// c[i]/step at steps 1..steps[i], logged at time 100·i + step (run i
// reaches every step after runs 0..i-1), as a controller would have
// ingested it.
func seedMetrics(t *testing.T, l *Ledger, ids []string, c []float64, steps []int) {
	t.Helper()
	var rows []metricRow
	for i, id := range ids {
		for k := 1; k <= steps[i]; k++ {
			rows = append(rows, metricRow{id, 1, metricPoint{Series: "loss", Step: num(k), Value: num(c[i] / float64(k)), Time: float64(100*i + k)}})
		}
	}
	if err := l.addMetrics(context.Background(), rows); err != nil {
		t.Fatal(err)
	}
}

func startAll(t *testing.T, l *Ledger, pts []Point) []string {
	t.Helper()
	var ids []string
	for _, p := range pts {
		if _, err := l.start(context.Background(), p.ID, "x"); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	return ids
}

func TestASHADecide(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	ids := startAll(t, l, mustEnqueue(t, l, gridSpec("a", 9, nil)))
	// Nine runs reach steps 1..3 in order; run i's loss is c[i]/step. At a
	// rung, run i competes with runs 0..i-1: n = i+1, the top
	// max(1, ⌊n/3⌋) go on. Worked by hand: runs 2 (8 behind 5, 3), 4, 6, 7
	// and 8 are out; 0 and 1 have too few rivals; 3 (the best) and 5 (2nd
	// of 6, top 2) go on.
	c := []float64{5, 3, 8, 1, 9, 2, 7, 4, 6}
	seedMetrics(t, l, ids, c, []int{3, 3, 3, 3, 3, 3, 3, 3, 3})
	a := ASHA{Series: "loss", MinStep: 1, Eta: 3}
	pruned := map[int]bool{2: true, 4: true, 6: true, 7: true, 8: true}
	for i, id := range ids {
		reason, err := a.Decide(ctx, l, id)
		if err != nil {
			t.Fatal(err)
		}
		if (reason != "") != pruned[i] {
			t.Errorf("run %d (c %v): reason %q, want pruned %v", i, c[i], reason, pruned[i])
		}
	}
	r, _ := a.Decide(ctx, l, ids[8])
	if !strings.Contains(r, "by step 1 ranks 6 of the 9 runs") {
		t.Errorf("reason %q does not give the rung and rank", r)
	}
	// A decision does not change when later runs arrive: run 5 stays.
	l2, _ := openTemp(t)
	ids2 := startAll(t, l2, mustEnqueue(t, l2, gridSpec("b", 2, nil)))
	seedMetrics(t, l2, ids2, []float64{1, 2}, []int{9, 9})
	if r, _ := a.Decide(ctx, l2, ids2[1]); r != "" {
		t.Errorf("two runs, eta 3: pruned (%s)", r)
	}
}

func TestMedianRuleDecide(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	ids := startAll(t, l, mustEnqueue(t, l, gridSpec("m", 7, nil)))
	// Runs 0..5 reach step 5 before run 6 reaches step 4. The median of
	// their best up to step 4, (i+1)/4 for i = 0..5, is (0.75+1)/2 =
	// 0.875; run 6 has 7/4 = 1.75: worse.
	seedMetrics(t, l, ids, []float64{1, 2, 3, 4, 5, 6, 7}, []int{5, 5, 5, 5, 5, 5, 4})
	m := MedianRule{Series: "loss", Warmup: 2, MinRuns: 5}
	r, err := m.Decide(ctx, l, ids[6])
	if err != nil || !strings.Contains(r, "median 0.875 of the 6 runs") {
		t.Errorf("run 6: %q, %v", r, err)
	}
	// Run 0 reached every step first: nobody to compare with.
	if r, _ := m.Decide(ctx, l, ids[0]); r != "" {
		t.Errorf("first run pruned: %q", r)
	}
	m.Warmup = 10
	if r, _ := m.Decide(ctx, l, ids[6]); r != "" {
		t.Errorf("pruned during warm-up: %q", r)
	}
}

// TestControllerPrunes: with the median rule on, the worse runs are stopped
// (their workers see ctx end), recorded as pruned with the reason, and keep
// the metrics they streamed.
func TestControllerPrunes(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	mustEnqueue(t, l, gridSpec("p", 8, map[string]Value{"sleep_ms": IntValue(400)}))
	c := &Controller{Ledger: l, Backend: &Local{Func: testFunc}, WorkDir: t.TempDir(), Parallel: 8, PollInterval: 5 * time.Millisecond,
		Pruner: MedianRule{Series: "loss", Warmup: 2, MinRuns: 3}}
	sum, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("summary %+v", sum)
	if sum.Pruned == 0 || sum.Completed == 0 || sum.Pruned+sum.Completed != 8 {
		t.Fatalf("summary %+v: want some pruned and some completed, 8 in all", sum)
	}
	rs, _ := l.Summaries(ctx)
	for _, r := range rs {
		if r.State != Pruned {
			continue
		}
		if !strings.HasPrefix(r.ErrorText, "median rule") || r.LatestStep["loss"] < 2 {
			t.Errorf("pruned run %s: %q, latest %v", r.Slug, r.ErrorText, r.LatestStep)
		}
		if r.Config["seed"].Int() == 0 {
			t.Errorf("the best run (seed 0) was pruned: %s", r.ErrorText)
		}
	}
}

func TestKillLoopProcessPrune(t *testing.T) {
	t.Parallel()
	killLoopPrune(t, "process", true, 8, killIters(), 300*time.Millisecond, 4*time.Minute)
}

// TestBadStepRefused: a worker's metric line whose step is "inf", "nan",
// negative or beyond 2^53 neither hangs the controller under ASHA (whose
// rungs would never end) nor reaches the ledger: the run fails as corrupt,
// naming the line, and the other runs go on.
func TestBadStepRefused(t *testing.T) {
	for _, step := range []string{`"inf"`, `"-inf"`, `"nan"`, `-1`, `1e300`} {
		t.Run(step, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			l, _ := openTemp(t)
			mustEnqueue(t, l, gridSpec("inf", 4, nil))
			work := func(ctx context.Context, tk Task) (*Result, error) {
				f, err := os.OpenFile(filepath.Join(tk.Dir, MetricFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
				if err != nil {
					return nil, err
				}
				for k := 1; k <= 3; k++ {
					fmt.Fprintf(f, `{"series":"loss","step":%d,"value":%g,"time":%d}`+"\n", k, float64(tk.Params["seed"].Int()+1)/float64(k), k)
				}
				if tk.Params["seed"].Int() == 1 {
					fmt.Fprintf(f, `{"series":"loss","step":%s,"value":0.1,"time":9}`+"\n", step)
				}
				f.Close()
				time.Sleep(50 * time.Millisecond)
				return &Result{Metrics: map[string]float64{"best": 1}}, nil
			}
			c := &Controller{Ledger: l, Backend: &Local{Func: work}, WorkDir: t.TempDir(), Parallel: 4, PollInterval: 5 * time.Millisecond,
				Pruner: ASHA{Series: "loss", MinStep: 1, Eta: 3}}
			if _, err := c.Run(ctx); err != nil {
				t.Fatalf("controller: %v", err)
			}
			rs, _ := l.Runs(ctx)
			for _, r := range rs {
				bad := r.Config["seed"].Int() == 1
				switch {
				case bad && (r.State != Failed || r.ErrorClass != ClassCorrupt || !strings.Contains(r.ErrorText, "line 4") || !strings.Contains(r.ErrorText, "step")):
					t.Errorf("run with step %s: %s %s %q; want failed as corrupt, naming line 4 and the step", step, r.State, r.ErrorClass, r.ErrorText)
				case !bad && r.State == Failed:
					t.Errorf("run %s failed: %s", r.Slug, r.ErrorText)
				}
			}
		})
	}
}

// TestMetricLogRefusesBadStep: a worker cannot write a step readers would
// refuse.
func TestMetricLogRefusesBadStep(t *testing.T) {
	ml, err := OpenMetricLog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ml.Close()
	for _, s := range []float64{math.Inf(1), math.NaN(), -1, 1e300} {
		if err := ml.Log("loss", s, 1); err == nil {
			t.Errorf("step %v logged", s)
		}
	}
	if err := ml.Log("loss", 0, math.NaN()); err != nil {
		t.Errorf("NaN value at step 0: %v", err)
	}
}
