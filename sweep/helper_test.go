package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
		time.Sleep(time.Duration(ms) * time.Millisecond)
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
// named by SWEEP_TEST_BACKEND until the sweep ends.
func testController() int {
	path := os.Getenv("SWEEP_TEST_LEDGER")
	work := os.Getenv("SWEEP_TEST_WORK")
	l, err := OpenLedger(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer l.Close()
	c := &Controller{Ledger: l, WorkDir: work, Parallel: 4, PollInterval: 20 * time.Millisecond}
	switch os.Getenv("SWEEP_TEST_BACKEND") {
	case "slurm":
		c.Backend = &Slurm{Command: []string{"env", roleEnv + "=worker", os.Args[0]}, Dir: filepath.Join(work, "slurm"), Name: "crashtest", MaxParallel: 2}
		c.Parallel = 1000
		c.PollInterval = 200 * time.Millisecond
	default:
		c.Backend = &Local{Command: []string{"env", roleEnv + "=worker", os.Args[0]}, StateDir: filepath.Join(work, "launch")}
	}
	if _, err := c.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
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
		vals[i] = IntValue(int64(i))
	}
	return &Spec{Name: name, Base: base, Axes: []Axis{{Key: "seed", Short: "s", Values: vals}}}
}

func mustEnqueue(t testing.TB, l *Ledger, s *Spec) []Point {
	t.Helper()
	pts, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Enqueue(context.Background(), s, pts); err != nil {
		t.Fatal(err)
	}
	return pts
}

// checkExactlyOnce asserts every run completed exactly once with a valid
// result file whose metrics are finite, and that no temporary result files
// remain.
func checkExactlyOnce(t *testing.T, l *Ledger, work string, want int) {
	t.Helper()
	rs, err := l.Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != want {
		t.Fatalf("%d runs in ledger, want %d", len(rs), want)
	}
	for _, r := range rs {
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
	err = filepath.WalkDir(filepath.Join(work, "runs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "."+ResultFile+".tmp") {
			// Workers are never killed here, so no result may be left
			// half-written. (A killed controller may leave a temporary
			// config file, which the next attempt rewrites.)
			t.Errorf("temporary result file left: %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// crashController starts controller processes over one ledger, SIGKILLs
// the first two when the number of completed runs passes the given marks,
// and lets the third finish.
func crashController(t *testing.T, backend string, n int, marks []int, timeout time.Duration) {
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ledger.db")
	work := filepath.Join(dir, "work")
	l, err := OpenLedger(ledger)
	if err != nil {
		t.Fatal(err)
	}
	mustEnqueue(t, l, gridSpec("crash", n, map[string]Value{"sleep_ms": IntValue(150)}))
	l.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	start := func() *exec.Cmd {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), roleEnv+"=controller", "SWEEP_TEST_LEDGER="+ledger, "SWEEP_TEST_WORK="+work, "SWEEP_TEST_BACKEND="+backend)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	deadline := time.Now().Add(timeout)
	for _, mark := range marks {
		cmd := start()
		ro, err := OpenLedgerReadOnly(ledger)
		if err != nil {
			t.Fatal(err)
		}
		for {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("no progress to %d completed runs", mark)
			}
			st, err := ro.Status(context.Background(), 1)
			if err == nil && st.Counts[Completed] >= mark {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		ro.Close()
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		werr := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(werr, &ee) {
			t.Fatalf("controller ended before SIGKILL: %v", werr)
		}
	}
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
	l, err = OpenLedger(ledger)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	checkExactlyOnce(t, l, work, n)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runInDir runs argv in dir with env added to an environment free of
// sweep worker variables, and fails the test if it fails.
func runInDir(t *testing.T, dir string, argv []string, env map[string]string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SWEEP_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v: %s", argv, err, out)
	}
}
