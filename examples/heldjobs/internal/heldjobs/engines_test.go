// The kill test finds worker processes through /proc.

//go:build linux

package heldjobs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/internal/testenv"
	"github.com/crosscluster/crosscluster/sweep"
	"github.com/crosscluster/crosscluster/sweep/slurm"
)

// needSlurm skips unless CROSSCLUSTER_SLURM=1, and then fails unless a
// cluster answers.
func needSlurm(t *testing.T) {
	t.Helper()
	if os.Getenv("CROSSCLUSTER_SLURM") != "1" {
		testenv.Skip(t, "Slurm tests need CROSSCLUSTER_SLURM=1 and a cluster (.ci/slurm-up.sh starts one)")
	}
	if out, err := exec.Command("sinfo", "-h").CombinedOutput(); err != nil {
		t.Fatalf("CROSSCLUSTER_SLURM=1 but no Slurm cluster answers (sinfo: %v %q)", err, strings.TrimSpace(string(out)))
	}
}

// killFirstWorker waits (polling, with a deadline) until the worker of the
// first attempt of some run of the search under out has logged an epoch,
// then kills that worker process with SIGKILL, as an out-of-memory killer
// or a node's reboot would, and returns the run's id.
func killFirstWorker(t *testing.T, out string, done <-chan struct{}) (string, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return "", fmt.Errorf("the search ended before a worker could be killed")
		default:
		}
		ms, _ := filepath.Glob(filepath.Join(out, WorkDir, "runs", "*", "a1", sweep.MetricFile))
		for _, m := range ms {
			if fi, err := os.Stat(m); err != nil || fi.Size() == 0 {
				continue
			}
			id := filepath.Base(filepath.Dir(filepath.Dir(m)))
			if pid := workerPid(id, 1); pid > 0 {
				if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
					return "", err
				}
				return id, nil
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return "", fmt.Errorf("no worker logged an epoch within the deadline")
}

// workerPid finds the "node train" process of a run's attempt among this
// user's processes, by its sweep environment.
func workerPid(id string, attempt int) int {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		cmd, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil || !bytes.Contains(cmd, []byte("node\x00train\x00")) {
			continue
		}
		env, err := os.ReadFile(filepath.Join(p, "environ"))
		if err != nil {
			continue
		}
		vars := bytes.Split(env, []byte{0})
		hasID, hasAttempt := false, false
		for _, v := range vars {
			hasID = hasID || string(v) == sweep.EnvRunID+"="+id
			hasAttempt = hasAttempt || string(v) == sweep.EnvAttempt+"="+strconv.Itoa(attempt)
		}
		if hasID && hasAttempt {
			pid, _ := strconv.Atoi(filepath.Base(p))
			return pid
		}
	}
	return 0
}

// slowSpec is smallSpec with many more epochs, so that a worker can be
// killed while it trains.
var slowSpec = strings.NewReplacer("epochs: 3", "epochs: 120", "patience: 2", "patience: 120").Replace(smallSpec)

// runKilled runs slowSpec on a backend whose workers are processes, kills
// the first worker that logs an epoch, and checks that its run was retried
// and completed on attempt 2 with the same result as in this process, the
// other runs on attempt 1; then that a rerun resumes without training.
func runKilled(t *testing.T, engine string, backend func(out string) sweep.Backend, parallel int) {
	out := t.TempDir()
	spec := loadSpec(t, slowSpec)
	s := &Search{Spec: spec, Out: out, Backend: backend(out), Parallel: parallel, PollInterval: 50 * time.Millisecond}
	done := make(chan struct{})
	type result struct {
		oc  *Outcome
		err error
	}
	res := make(chan result, 1)
	go func() {
		oc, err := s.Run(context.Background())
		close(done)
		res <- result{oc, err}
	}()
	killed, kerr := killFirstWorker(t, out, done)
	r := <-res
	if kerr != nil {
		t.Fatal(kerr)
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	for _, run := range r.oc.Runs {
		want := 1
		if run.ID == killed {
			want = 2
		}
		if run.State != sweep.Completed || run.Attempt != want {
			t.Errorf("%s: run %s %s on attempt %d, want completed on attempt %d", engine, run.Slug, run.State, run.Attempt, want)
		}
	}
	l, err := sweep.OpenLedgerReadOnly(filepath.Join(out, LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	atts, err := l.Attempts(context.Background(), killed)
	l.Close()
	if err != nil || len(atts) != 2 || atts[0].State != sweep.Failed {
		t.Errorf("%s: attempts of the killed run: %+v, %v", engine, atts, err)
	}
	// The same models as in this process (the retried run too).
	local := &Search{Spec: spec, Out: t.TempDir(), Parallel: 2}
	local.Backend = &sweep.Local{Func: Worker(filepath.Join(local.Out, DatasetDir), nil)}
	want, err := local.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sameRuns(t, engine, r.oc.Runs, want)
	// A rerun resumes: nothing is submitted.
	again, err := (&Search{Spec: spec, Out: out, Backend: backend(out), Parallel: parallel, PollInterval: 50 * time.Millisecond}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if again.Sweep.Completed+again.Sweep.Failed+again.Sweep.Retried != 0 || again.Runs[again.Best].ID != want.Runs[want.Best].ID {
		t.Errorf("%s rerun: %+v, best %s", engine, again.Sweep, again.Runs[again.Best].Slug)
	}
}

// TestProcessKilledRetried runs the search as worker processes (this test
// binary, "node train") and kills one while it trains.
func TestProcessKilledRetried(t *testing.T) {
	if testing.Short() {
		t.Skip("trains four runs of 120 epochs in worker processes")
	}
	runKilled(t, "process", func(out string) sweep.Backend {
		return &sweep.Local{Command: []string{os.Args[0], "node", "train", "-data", filepath.Join(out, DatasetDir)}, StateDir: filepath.Join(out, "launch")}
	}, 2)
}

// TestSlurmKilledRetried runs the same search, unchanged, on the Slurm
// cluster as job arrays, kills one task's worker while it trains, and
// checks the retry and the results as above.
func TestSlurmKilledRetried(t *testing.T) {
	needSlurm(t)
	runKilled(t, "slurm", func(out string) sweep.Backend {
		return &slurm.Backend{Command: []string{os.Args[0], "node", "train", "-data", filepath.Join(out, DatasetDir)},
			Dir: filepath.Join(out, "slurm"), Name: "heldjobs-test", MaxParallel: 2}
	}, 4)
}
