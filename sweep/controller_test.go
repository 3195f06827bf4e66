package sweep

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/internal/launch"
)

func TestControllerFunc(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	mustEnqueue(t, l, gridSpec("f", 40, map[string]Value{"batch_size": intValue(128)}))
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
	if n, err := l.WriteFailed(ctx, &failed, 5); err != nil || n != 1 || !strings.Contains(failed.String(), "| segmentation fault") {
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
		vals = append(vals, strValue(m))
	}
	spec := &Spec{Name: "p", Base: map[string]Value{"batch_size": intValue(64)}, Axes: []Axis{{Key: "mode", Values: vals}}}
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
	cmd, starts := workerCommandCounting(t)
	mustEnqueue(t, l, gridSpec("c", 4, map[string]Value{"mode": strValue("hang")}))
	work := t.TempDir()
	c := &Controller{Ledger: l, Backend: &Local{Command: cmd, StateDir: filepath.Join(work, "launch")}, WorkDir: work, Parallel: 2, PollInterval: 10 * time.Millisecond}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := c.Run(runCtx); done <- err }()
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
			waitFor(t, func() bool { return strings.Contains(logTail(filepath.Join(dir, "log"), 3), "got SIGTERM") })
		}
	}
	if hung != 2 {
		t.Errorf("%d runs had started, want 2", hung)
	}
	checkStartsMatchAttempts(t, l, work, starts)
}

// TestControllerCancelDuringStart cancels Run at random moments, most of
// them while workers are being launched. Whatever the moment: Run's error
// wraps context.Canceled, each attempt's worker started at most once,
// every worker that started is recorded and stopped by Cancel, and no
// worker is left running.
func TestControllerCancelDuringStart(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(15, 2))
	for i := range 10 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			l, _ := openTemp(t)
			cmd, starts := workerCommandCounting(t)
			mustEnqueue(t, l, gridSpec("cs", 6, map[string]Value{"mode": strValue("hang")}))
			work := t.TempDir()
			c := &Controller{Ledger: l, Backend: &Local{Command: cmd, StateDir: filepath.Join(work, "launch")}, WorkDir: work, Parallel: 6, PollInterval: 10 * time.Millisecond}
			runCtx, cancel := context.WithCancel(ctx)
			// Launching six workers takes tens of milliseconds here; the
			// cancel lands anywhere in the first 60 ms.
			timer := time.AfterFunc(time.Duration(rng.Int64N(int64(60*time.Millisecond))), cancel)
			defer timer.Stop()
			_, err := c.Run(runCtx)
			cancel()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Run: %v, want an error wrapping context.Canceled", err)
			}
			if err := c.Cancel(ctx); err != nil {
				t.Fatal(err)
			}
			st, _ := l.Status(ctx, 1)
			if st.Counts[Cancelled] != 6 {
				t.Fatalf("counts %v, want 6 cancelled", st.Counts)
			}
			checkStartsMatchAttempts(t, l, work, starts)
		})
	}
}

// checkStartsMatchAttempts asserts that every worker start belongs to an
// attempt the ledger recorded, that no attempt started twice, and that no
// worker of the local process backend is still running.
func checkStartsMatchAttempts(t *testing.T, l *Ledger, work, starts string) {
	t.Helper()
	ctx := context.Background()
	rs, err := l.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	recorded := map[string]bool{}
	for _, r := range rs {
		for n := 1; n <= r.Attempt; n++ {
			recorded[fmt.Sprintf("%s %d", r.ID, n)] = true
		}
	}
	for k, n := range readStarts(t, starts) {
		if n > 1 {
			t.Errorf("attempt %s: worker started %d times", k, n)
		}
		if !recorded[k] {
			t.Errorf("attempt %s: a worker started that the ledger does not record", k)
		}
	}
	lc := &launch.Local{StateDir: filepath.Join(work, "launch")}
	for _, r := range rs {
		for n := 1; n <= r.Attempt; n++ {
			h := lc.Attach(launchName(Task{RunID: r.ID, Attempt: n}))
			if st, _ := h.Poll(); st == launch.Running {
				t.Errorf("run %s attempt %d: worker still running after Cancel", r.ID, n)
			}
		}
	}
}

// waitTimeout bounds waits for background processes on a loaded machine.
const waitTimeout = 30 * time.Second

// waitFor polls cond until it holds, failing the test after waitTimeout.
// It never assumes that a fixed pause is enough.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		<-tick.C
	}
}

func TestStaleReaper(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	cmd := workerCommand(t)
	// The worker touches its heartbeat once and then hangs.
	mustEnqueue(t, l, gridSpec("s", 1, map[string]Value{"mode": strValue("hang")}))
	work := t.TempDir()
	c := &Controller{Ledger: l, Backend: &Local{Command: cmd, StateDir: filepath.Join(work, "launch")}, WorkDir: work,
		Parallel: 1, PollInterval: 20 * time.Millisecond, StaleAfter: 500 * time.Millisecond,
		Retry: map[Class]int{ClassInfrastructure: 0}}
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	rs, _ := l.Runs(ctx)
	if rs[0].State != Failed || rs[0].ErrorClass != ClassInfrastructure || !strings.HasPrefix(rs[0].ErrorText, "stale") {
		t.Errorf("stale run: %s %s %q", rs[0].State, rs[0].ErrorClass, rs[0].ErrorText)
	}
}

// killIters is the number of controller kills per backend: 50 in a plain
// run; 10 with -short, and 10 under the race detector, where the plain run
// beside it (CI runs both) has already made the 50.
func killIters() int {
	if testing.Short() || raceEnabled {
		return 10
	}
	return 50
}

func TestKillLoopProcess(t *testing.T) {
	t.Parallel()
	killLoop(t, "process", 8, killIters(), 300*time.Millisecond, 4*time.Minute)
}

func TestKillLoopFunc(t *testing.T) {
	t.Parallel()
	killLoop(t, "func", 8, killIters(), 300*time.Millisecond, 4*time.Minute)
}
