package sweep

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// seedMetrics records, for run ids[i], the series "loss" with value
// (i+1)/step at steps 1..steps[i], as a controller would have ingested it.
func seedMetrics(t *testing.T, l *Ledger, ids []string, steps []int) {
	t.Helper()
	var rows []metricRow
	for i, id := range ids {
		for k := 1; k <= steps[i]; k++ {
			rows = append(rows, metricRow{id, 1, metricPoint{Series: "loss", Step: num(k), Value: num(float64(i+1) / float64(k))}})
		}
	}
	if err := l.addMetrics(context.Background(), rows); err != nil {
		t.Fatal(err)
	}
}

func TestASHADecide(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	pts := mustEnqueue(t, l, gridSpec("a", 9, nil))
	var ids []string
	for _, p := range pts {
		if _, err := l.Start(ctx, p.ID, "x"); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	// Runs 0..8 have reached step 3 (rung 3 with MinStep 1, Eta 3); run i
	// has loss (i+1)/step, so run 0 is best.
	seedMetrics(t, l, ids, []int{3, 3, 3, 3, 3, 3, 3, 3, 3})
	a := ASHA{Series: "loss", MinStep: 1, Eta: 3}
	for i, id := range ids {
		reason, err := a.Decide(ctx, l, id)
		if err != nil {
			t.Fatal(err)
		}
		// Top 9/3 = 3 go on.
		if want := i >= 3; (reason != "") != want {
			t.Errorf("run %d: reason %q, want pruned %v", i, reason, want)
		}
		if reason != "" && !strings.Contains(reason, fmt.Sprintf("ranks %d of 9", i+1)) {
			t.Errorf("run %d: reason %q lacks its rank", i, reason)
		}
	}
	// Fewer runs than Eta at a rung decide nothing.
	l2, _ := openTemp(t)
	pts = mustEnqueue(t, l2, gridSpec("b", 2, nil))
	for _, p := range pts {
		l2.Start(ctx, p.ID, "x")
	}
	seedMetrics(t, l2, []string{pts[0].ID, pts[1].ID}, []int{9, 9})
	if r, _ := a.Decide(ctx, l2, pts[1].ID); r != "" {
		t.Errorf("two runs, eta 3: pruned (%s)", r)
	}
}

func TestMedianRuleDecide(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	pts := mustEnqueue(t, l, gridSpec("m", 7, nil))
	var ids []string
	for _, p := range pts {
		l.Start(ctx, p.ID, "x")
		ids = append(ids, p.ID)
	}
	// Run 6 is at step 4; the others have reached step 5. Median of the
	// other runs' best up to step 4: values (i+1)/4 for i = 0..5, median
	// of {0.25,...,1.5} = (0.75+1)/2 = 0.875; run 6 has 7/4 = 1.75: worse.
	seedMetrics(t, l, ids, []int{5, 5, 5, 5, 5, 5, 4})
	m := MedianRule{Series: "loss", Warmup: 2, MinRuns: 5}
	r, err := m.Decide(ctx, l, ids[6])
	if err != nil || !strings.Contains(r, "median 0.875 of 6 other runs") {
		t.Errorf("run 6: %q, %v", r, err)
	}
	if r, _ := m.Decide(ctx, l, ids[0]); r != "" {
		t.Errorf("best run pruned: %q", r)
	}
	// Before warm-up, nothing.
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
