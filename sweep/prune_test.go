package sweep

import (
	"context"
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
