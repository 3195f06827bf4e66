package sweep

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/internal/testenv"
)

// needSlurm skips unless CROSSCLUSTER_SLURM=1, and then fails unless a
// Slurm cluster answers (.ci/slurm-up.sh starts one).
func needSlurm(t *testing.T) {
	t.Helper()
	if os.Getenv("CROSSCLUSTER_SLURM") != "1" {
		testenv.Skip(t, "Slurm tests need CROSSCLUSTER_SLURM=1 and a cluster (.ci/slurm-up.sh starts one)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "sinfo", "-h", "-o", "%t").Output()
	if err != nil || !strings.ContainsAny(string(out), "ia") {
		t.Fatalf("CROSSCLUSTER_SLURM=1 but no Slurm cluster answers (sinfo: %v %q); start one with .ci/slurm-up.sh", err, strings.TrimSpace(string(out)))
	}
}

// slurmTimeout bounds a Slurm test; scheduling on the one-node cluster adds
// about a second per array task wave, and the Slurm tests run in parallel
// (CI lets all of them run at once), so a test's jobs may queue behind the
// kill loops' and the time-limit test's on the node's two CPUs.
const slurmTimeout = 5 * time.Minute

// SlurmOptions are the settings of a Slurm test's backend.
type SlurmOptions struct {
	Command     []string
	Dir, Name   string
	MaxParallel int
}

// SlurmBackend makes the backend of the Slurm tests from its options.
// Package sweep cannot import sweep/slurm, which imports it, so
// slurmhook_test.go (package sweep_test) sets it.
var SlurmBackend func(o SlurmOptions) Backend

// slurmController returns a controller over l running on Slurm with o, its
// Slurm directory <work>/<dir...> (<work>/slurm by default), and work.
func slurmController(t *testing.T, l *Ledger, o SlurmOptions, dir ...string) (*Controller, string) {
	work := t.TempDir()
	// Slurm runs jobs as root with its own working directory; the test's
	// temporary directory is on the same host, so paths are shared.
	if len(dir) == 0 {
		dir = []string{"slurm"}
	}
	o.Dir = filepath.Join(append([]string{work}, dir...)...)
	return &Controller{Ledger: l, Backend: SlurmBackend(o), WorkDir: work, Parallel: 1000, PollInterval: 100 * time.Millisecond}, work
}

func TestSlurmArray(t *testing.T) {
	needSlurm(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), slurmTimeout)
	defer cancel()
	l, _ := openTemp(t)
	cmd := workerCommand(t)
	spec := &Spec{Name: "sa", Axes: []Axis{
		{Key: "mode", Values: []Value{strValue("ok"), strValue("fail"), strValue("corrupt")}},
		{Key: "seed", Short: "s", Values: []Value{intValue(0), intValue(1)}},
	}}
	mustEnqueue(t, l, spec)
	c, work := slurmController(t, l, SlurmOptions{Command: cmd, Name: "t-array", MaxParallel: 2})
	// A failing task is tried twice: each attempt keeps its own Slurm
	// output (issue 15 item 7).
	c.Retry = map[Class]int{ClassUnknown: 1}
	sum, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Completed != 2 || sum.Failed != 4 || sum.Retried != 2 {
		t.Errorf("summary %+v, want 2 completed, 4 failed and 2 retried", sum)
	}
	rs, _ := l.Runs(ctx)
	for _, r := range rs {
		switch r.Config["mode"].String() {
		case "ok":
			if r.State != Completed || !strings.Contains(r.BackendID, "_") {
				t.Errorf("ok run: %s %q", r.State, r.BackendID)
			}
		case "fail":
			if r.State != Failed || r.Attempt != 2 || !strings.Contains(r.ErrorText, "exit 3 (FAILED)") || !strings.Contains(r.ErrorText, "something went wrong") {
				t.Errorf("failing task: %s attempt %d %q", r.State, r.Attempt, r.ErrorText)
			}
			targets := map[string]bool{}
			for a := 1; a <= 2; a++ {
				link := filepath.Join(AttemptDir(work, r.ID, a), "slurm.out")
				target, err := os.Readlink(link)
				// The worker's own output goes to the attempt's log; Slurm's
				// file holds what Slurm itself says (time limit, node
				// failure), here nothing, but it exists.
				if _, rerr := os.Stat(link); err != nil || rerr != nil {
					t.Errorf("attempt %d: Slurm's output %s -> %s: %v %v", a, link, target, err, rerr)
				}
				targets[target] = true
			}
			if len(targets) != 2 {
				t.Errorf("both attempts link to one Slurm output: %v", targets)
			}
		case "corrupt":
			if r.State != Failed || r.ErrorClass != ClassCorrupt {
				t.Errorf("corrupt task: %s %s %q", r.State, r.ErrorClass, r.ErrorText)
			}
		}
	}
	// The batch script really was an array over a run list: the first
	// batch holds the six runs, the retries come in batches of their own.
	lists, _ := filepath.Glob(filepath.Join(work, "slurm", "*.list"))
	six := 0
	for _, l := range lists {
		if b, _ := os.ReadFile(l); strings.Count(string(b), "\n") == 6 {
			six++
		}
	}
	if six != 1 || len(lists) < 2 {
		t.Errorf("%d run lists, %d of six runs; want one batch of six and the retries", len(lists), six)
	}
}

func TestSlurmCancel(t *testing.T) {
	needSlurm(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), slurmTimeout)
	defer cancel()
	l, _ := openTemp(t)
	cmd := workerCommand(t)
	mustEnqueue(t, l, gridSpec("sc", 3, map[string]Value{"mode": strValue("hang")}))
	c, _ := slurmController(t, l, SlurmOptions{Command: cmd, Name: "t-cancel", MaxParallel: 1})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := c.Run(runCtx); done <- err }()
	waitFor(t, func() bool {
		rs, _ := l.Runs(ctx, Running)
		for _, r := range rs {
			if r.BackendID != "" && !heartbeatOf(AttemptDir(c.WorkDir, r.ID, r.Attempt)).IsZero() {
				return true
			}
		}
		return false
	})
	stop()
	<-done
	if err := c.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	st, _ := l.Status(ctx, 1)
	if st.Counts[Cancelled] != 3 {
		t.Fatalf("counts %v, want 3 cancelled", st.Counts)
	}
	// Slurm agrees: every array task ends CANCELLED.
	rs, _ := l.Runs(ctx)
	tasks := make([]Task, len(rs))
	for i := range rs {
		tasks[i] = Task{RunID: rs[i].ID, BackendID: rs[i].BackendID, Dir: AttemptDir(c.WorkDir, rs[i].ID, rs[i].Attempt)}
	}
	waitFor(t, func() bool {
		sts, err := c.Backend.Poll(ctx, tasks)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sts {
			if s.State != Failed || !strings.HasPrefix(s.SchedState, "CANCELLED") {
				return false
			}
		}
		return true
	})
}

func TestSlurmTimeLimit(t *testing.T) {
	needSlurm(t)
	if os.Getenv("CROSSCLUSTER_SLURM_SLOW") == "" {
		t.Skip("Slurm enforces time limits in whole minutes (about 90 s here); set CROSSCLUSTER_SLURM_SLOW=1 to run")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	l, _ := openTemp(t)
	cmd := workerCommand(t)
	spec := gridSpec("st", 1, map[string]Value{"mode": strValue("ok"), "sleep_ms": intValue(600_000)})
	spec.Resources = Resources{Time: 5 * time.Second, Partition: "short"}
	mustEnqueue(t, l, spec)
	c, _ := slurmController(t, l, SlurmOptions{Command: cmd, Name: "t-timeout"})
	c.Retry = map[Class]int{ClassTimeout: 0}
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	rs, _ := l.Runs(ctx)
	if rs[0].State != Failed || rs[0].ErrorClass != ClassTimeout || !strings.Contains(rs[0].ErrorText, "TIMEOUT") {
		t.Errorf("timed-out task: %s %s %q", rs[0].State, rs[0].ErrorClass, rs[0].ErrorText)
	}
}

func TestKillLoopSlurm(t *testing.T) {
	needSlurm(t)
	t.Parallel()
	killLoop(t, "slurm", 8, killIters(), 2*time.Second, 10*time.Minute)
}

// TestSlurmResources: each variant's resources reach Slurm (one array per
// run of tasks asking for the same), and Slurm's own output is kept per
// attempt.
func TestSlurmResources(t *testing.T) {
	needSlurm(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), slurmTimeout)
	defer cancel()
	l, _ := openTemp(t)
	spec, err := LoadSpec(strings.NewReader(`
name: res
base: {mode: ok}
resources: {cpus: 1, memory: 64M, time: 10m}
grid: [{key: seed, short: s, values: [0, 1]}]
variants:
  - {name: small}
  - {name: big, resources: {cpus: 2, memory: 128M, time: "0:20:00", partition: debug}}
`))
	if err != nil {
		t.Fatal(err)
	}
	mustEnqueue(t, l, spec)
	c, work := slurmController(t, l, SlurmOptions{Command: workerCommand(t), Name: "t-res"})
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	rs, _ := l.Runs(ctx)
	arrays := map[string]bool{}
	for _, r := range rs {
		if r.State != Completed {
			t.Fatalf("run %s: %s %s", r.Slug, r.State, r.ErrorText)
		}
		job, _, _ := strings.Cut(r.BackendID, "_")
		arrays[job] = true
		out, err := exec.Command("squeue", "-h", "-r", "--states=all", "-j", r.BackendID, "-o", "%C %m %l %P").Output()
		if err != nil {
			t.Fatal(err)
		}
		want := "1 64M 10:00 debug"
		if r.Variant == "big" {
			want = "2 128M 20:00 debug"
		}
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("run %s: squeue says %q, want %q", r.Slug, got, want)
		}
		dir := AttemptDir(work, r.ID, r.Attempt)
		if _, err := os.Stat(filepath.Join(dir, "slurm.out")); err != nil {
			t.Errorf("run %s: Slurm's output not kept: %v", r.Slug, err)
		}
	}
	if len(arrays) != 2 {
		t.Errorf("%d job arrays, want 2 (one per resource set)", len(arrays))
	}
}

func TestKillLoopSlurmPrune(t *testing.T) {
	needSlurm(t)
	t.Parallel()
	killLoopPrune(t, "slurm", true, 8, killIters(), 2*time.Second, 10*time.Minute)
}

// TestSlurmOddDir: a Slurm directory whose name holds '%' (with one of
// sbatch's filename patterns after it) and a space still gets each task's
// Slurm output where the attempt's slurm.out link points; one holding a
// backslash, which sbatch's --output reads as an escape, is refused before
// anything is submitted.
func TestSlurmOddDir(t *testing.T) {
	needSlurm(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), slurmTimeout)
	defer cancel()
	l, _ := openTemp(t)
	mustEnqueue(t, l, gridSpec("sod", 2, map[string]Value{"mode": strValue("ok")}))
	c, work := slurmController(t, l, SlurmOptions{Command: workerCommand(t), Name: "t-odd"}, "100%a done", "slurm")
	sdir := filepath.Join(work, "100%a done", "slurm")
	sum, err := c.Run(ctx)
	if err != nil || sum.Completed != 2 {
		t.Fatalf("summary %+v, err %v; want 2 completed", sum, err)
	}
	rs, _ := l.Runs(ctx)
	for _, r := range rs {
		link := filepath.Join(AttemptDir(work, r.ID, r.Attempt), "slurm.out")
		target, _ := os.Readlink(link)
		if _, err := os.Stat(link); err != nil || !strings.HasPrefix(target, sdir+string(filepath.Separator)) {
			t.Errorf("run %s: Slurm's output %s -> %s: %v", r.ID, link, target, err)
		}
	}

	l2, _ := openTemp(t)
	mustEnqueue(t, l2, gridSpec("sob", 1, map[string]Value{"mode": strValue("ok")}))
	c2, _ := slurmController(t, l2, SlurmOptions{Command: workerCommand(t), Name: "t-odd"}, `back\slash`)
	c2.Retry = nil
	if _, err := c2.Run(ctx); err == nil || !strings.Contains(err.Error(), "backslash") {
		rs, _ := l2.Runs(ctx)
		t.Errorf("backslash in the Slurm directory: err %v, runs %+v", err, rs)
	}
}
