package sweep

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestControllerFunc(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	mustEnqueue(t, l, gridSpec("f", 40, map[string]Value{"batch_size": IntValue(128)}))
	var calls atomic.Int64
	fn := func(ctx context.Context, task Task) (*Result, error) {
		calls.Add(1)
		seed := task.Params["seed"].Int()
		// Seed 3 runs out of memory until the batch size is ≤ 32: two
		// halvings (128→64→32), within the OOM budget of 3.
		if seed == 3 && task.Params["batch_size"].Int() > 32 {
			return nil, errors.New("fatal error: runtime: out of memory")
		}
		// Seed 5 always fails with an unknown error: budget 0.
		if seed == 5 {
			return nil, errors.New("segmentation fault")
		}
		return &Result{Metrics: map[string]float64{"best": float64(seed)}}, nil
	}
	work := t.TempDir()
	var progress strings.Builder
	c := &Controller{Ledger: l, Backend: &Local{Func: fn}, WorkDir: work, Parallel: 4, Progress: &progress}
	sum, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Completed != 39 || sum.Failed != 1 || sum.Retried != 2 {
		t.Errorf("summary %+v, want 39 completed, 1 failed, 2 retried", sum)
	}
	if calls.Load() != 42 {
		t.Errorf("%d calls, want 42", calls.Load())
	}
	rs, _ := l.Runs(ctx)
	for _, r := range rs {
		switch r.Config["seed"].Int() {
		case 3:
			if r.State != Completed || r.Attempt != 3 || r.Params()["batch_size"].Int() != 32 {
				t.Errorf("OOM run: %+v", r)
			}
		case 5:
			if r.State != Failed || r.ErrorClass != ClassUnknown || !strings.Contains(r.ErrorText, "segmentation fault") {
				t.Errorf("failing run: state %s class %s text %q", r.State, r.ErrorClass, r.ErrorText)
			}
		}
	}
	if !strings.Contains(progress.String(), "39/40 completed") {
		t.Errorf("progress does not end at 39/40:\n%s", progress.String())
	}
	var failed strings.Builder
	if n, err := WriteFailed(ctx, &failed, l, work, 5); err != nil || n != 1 || !strings.Contains(failed.String(), "| segmentation fault") {
		t.Errorf("WriteFailed = %d, %v:\n%s", n, err, failed.String())
	}
}

func TestControllerProcesses(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	cmd := workerCommand(t)
	modes := []string{"ok", "fail", "oom", "nan", "corrupt", "noresult"}
	var vals []Value
	for _, m := range modes {
		vals = append(vals, Str(m))
	}
	spec := &Spec{Name: "p", Base: map[string]Value{"batch_size": IntValue(64)}, Axes: []Axis{{Key: "mode", Values: vals}}}
	mustEnqueue(t, l, spec)
	work := t.TempDir()
	c := &Controller{Ledger: l, Backend: &Local{Command: cmd, StateDir: filepath.Join(work, "launch")}, WorkDir: work, Parallel: 3, PollInterval: 10 * time.Millisecond}
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	rs, _ := l.Runs(ctx)
	got := map[string]string{}
	for _, r := range rs {
		got[r.Config["mode"].String()] = fmt.Sprintf("%s/%s/%d", r.State, r.ErrorClass, r.Attempt)
	}
	want := map[string]string{
		"ok":       "completed//1",
		"fail":     "failed/unknown/1",
		"oom":      "completed//2",        // 64 → 32 after one OOM
		"nan":      "failed/divergence/3", // budget 2
		"corrupt":  "failed/corrupt/2",    // budget 1
		"noresult": "failed/corrupt/2",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("mode %s: %s, want %s", k, got[k], w)
		}
	}
	for _, r := range rs {
		if r.Config["mode"].String() == "corrupt" && !strings.Contains(r.ErrorText, "result.json") {
			t.Errorf("corrupt run's reason does not name the file: %q", r.ErrorText)
		}
	}
}

func TestControllerCancel(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	cmd := workerCommand(t)
	mustEnqueue(t, l, gridSpec("c", 4, map[string]Value{"mode": Str("hang")}))
	work := t.TempDir()
	c := &Controller{Ledger: l, Backend: &Local{Command: cmd, StateDir: filepath.Join(work, "launch")}, WorkDir: work, Parallel: 2, PollInterval: 10 * time.Millisecond}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := c.Run(runCtx); done <- err }()
	waitFor(t, func() bool { st, _ := l.Status(ctx, 1); return st.Counts[Running] == 2 })
	// Wait until both workers are up (their heartbeat files exist), so
	// that they are ready to report SIGTERM.
	waitFor(t, func() bool {
		rs, _ := l.Runs(ctx, Running)
		n := 0
		for _, r := range rs {
			if !heartbeatOf(AttemptDir(work, r.ID, r.Attempt)).IsZero() {
				n++
			}
		}
		return n == 2
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
	if err := c.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	st, _ := l.Status(ctx, 1)
	if st.Counts[Cancelled] != 4 {
		t.Fatalf("counts %v, want 4 cancelled", st.Counts)
	}
	// The worker processes got SIGTERM.
	rs, _ := l.Runs(ctx)
	hung := 0
	for _, r := range rs {
		if r.Attempt > 0 {
			hung++
			dir := AttemptDir(work, r.ID, r.Attempt)
			waitFor(t, func() bool { return strings.Contains(LogTail(filepath.Join(dir, "log"), 3), "got SIGTERM") })
		}
	}
	if hung != 2 {
		t.Errorf("%d runs had started, want 2", hung)
	}
}

// waitTimeout bounds waits for background processes on a loaded machine.
const waitTimeout = 30 * time.Second

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStaleReaper(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	cmd := workerCommand(t)
	// The worker touches its heartbeat once and then hangs.
	mustEnqueue(t, l, gridSpec("s", 1, map[string]Value{"mode": Str("hang")}))
	work := t.TempDir()
	c := &Controller{Ledger: l, Backend: &Local{Command: cmd, StateDir: filepath.Join(work, "launch")}, WorkDir: work,
		Parallel: 1, PollInterval: 20 * time.Millisecond, StaleAfter: 500 * time.Millisecond,
		Retry: RetryPolicy{Budget: map[Class]int{ClassInfrastructure: 0}}}
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	rs, _ := l.Runs(ctx)
	if rs[0].State != Failed || rs[0].ErrorClass != ClassInfrastructure || !strings.HasPrefix(rs[0].ErrorText, "stale") {
		t.Errorf("stale run: %s %s %q", rs[0].State, rs[0].ErrorClass, rs[0].ErrorText)
	}
}

func TestKillControllerLocal(t *testing.T) {
	crashController(t, "local", 16, []int{3, 8}, 60*time.Second)
}
