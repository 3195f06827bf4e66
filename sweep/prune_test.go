package sweep

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
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

// seedValues records run id's values of "loss" at steps 1, 2, ... logged
// at times t0+1, t0+2, ...
func seedValues(t *testing.T, l *Ledger, id string, t0 float64, vals ...float64) {
	t.Helper()
	var rows []metricRow
	for k, v := range vals {
		rows = append(rows, metricRow{id, 1, metricPoint{Series: "loss", Step: num(k + 1), Value: num(v), Time: t0 + float64(k+1)}})
	}
	if err := l.addMetrics(context.Background(), rows); err != nil {
		t.Fatal(err)
	}
}

// decisions returns which of ids p prunes, by index, with the reasons.
func decisions(t *testing.T, l *Ledger, p Pruner, ids []string) map[int]string {
	t.Helper()
	out := map[int]string{}
	all, err := p.decideAll(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if r := all[id]; r != "" {
			out[i] = r
		}
	}
	return out
}

func TestASHADecide(t *testing.T) {
	l, _ := openTemp(t)
	ids := startAll(t, l, mustEnqueue(t, l, gridSpec("a", 9, nil)))
	// Run i logs c[i]/k at steps k = 1..3, every value after all of run
	// i-1's. Rungs at steps 1 and 3 (eta 3). Worked by hand, with Optuna's
	// rule (the top max(1, ⌊n/3⌋) of the n values at the rung go on):
	// rung 0 values 5 3 8 1 9 2 7 4 6 in that order: 8 (top 1 of 3: 3),
	// 9 (top 1 of 5: 1), 7 (top 2 of 7: 1 2), 4 (top 2 of 8) and 6 (top 3
	// of 9: 1 2 3) are out. Rung 1, runs 0 1 3 5 at step 3: 5/3, 1, 1/3,
	// 2/3: run 5 is not the top 1 of 4 and is out.
	c := []float64{5, 3, 8, 1, 9, 2, 7, 4, 6}
	seedMetrics(t, l, ids, c, []int{3, 3, 3, 3, 3, 3, 3, 3, 3})
	got := decisions(t, l, ASHA{Series: "loss", MinStep: 1, Eta: 3}, ids)
	want := []int{2, 4, 5, 6, 7, 8}
	if len(got) != len(want) {
		t.Errorf("pruned %v, want runs %v", got, want)
	}
	for _, i := range want {
		if got[i] == "" {
			t.Errorf("run %d (c %v) not pruned", i, c[i])
		}
	}
	if r := got[5]; !strings.Contains(r, "rung 1 (step 3), is not among the top 1 of the 4 runs") {
		t.Errorf("run 5: reason %q does not give the rung and rank", r)
	}
	if r := got[8]; !strings.Contains(r, "rung 0 (step 1), is not among the top 3 of the 9 runs") {
		t.Errorf("run 8: reason %q", r)
	}
	// A pruned run takes no part in later rungs: run 2's value at step 3
	// (8/3) would otherwise be in rung 1 (and the MaxStep bound stops
	// rung 1 from deciding anything).
	if got := decisions(t, l, ASHA{Series: "loss", MinStep: 1, Eta: 3, MaxStep: 3}, ids); got[5] != "" || len(got) != 5 {
		t.Errorf("with MaxStep 3: %v; want runs 2 4 6 7 8 only", got)
	}
	// A NaN at a rung prunes.
	l2, _ := openTemp(t)
	ids2 := startAll(t, l2, mustEnqueue(t, l2, gridSpec("n", 2, nil)))
	seedValues(t, l2, ids2[0], 0, 1, 1)
	seedValues(t, l2, ids2[1], 10, math.NaN(), 1)
	if got := decisions(t, l2, ASHA{Series: "loss", MinStep: 1, Eta: 3}, ids2); got[0] != "" || !strings.Contains(got[1], "NaN") {
		t.Errorf("NaN at a rung: %v", got)
	}
}

func TestMedianRuleDecide(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (*Ledger, []string) {
		l, _ := openTemp(t)
		ids := startAll(t, l, mustEnqueue(t, l, gridSpec("m", 9, nil)))
		// Runs 0..4 log i+1 over k at steps k = 1..5 and complete; each
		// run logs after the one before. Run 5 logs 6/k, run 6 2.5/k.
		for i := range 7 {
			c := float64(i + 1)
			if i == 6 {
				c = 2.5
			}
			seedValues(t, l, ids[i], float64(100*i), c, c/2, c/3, c/4, c/5)
			if i < 5 {
				if err := l.complete(ctx, ids[i]); err != nil {
					t.Fatal(err)
				}
			}
		}
		// Run 7: 2, 1.4, 1.2, 0.7; run 8: all NaN.
		seedValues(t, l, ids[7], 700, 2, 1.4, 1.2, 0.7)
		seedValues(t, l, ids[8], 800, math.NaN(), math.NaN(), math.NaN())
		return l, ids
	}
	t.Run("defaults", func(t *testing.T) {
		// Startup 5: runs 0..4 are never judged (fewer than 5 completed
		// before them). The medians of the completed runs' values: step 2:
		// 0.5 1 1.5 2 2.5 → 1.5; step 3: → 1; step 4: → 0.75. Run 5: best
		// 3 at step 2 > 1.5: out. Run 6: 1.25, 0.833, 0.625, 0.5 all below
		// the medians: stays. Run 7: 1.4 < 1.5, then 1.2 > 1 at step 3:
		// out. Run 8: all NaN: out at its first check (step 2).
		l, ids := setup(t)
		got := decisions(t, l, MedianRule{Series: "loss", Warmup: 2}, ids)
		if len(got) != 3 || !strings.Contains(got[5], "best loss 3 by step 2 is worse than the median 1.5 of the 5 completed") ||
			!strings.Contains(got[7], "best loss 1.2 by step 3 is worse than the median 1 of the 5") ||
			!strings.Contains(got[8], "every loss value up to step 2 is NaN") {
			t.Errorf("pruned %v; want runs 5 (step 2), 7 (step 3) and 8 (NaN)", got)
		}
	})
	t.Run("interval", func(t *testing.T) {
		// Interval 2 after warm-up 2: checks at steps 2 and 4 only. Run 7
		// is not checked at step 3 and is below the median at 4: it stays.
		l, ids := setup(t)
		got := decisions(t, l, MedianRule{Series: "loss", Warmup: 2, interval: 2}, ids)
		if got[7] != "" || got[5] == "" || got[8] == "" || len(got) != 2 {
			t.Errorf("pruned %v; want runs 5 and 8", got)
		}
	})
	t.Run("startup", func(t *testing.T) {
		// Startup 3: run 3 is judged at step 2 against runs 0..2 (median
		// 1): 2 > 1, out, so it is not a completed run for the others; run
		// 4 (2.5), 5 (3), 6 (1.25) and 7 (1.4) are out at step 2 too.
		l, ids := setup(t)
		got := decisions(t, l, MedianRule{Series: "loss", Warmup: 2, Startup: 3}, ids)
		for _, i := range []int{3, 4, 5, 6, 7, 8} {
			if got[i] == "" {
				t.Errorf("run %d not pruned", i)
			}
		}
		if len(got) != 6 || !strings.Contains(got[6], "median 1 of the 3 completed") {
			t.Errorf("pruned %v", got)
		}
	})
	t.Run("min runs and warm-up", func(t *testing.T) {
		l, ids := setup(t)
		if got := decisions(t, l, MedianRule{Series: "loss", Warmup: 2, minRuns: 6}, ids); len(got) != 1 || got[8] == "" {
			t.Errorf("MinRuns 6 with 5 completed: %v; want only the NaN run", got)
		}
		if got := decisions(t, l, MedianRule{Series: "loss", Warmup: 10}, ids); len(got) != 0 {
			t.Errorf("pruned during warm-up: %v", got)
		}
	})
}

func TestControllerPrunes(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	mustEnqueue(t, l, gridSpec("p", 8, map[string]Value{"sleep_ms": intValue(800)}))
	// Two at a time, so that the first runs complete before the later
	// (worse) ones are judged against them.
	c := &Controller{Ledger: l, Backend: &Local{Func: testFunc}, WorkDir: t.TempDir(), Parallel: 2, PollInterval: 5 * time.Millisecond,
		Pruner: MedianRule{Series: "loss", Warmup: 2, Startup: 2}}
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

// TestPruningIndependentOfPolling: the same metrics give the same
// decisions whether the controller polls every 5 ms or every 300 ms. Nine
// runs log c[i]/k at steps 1..3 at planned times (run after run, 25 ms
// apart), each value's time field set to its planned time, so that the
// metrics are the same in both sweeps, and then go on for a while; ASHA
// prunes runs 2 4 5 6 7 8, as TestASHADecide works out by hand, and the
// median rule the same runs in both.
func TestPruningIndependentOfPolling(t *testing.T) {
	c := []float64{5, 3, 8, 1, 9, 2, 7, 4, 6}
	const steps, slot = 3, 25 * time.Millisecond
	sweep := func(t *testing.T, p Pruner, poll time.Duration) map[string]string {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		l, _ := openTemp(t)
		mustEnqueue(t, l, gridSpec("poll", len(c), nil))
		t0 := time.Now().Add(200 * time.Millisecond)
		work := func(ctx context.Context, tk Task) (*Result, error) {
			i := int(tk.Params["seed"].Int())
			f, err := os.OpenFile(filepath.Join(tk.Dir, MetricFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			for k := 1; k <= steps; k++ {
				at := t0.Add(time.Duration(i*steps+k) * slot)
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(time.Until(at)):
				}
				fmt.Fprintf(f, `{"series":"loss","step":%d,"value":%v,"time":%.6f}`+"\n", k, c[i]/float64(k), float64(at.UnixMicro())/1e6)
			}
			// Every run goes on (evaluating, say) until well after the
			// last value, so that each decision reaches its run in time,
			// with room for several slow polls on a loaded machine (under
			// the race detector a 300 ms poll has come late enough for the
			// last run to end before its decision). A run still going then
			// is pruned as soon as the decision is made.
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Until(t0.Add(time.Duration(len(c)*steps)*slot + 2*clockSlack + 3*time.Second))):
			}
			return &Result{Metrics: map[string]float64{"best": c[i] / steps}}, nil
		}
		ctl := &Controller{Ledger: l, Backend: &Local{Func: work}, WorkDir: t.TempDir(), Parallel: len(c), PollInterval: poll, Pruner: p}
		if _, err := ctl.Run(ctx); err != nil {
			t.Fatal(err)
		}
		rs, err := l.Runs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, r := range rs {
			if r.State == Pruned {
				out[fmt.Sprint(r.Config["seed"].Int())] = r.ErrorText
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		p    Pruner
		want string
	}{
		{"asha", ASHA{Series: "loss", MinStep: 1, Eta: 3}, "[2 4 5 6 7 8]"},
		{"median", MedianRule{Series: "loss", Startup: 2, Warmup: 1}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fast, slow := sweep(t, tc.p, 5*time.Millisecond), sweep(t, tc.p, 300*time.Millisecond)
			if !maps.Equal(fast, slow) {
				t.Errorf("polling every 5 ms pruned %v,\nevery 300 ms %v", fast, slow)
			}
			if tc.want != "" {
				if got := fmt.Sprint(slices.Sorted(maps.Keys(fast))); got != tc.want {
					t.Errorf("pruned %s, want %s", got, tc.want)
				}
			}
			t.Logf("pruned: %v", fast)
		})
	}
}
