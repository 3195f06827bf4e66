package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/internal/launch"
)

// The test binary doubles as a worker and as a controller process, selected
// by this variable, so the crash tests can SIGKILL a real controller.
const roleEnv = "SWEEP_TEST_ROLE"

// startsEnv names a file to which a test worker appends "<run id> <attempt>"
// when it starts.
const startsEnv = "SWEEP_TEST_STARTS"

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "worker":
		os.Exit(testWorker())
	case "controller":
		os.Exit(testController())
	}
	os.Exit(m.Run())
}

// testWorker behaves as the "mode" parameter says.
func testWorker() int {
	t, ok, err := WorkerTask()
	if !ok || err != nil {
		fmt.Fprintln(os.Stderr, "not a worker:", err)
		return 2
	}
	if p := os.Getenv(startsEnv); p != "" {
		// One line per worker start, appended in one write (O_APPEND), so
		// tests can count starts against attempts.
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		fmt.Fprintf(f, "%s %d\n", t.RunID, t.Attempt)
		f.Close()
	}
	sig := make(chan os.Signal, 1)
	if t.Params["mode"].String() == "hang" {
		// Before the heartbeat, which tests take as "ready for SIGTERM".
		signal.Notify(sig, syscall.SIGTERM)
	}
	_ = TouchHeartbeat()
	if ms := t.Params["sleep_ms"].Int(); ms > 0 {
		// Streams a "loss" series over the run, worse for higher seeds,
		// for the pruning tests.
		ml, err := OpenMetricLog(t.Dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		for k := range testSteps {
			time.Sleep(time.Duration(ms) * time.Millisecond / testSteps)
			ml.Log("loss", float64(k+1), testLoss(t.Params["seed"].Int(), k+1))
		}
		ml.Close()
	}
	switch t.Params["mode"].String() {
	case "fail":
		fmt.Println("something went wrong")
		return 3
	case "oom":
		if t.Params["batch_size"].Int() > 32 {
			fmt.Println("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB")
			return 1
		}
	case "nan":
		fmt.Println("epoch 3 loss nan")
		return 1
	case "corrupt":
		os.WriteFile(filepath.Join(t.Dir, ResultFile), []byte(`{"run_id": "x", "metr`), 0o644)
		return 0
	case "noresult":
		return 0
	case "hang":
		<-sig
		fmt.Println("got SIGTERM")
		return 143
	}
	x := float64(t.Params["seed"].Int() + 1)
	res := &Result{RunID: t.RunID, Attempt: t.Attempt,
		Metrics: map[string]float64{"best": x, "bs": float64(t.Params["batch_size"].Int())},
		Curves:  map[string][]float64{"epoch": {1, 2, 3}, "loss": {x, x / 2, x / 3}},
	}
	if err := WriteResult(t.Dir, res); err != nil {
		fmt.Println(err)
		return 1
	}
	return 0
}

// testController runs a controller over SWEEP_TEST_LEDGER with the backend
// named by SWEEP_TEST_BACKEND until the sweep ends or SIGINT/SIGTERM.
func testController() int {
	path := os.Getenv("SWEEP_TEST_LEDGER")
	work := os.Getenv("SWEEP_TEST_WORK")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	l, err := OpenLedger(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer l.Close()
	c := &Controller{Ledger: l, WorkDir: work, Parallel: 4, PollInterval: 20 * time.Millisecond}
	worker := []string{"env", roleEnv + "=worker", os.Args[0]}
	switch os.Getenv("SWEEP_TEST_BACKEND") {
	case "slurm":
		c.Backend = SlurmBackend(SlurmOptions{Command: worker, Dir: filepath.Join(work, "slurm"), Name: "crashtest", MaxParallel: 4})
		c.Parallel = 1000
		c.PollInterval = 200 * time.Millisecond
	case "func":
		c.Backend = &Local{Func: testFunc}
	default:
		c.Backend = &Local{Command: worker, StateDir: filepath.Join(work, "launch")}
	}
	if os.Getenv("SWEEP_TEST_PRUNE") != "" {
		c.Pruner = MedianRule{Series: "loss", Warmup: 2, Startup: 3}
	}
	if _, err := c.Run(ctx); err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return 0
		}
		fmt.Fprintln(os.Stderr, "controller:", err)
		return 1
	}
	return 0
}

// testSteps is how many values of "loss" the test workers stream.
const testSteps = 5

// testLoss is a test worker's loss at step k: seed+1 over k.
func testLoss(seed int64, k int) float64 { return float64(seed+1) / float64(k) }

// testFunc is the in-process worker of the kill loop: what testWorker does
// for "ok" runs (start recorded, sleep, result), honouring ctx.
func testFunc(ctx context.Context, t Task) (*Result, error) {
	if p := os.Getenv(startsEnv); p != "" {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(f, "%s %d\n", t.RunID, t.Attempt)
		f.Close()
	}
	ml, err := OpenMetricLog(t.Dir)
	if err != nil {
		return nil, err
	}
	defer ml.Close()
	ms := t.Params["sleep_ms"].Int()
	for k := range testSteps {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(ms) * time.Millisecond / testSteps):
		}
		ml.Log("loss", float64(k+1), testLoss(t.Params["seed"].Int(), k+1))
	}
	x := float64(t.Params["seed"].Int() + 1)
	return &Result{Metrics: map[string]float64{"best": x}}, nil
}

// workerCommand returns the argv and environment that make this test binary
// a worker.
func workerCommand(t *testing.T) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{"env", roleEnv + "=worker", exe}
}

// workerCommandCounting is workerCommand with each start recorded in the
// returned file (see startsEnv).
func workerCommandCounting(t *testing.T) (argv []string, starts string) {
	t.Helper()
	starts = filepath.Join(t.TempDir(), "starts")
	cmd := workerCommand(t)
	return append([]string{cmd[0], startsEnv + "=" + starts}, cmd[1:]...), starts
}

// readStarts returns how many times each "<run id> <attempt>" started.
func readStarts(t *testing.T, path string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, ln := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if ln != "" {
			out[ln]++
		}
	}
	return out
}

// gridSpec returns a spec of n runs (seeds) with the given base parameters.
func gridSpec(name string, n int, base map[string]Value) *Spec {
	vals := make([]Value, n)
	for i := range vals {
		vals[i] = intValue(int64(i))
	}
	return &Spec{Name: name, Base: base, Axes: []Axis{{Key: "seed", Short: "s", Values: vals}}}
}

func mustEnqueue(t testing.TB, l *Ledger, s *Spec) []Point {
	t.Helper()
	pts, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Enqueue(context.Background(), s, slices.Values(pts)); err != nil {
		t.Fatal(err)
	}
	return pts
}

// checkExactlyOnce asserts every run completed exactly once (or was
// pruned, with pruneOK) with a valid result file whose metrics are finite.
func checkExactlyOnce(t *testing.T, l *Ledger, work string, want int, pruneOK bool) {
	t.Helper()
	rs, err := l.Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != want {
		t.Fatalf("%d runs in ledger, want %d", len(rs), want)
	}
	for _, r := range rs {
		if pruneOK && r.State == Pruned {
			if r.Completions != 0 || !strings.HasPrefix(r.ErrorText, "median rule") {
				t.Errorf("pruned run %s: completions %d, reason %q", r.Slug, r.Completions, r.ErrorText)
			}
			continue
		}
		if r.State != Completed || r.Completions != 1 {
			t.Errorf("run %s: state %s, completions %d; want completed exactly once (%s %s)", r.Slug, r.State, r.Completions, r.ErrorClass, r.ErrorText)
			continue
		}
		res, err := ReadResult(AttemptDir(work, r.ID, r.Attempt))
		if err != nil {
			t.Errorf("run %s: %v", r.Slug, err)
			continue
		}
		if res.RunID != r.ID || math.IsNaN(res.Metrics["best"]) {
			t.Errorf("run %s: result %+v", r.Slug, res)
		}
	}
	// The attempt that produced each result left no half-written file.
	// (Attempts that were stopped, and the in-process workers of a killed
	// controller, may leave one behind, which nothing reads.)
	for _, r := range rs {
		if r.State != Completed {
			continue
		}
		ents, _ := os.ReadDir(AttemptDir(work, r.ID, r.Attempt))
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "."+ResultFile+".tmp") {
				t.Errorf("run %s: temporary result file left by the attempt that completed: %s", r.Slug, e.Name())
			}
		}
	}
}

// killLoop runs a sweep of n runs under controller processes that are
// stopped at seeded random moments, iters times: by SIGKILL, SIGINT or
// SIGTERM, after a delay drawn from [0, maxDelay). A last controller
// finishes the sweep. Then every run must have completed exactly once,
// every worker start must belong to an attempt the ledger records, no
// attempt may have started twice, no retry budget may have been spent
// (only the in-process backend may record interrupted attempts, which cost
// none) and no worker may be left running.
func killLoop(t *testing.T, backend string, batch, iters int, maxDelay, timeout time.Duration) {
	killLoopPrune(t, backend, false, batch, iters, maxDelay, timeout)
}

// killLoopPrune is killLoop, with the median rule on when prune is set: a
// run then ends completed or pruned, once.
func killLoopPrune(t *testing.T, backend string, prune bool, batch, iters int, maxDelay, timeout time.Duration) {
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ledger.db")
	work := filepath.Join(dir, "work")
	starts := filepath.Join(dir, "starts")
	// Between two controllers, a new batch of runs is enqueued whenever the
	// last one has finished, so that every iteration has work to kill.
	n, batches := 0, 0
	refill := func() {
		l, err := OpenLedger(ledger)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		st, err := l.Status(context.Background(), 1)
		if err != nil {
			t.Fatal(err)
		}
		if st.Counts[Queued]+st.Counts[Running] == 0 {
			batches++
			mustEnqueue(t, l, gridSpec("kill", batch, map[string]Value{"sleep_ms": intValue(150), "batch": intValue(int64(batches))}))
			n += batch
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	start := func() *exec.Cmd {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), roleEnv+"=controller", "SWEEP_TEST_LEDGER="+ledger, "SWEEP_TEST_WORK="+work,
			"SWEEP_TEST_BACKEND="+backend, startsEnv+"="+starts)
		if prune {
			cmd.Env = append(cmd.Env, "SWEEP_TEST_PRUNE=1")
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if s := stderr.String(); strings.Contains(s, "controller:") || strings.Contains(s, "panic") {
				t.Logf("controller stderr:\n%s", s)
			}
		})
		return cmd
	}
	rng := rand.New(rand.NewPCG(15, uint64(len(backend))))
	sigs := []os.Signal{syscall.SIGKILL, syscall.SIGINT, syscall.SIGTERM}
	deadline := time.Now().Add(timeout)
	kills := map[os.Signal]int{}
	// Iterations go on until iters signals have hit a live controller (one
	// that finishes its batch first does not count).
	sent := 0
	for i := 0; sent < iters; i++ {
		if time.Now().After(deadline) || i > 4*iters {
			t.Fatalf("iteration %d: out of time", i)
		}
		refill()
		cmd := start()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		sig := sigs[rng.IntN(len(sigs))]
		timer := time.NewTimer(time.Duration(rng.Int64N(int64(maxDelay))))
		select {
		case err := <-done:
			timer.Stop()
			// The sweep finished before the signal.
			if err != nil {
				t.Fatalf("iteration %d: controller failed: %v", i, err)
			}
			continue
		case <-timer.C:
		}
		if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Fatal(err)
		}
		kills[sig]++
		sent++
		err := <-done
		var ee *exec.ExitError
		if sig != syscall.SIGKILL && err != nil && !(errors.As(err, &ee) && ee.ProcessState.Sys().(syscall.WaitStatus).Signaled()) {
			t.Fatalf("iteration %d: controller stopped by %v: %v", i, sig, err)
		}
	}
	t.Logf("%s: %d controllers stopped (%v), %d batches of %d runs", backend, sent, kills, batches, batch)
	cmd := start()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("final controller: %v", err)
		}
	case <-time.After(time.Until(deadline)):
		cmd.Process.Kill()
		t.Fatal("final controller did not finish")
	}
	l, err := OpenLedger(ledger)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	checkExactlyOnce(t, l, work, n, prune)
	ctx := context.Background()
	if st, err := l.Status(ctx, 1); err == nil {
		t.Logf("%s: runs by state at the end: %v", backend, st.Counts)
	}
	rs, _ := l.Runs(ctx)
	ran := map[string]bool{}
	for _, r := range rs {
		atts, err := l.Attempts(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range atts {
			key := fmt.Sprintf("%s %d", r.ID, a.Attempt)
			switch {
			case a.State == Completed, a.State == Pruned:
				ran[key] = true
			case a.State == Failed && a.ErrorClass == ClassInterrupted && backend == "func":
			default:
				t.Errorf("run %s attempt %d: %s %s %q: the controller's deaths spent retry budget", r.Slug, a.Attempt, a.State, a.ErrorClass, a.ErrorText)
			}
		}
	}
	started := readStarts(t, starts)
	for k, c := range started {
		if c > 1 {
			t.Errorf("attempt %s started %d times", k, c)
		}
	}
	for k := range ran {
		if started[k] != 1 {
			t.Errorf("completed attempt %s started %d times, want 1", k, started[k])
		}
	}
	if backend != "func" {
		// Out-of-process workers survive their controller: every start is
		// an attempt that went on to complete.
		for k := range started {
			if !ran[k] {
				t.Errorf("attempt %s started but the ledger has no completed attempt of it", k)
			}
		}
	}
	switch backend {
	case "process":
		lc := &launch.Local{StateDir: filepath.Join(work, "launch")}
		ents, _ := os.ReadDir(lc.StateDir)
		for _, e := range ents {
			name, ok := strings.CutSuffix(e.Name(), ".launch")
			if !ok {
				continue
			}
			if st, _ := lc.Attach(name).Poll(); st == launch.Running {
				t.Errorf("worker %s still running after the sweep", name)
			}
		}
	case "slurm":
		out, err := exec.Command("squeue", "-h", "-n", "", "-o", "%j %T").Output()
		if err == nil {
			for _, ln := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if strings.HasPrefix(ln, "crashtest-") && !strings.Contains(ln, "COMPLET") && !strings.Contains(ln, "CANCEL") {
					t.Errorf("Slurm job left: %s", ln)
				}
			}
		}
	}
}
